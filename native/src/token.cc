#include "token.h"

#include <sddl.h>

#include <cstddef>
#include <memory>

namespace httpsys {

namespace {

// HTTP_REQUEST_INFO_TYPE (http.h): the entry that holds an HTTP_REQUEST_AUTH_INFO
constexpr int kRequestInfoTypeAuth = 0;  // HttpRequestInfoTypeAuth

// The fields read here sit where the SDK puts them (x64): newer SDKs append
// PackageNameLength and pPackageName, which are not read.
static_assert(offsetof(HTTP_REQUEST_AUTH_INFO, AuthStatus) == 0, "HTTP_REQUEST_AUTH_INFO.AuthStatus");
static_assert(offsetof(HTTP_REQUEST_AUTH_INFO, SecStatus) == 4, "HTTP_REQUEST_AUTH_INFO.SecStatus");
static_assert(offsetof(HTTP_REQUEST_AUTH_INFO, Flags) == 8, "HTTP_REQUEST_AUTH_INFO.Flags");
static_assert(offsetof(HTTP_REQUEST_AUTH_INFO, AuthType) == 12, "HTTP_REQUEST_AUTH_INFO.AuthType");
static_assert(offsetof(HTTP_REQUEST_AUTH_INFO, AccessToken) == 16, "HTTP_REQUEST_AUTH_INFO.AccessToken");

const char* StatusName(int status) {
  switch (status) {
    case 0: return "success";
    case 1: return "notAuthenticated";
    case 2: return "failure";
    default: return "unknown";
  }
}

// HTTP_REQUEST_AUTH_TYPE, named as the WWW-Authenticate token
const char* SchemeName(int type) {
  switch (type) {
    case 1: return "Basic";
    case 2: return "Digest";
    case 3: return "NTLM";
    case 4: return "Negotiate";
    case 5: return "Kerberos";
    default: return nullptr;
  }
}

Napi::Object Result(Napi::Env env, DWORD code) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("code", Napi::Number::New(env, code));
  return out;
}

bool SidText(PSID sid, std::string* out) {
  LPWSTR text = nullptr;
  if (!ConvertSidToStringSidW(sid, &text)) return false;
  *out = Narrow(text);
  LocalFree(text);
  return true;
}

// GetTokenInformation's answer in a buffer of the size it asks for; nullptr with
// *error set when it fails.
std::unique_ptr<unsigned char[]> TokenInfo(HANDLE token, TOKEN_INFORMATION_CLASS what, DWORD* error) {
  DWORD size = 0;
  GetTokenInformation(token, what, nullptr, 0, &size);
  DWORD rc = GetLastError();
  if (size == 0) {
    *error = rc == NO_ERROR ? ERROR_INVALID_PARAMETER : rc;
    return nullptr;
  }
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[size]);
  if (!GetTokenInformation(token, what, buffer.get(), size, &size)) {
    *error = GetLastError();
    return nullptr;
  }
  *error = NO_ERROR;
  return buffer;
}

}  // namespace

void OwnedToken::Reset() {
  if (handle_ != nullptr) {
    CloseHandle(handle_);
    handle_ = nullptr;
  }
}

void TakeAuthInfo(HTTP_REQUEST* request, size_t length, AuthExtras* out) {
  // HTTP.SYS puts the info array and what it points to in the receive buffer: anything
  // outside it is not a request info (a receiver that wrote no V2 fields), never read
  const char* begin = reinterpret_cast<const char*>(request);
  const char* end = begin + length;
  auto inside = [&](const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    return c >= begin && c <= end && n <= static_cast<size_t>(end - c);
  };
  if (request->RequestInfoCount == 0 ||
      !inside(request->pRequestInfo, sizeof(HTTP_REQUEST_INFO) * request->RequestInfoCount)) {
    return;
  }
  for (USHORT i = 0; i < request->RequestInfoCount; ++i) {
    HTTP_REQUEST_INFO& info = request->pRequestInfo[i];
    if (static_cast<int>(info.InfoType) != kRequestInfoTypeAuth || info.pInfo == nullptr ||
        info.InfoLength < sizeof(HTTP_REQUEST_AUTH_INFO) || !inside(info.pInfo, sizeof(HTTP_REQUEST_AUTH_INFO))) {
      continue;
    }
    auto* auth = static_cast<HTTP_REQUEST_AUTH_INFO*>(info.pInfo);
    out->present = true;
    out->status = static_cast<int>(auth->AuthStatus);
    out->type = static_cast<int>(auth->AuthType);
    out->secStatus = auth->SecStatus;
    out->flags = auth->Flags;
    // "applications should disregard members ... except AuthStatus, SecStatus, and
    // AuthType" unless it succeeded; a handle there all the same is still ours to close
    if (auth->AccessToken != nullptr) {
      OwnedToken token(auth->AccessToken);
      auth->AccessToken = nullptr;
      if (out->status == 0) out->token = std::move(token);
    }
  }
}

Napi::Value AuthToJs(Napi::Env env, const AuthExtras& auth, double tokenId) {
  if (!auth.present) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  out.Set("status", StatusName(auth.status));
  const char* scheme = SchemeName(auth.type);
  out.Set("scheme", scheme ? Napi::Value(Napi::String::New(env, scheme)) : env.Null());
  out.Set("secStatus", Napi::Number::New(env, static_cast<double>(static_cast<uint32_t>(auth.secStatus))));
  // HTTP_REQUEST_AUTH_FLAG_TOKEN_FOR_CACHED_CRED: NTLM's keep-alive credential cache
  out.Set("cachedCredentials", Napi::Boolean::New(env, (auth.flags & 0x1) != 0));
  out.Set("token", Napi::Number::New(env, tokenId));
  return out;
}

double TokenTable::Adopt(OwnedToken token) {
  if (!token) return 0;
  double id = ++last_;
  tokens_.emplace(id, std::move(token));
  return id;
}

HANDLE TokenTable::Find(double id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : it->second.get();
}

bool TokenTable::Close(double id) { return tokens_.erase(id) == 1; }

Napi::Value TokenUserJs(Napi::Env env, HANDLE token) {
  if (token == nullptr) return Result(env, ERROR_INVALID_HANDLE);
  DWORD error = NO_ERROR;
  auto buffer = TokenInfo(token, TokenUser, &error);
  if (!buffer) return Result(env, error);
  std::string sid;
  if (!SidText(reinterpret_cast<TOKEN_USER*>(buffer.get())->User.Sid, &sid)) return Result(env, GetLastError());
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("sid", sid);
  return out;
}

Napi::Value TokenGroupsJs(Napi::Env env, HANDLE token) {
  if (token == nullptr) return Result(env, ERROR_INVALID_HANDLE);
  DWORD error = NO_ERROR;
  auto buffer = TokenInfo(token, TokenGroups, &error);
  if (!buffer) return Result(env, error);
  const auto* groups = reinterpret_cast<const TOKEN_GROUPS*>(buffer.get());
  Napi::Array list = Napi::Array::New(env, groups->GroupCount);
  for (DWORD i = 0; i < groups->GroupCount; ++i) {
    std::string sid;
    if (!SidText(groups->Groups[i].Sid, &sid)) return Result(env, GetLastError());
    Napi::Object group = Napi::Object::New(env);
    group.Set("sid", sid);
    group.Set("attributes", Napi::Number::New(env, static_cast<double>(groups->Groups[i].Attributes)));
    list.Set(i, group);
  }
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("groups", list);
  return out;
}

}  // namespace httpsys
