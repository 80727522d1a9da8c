// The access token HTTP.SYS hands an authenticated request
// (HTTP_REQUEST_AUTH_INFO.AccessToken, docs/http-sys.md 8): taken out of the request on
// the IO thread, owned by exactly one object from then on, read as far as JS asks (its
// user and groups as SIDs: names are src/queue/windows-identity.js's to look up) and
// closed when the request ends. "When the token is no longer needed, the application
// must close it by calling CloseHandle" (ns-http-http_request_auth_info).
#pragma once

#include "http-api.h"

#include <napi.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace httpsys {

// A token handle with one owner: closed when it is dropped, so a request that never
// reaches JS (a queue torn down with its batch pending) leaks nothing.
class OwnedToken {
 public:
  OwnedToken() = default;
  explicit OwnedToken(HANDLE handle) : handle_(handle) {}
  OwnedToken(OwnedToken&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  OwnedToken& operator=(OwnedToken&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = other.handle_;
      other.handle_ = nullptr;
    }
    return *this;
  }
  OwnedToken(const OwnedToken&) = delete;
  OwnedToken& operator=(const OwnedToken&) = delete;
  ~OwnedToken() { Reset(); }

  HANDLE get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  void Reset();

 private:
  HANDLE handle_ = nullptr;
};

// What HTTP_REQUEST_AUTH_INFO says of one request. `present` is false where the URL
// group has no authentication property (HTTP.SYS adds the info only where it has).
struct AuthExtras {
  bool present = false;
  int status = 0;       // HTTP_AUTH_STATUS: 0 success, 1 not authenticated, 2 failure
  int type = 0;         // HTTP_REQUEST_AUTH_TYPE: 0 none, 1 Basic ... 5 Kerberos
  LONG secStatus = 0;   // AcceptSecurityContext's status, for a failure
  ULONG flags = 0;      // HTTP_REQUEST_AUTH_FLAG_TOKEN_FOR_CACHED_CRED
  OwnedToken token;
};

// IO thread: the auth info of a request just received. Its token moves into `out` and
// is cleared in the request, so nothing else can close it or lose it.
void TakeAuthInfo(HTTP_REQUEST* request, size_t length, AuthExtras* out);

// { status, scheme, secStatus, cachedCredentials, token } for the QueueRequest, or null
// where the request carries no auth info. `tokenId`: the TokenTable's number (0: none).
Napi::Value AuthToJs(Napi::Env env, const AuthExtras& auth, double tokenId);

// The tokens a queue has handed to JS, by number: JS never holds a handle value, so it
// cannot query or close a handle it was not given, nor one twice. JS thread only.
class TokenTable {
 public:
  double Adopt(OwnedToken token);
  HANDLE Find(double id) const;
  bool Close(double id);
  void CloseAll() { tokens_.clear(); }
  size_t size() const { return tokens_.size(); }

 private:
  std::unordered_map<double, OwnedToken> tokens_;
  double last_ = 0;
};

// tokenUser(token) -> { code, sid }: GetTokenInformation(TokenUser).
Napi::Value TokenUserJs(Napi::Env env, HANDLE token);
// tokenGroups(token) -> { code, groups: [{ sid, attributes }] }: GetTokenInformation(TokenGroups).
Napi::Value TokenGroupsJs(Napi::Env env, HANDLE token);

}  // namespace httpsys
