#include "service-config.h"

#include "http-api.h"

#include <sddl.h>

#include <cstdio>
#include <vector>

namespace httpsys {

namespace {

Napi::Object Result(Napi::Env env, ULONG code) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("code", Napi::Number::New(env, code));
  return out;
}

std::wstring WideArg(const Napi::Value& value) {
  return value.IsString() ? Widen(value.As<Napi::String>().Utf8Value()) : std::wstring();
}

// ---------------------------------------------------------------------------
// URL ACLs (HttpServiceConfigUrlAclInfo)

Napi::Value UrlAclSet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ULONG rc = InitConfig();
  if (rc != NO_ERROR) return Napi::Number::New(env, rc);
  std::wstring prefix = WideArg(info[0]);
  std::wstring sddl = WideArg(info[1]);
  HTTP_SERVICE_CONFIG_URLACL_SET set = {};
  set.KeyDesc.pUrlPrefix = &prefix[0];
  set.ParamDesc.pStringSecurityDescriptor = &sddl[0];
  rc = HttpSetServiceConfiguration(nullptr, HttpServiceConfigUrlAclInfo, &set, sizeof(set), nullptr);
  return Napi::Number::New(env, rc);
}

Napi::Value UrlAclDelete(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ULONG rc = InitConfig();
  if (rc != NO_ERROR) return Napi::Number::New(env, rc);
  std::wstring prefix = WideArg(info[0]);
  HTTP_SERVICE_CONFIG_URLACL_SET set = {};
  set.KeyDesc.pUrlPrefix = &prefix[0];
  rc = HttpDeleteServiceConfiguration(nullptr, HttpServiceConfigUrlAclInfo, &set, sizeof(set), nullptr);
  return Napi::Number::New(env, rc);
}

// Runs one query, growing the output buffer on ERROR_INSUFFICIENT_BUFFER.
ULONG Query(HTTP_SERVICE_CONFIG_ID id, void* query, ULONG querySize, std::vector<uint64_t>* out) {
  ULONG needed = 4096;
  for (int attempt = 0; attempt < 4; ++attempt) {
    out->assign((needed + 7) / 8, 0);
    ULONG size = static_cast<ULONG>(out->size() * 8);
    ULONG rc = HttpQueryServiceConfiguration(nullptr, id, query, querySize, out->data(), size, &needed, nullptr);
    if (rc != ERROR_INSUFFICIENT_BUFFER && rc != ERROR_MORE_DATA) return rc;
  }
  return ERROR_INSUFFICIENT_BUFFER;
}

// urlAclList(prefix?) -> { code, records: [{ prefix, sddl }] }; with a prefix
// only that record, else every record.
Napi::Value UrlAclList(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Result(env, InitConfig());
  Napi::Array records = Napi::Array::New(env);
  out.Set("records", records);
  if (out.Get("code").As<Napi::Number>().Uint32Value() != NO_ERROR) return out;
  std::wstring prefix = WideArg(info[0]);
  std::vector<uint64_t> buffer;
  uint32_t n = 0;
  for (DWORD token = 0;; ++token) {
    HTTP_SERVICE_CONFIG_URLACL_QUERY query = {};
    if (!prefix.empty()) {
      query.QueryDesc = HttpServiceConfigQueryExact;
      query.KeyDesc.pUrlPrefix = &prefix[0];
    } else {
      query.QueryDesc = HttpServiceConfigQueryNext;
      query.dwToken = token;
    }
    ULONG rc = Query(HttpServiceConfigUrlAclInfo, &query, sizeof(query), &buffer);
    if (rc == ERROR_NO_MORE_ITEMS) break;
    if (rc != NO_ERROR) {
      out.Set("code", Napi::Number::New(env, rc));
      break;
    }
    const auto* set = reinterpret_cast<const HTTP_SERVICE_CONFIG_URLACL_SET*>(buffer.data());
    Napi::Object record = Napi::Object::New(env);
    record.Set("prefix", Narrow(set->KeyDesc.pUrlPrefix));
    record.Set("sddl", Narrow(set->ParamDesc.pStringSecurityDescriptor));
    records.Set(n++, record);
    if (!prefix.empty()) break;
  }
  return out;
}

// ---------------------------------------------------------------------------
// TLS certificate bindings: IP:port (HttpServiceConfigSSLCertInfo) and
// host:port (HttpServiceConfigSslSniCertInfo).

bool ParseAddress(const std::string& ip, uint16_t port, SOCKADDR_STORAGE* out) {
  *out = SOCKADDR_STORAGE();
  auto* in4 = reinterpret_cast<sockaddr_in*>(out);
  if (inet_pton(AF_INET, ip.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
    return true;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    return true;
  }
  return false;
}

void SetAddress(Napi::Object& record, const SOCKADDR* address) {
  char text[INET6_ADDRSTRLEN] = "";
  int port = 0;
  if (address && address->sa_family == AF_INET) {
    const auto* in4 = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, const_cast<in_addr*>(&in4->sin_addr), text, sizeof(text));
    port = ntohs(in4->sin_port);
  } else if (address && address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, const_cast<in6_addr*>(&in6->sin6_addr), text, sizeof(text));
    port = ntohs(in6->sin6_port);
  }
  record.Set("ip", Napi::String::New(record.Env(), text));
  record.Set("port", Napi::Number::New(record.Env(), port));
}

bool ParseGuid(const std::string& text, GUID* out) {
  unsigned long d1;
  unsigned int d2, d3, b[8];
  const char* s = text.c_str();
  if (*s == '{') ++s;
  int got = std::sscanf(s, "%8lx-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x", &d1, &d2, &d3, &b[0], &b[1], &b[2], &b[3],
                        &b[4], &b[5], &b[6], &b[7]);
  if (got != 11) return false;
  out->Data1 = d1;
  out->Data2 = static_cast<unsigned short>(d2);
  out->Data3 = static_cast<unsigned short>(d3);
  for (int i = 0; i < 8; ++i) out->Data4[i] = static_cast<unsigned char>(b[i]);
  return true;
}

std::string FormatGuid(const GUID& g) {
  char text[64];
  std::snprintf(text, sizeof(text), "{%08lx-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                static_cast<unsigned long>(g.Data1), g.Data2, g.Data3, g.Data4[0], g.Data4[1], g.Data4[2],
                g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7]);
  return text;
}

std::string Hex(const void* data, ULONG size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (ULONG i = 0; i < size; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

// Every field of the binding's HTTP_SERVICE_CONFIG_SSL_PARAM: a binding netsh or
// IIS made keeps what they set when JS writes it back with another certificate.
void DescribeParam(Napi::Object& record, const HTTP_SERVICE_CONFIG_SSL_PARAM& param) {
  Napi::Env env = record.Env();
  record.Set("hash", Hex(param.pSslHash, param.SslHashLength));
  record.Set("appId", FormatGuid(param.AppId));
  record.Set("store", param.pSslCertStoreName ? Narrow(param.pSslCertStoreName) : std::string("MY"));
  record.Set("flags", Napi::Number::New(env, param.DefaultFlags));
  record.Set("checkMode", Napi::Number::New(env, param.DefaultCertCheckMode));
  record.Set("revocationFreshnessTime", Napi::Number::New(env, param.DefaultRevocationFreshnessTime));
  record.Set("urlRetrievalTimeout", Napi::Number::New(env, param.DefaultRevocationUrlRetrievalTimeout));
  record.Set("ctlIdentifier", param.pDefaultSslCtlIdentifier ? Narrow(param.pDefaultSslCtlIdentifier) : std::string());
  record.Set("ctlStoreName", param.pDefaultSslCtlStoreName ? Narrow(param.pDefaultSslCtlStoreName) : std::string());
}

// The key and parameters of one binding, with the storage they point into: filled
// in place and never copied, so the pointers in param stay valid (a short wstring
// moved would take its characters with it).
struct Binding {
  Binding() = default;
  Binding(const Binding&) = delete;
  Binding& operator=(const Binding&) = delete;
  SOCKADDR_STORAGE address = {};
  std::wstring host;
  std::wstring store;
  std::wstring ctlIdentifier;
  std::wstring ctlStoreName;
  std::vector<unsigned char> hash;
  HTTP_SERVICE_CONFIG_SSL_PARAM param = {};
  ULONG error = NO_ERROR;
};

// { ip, port, host?, hash: Buffer, appId, store?, flags?, checkMode?,
//   revocationFreshnessTime?, urlRetrievalTimeout?, ctlIdentifier?, ctlStoreName? }
void ReadBinding(const Napi::Object& spec, bool withParams, Binding* out) {
  Binding& b = *out;
  std::string ip = spec.Has("ip") && spec.Get("ip").IsString() ? spec.Get("ip").As<Napi::String>().Utf8Value()
                                                              : std::string("0.0.0.0");
  uint16_t port = static_cast<uint16_t>(spec.Get("port").ToNumber().Uint32Value());
  if (!ParseAddress(ip, port, &b.address)) b.error = ERROR_INVALID_PARAMETER;
  b.host = WideArg(spec.Get("host"));
  if (!withParams) return;
  Napi::Value hash = spec.Get("hash");
  if (hash.IsBuffer()) {
    Napi::Buffer<unsigned char> bytes = hash.As<Napi::Buffer<unsigned char>>();
    b.hash.assign(bytes.Data(), bytes.Data() + bytes.Length());
  }
  if (b.hash.empty()) b.error = ERROR_INVALID_PARAMETER;
  std::string appId = spec.Get("appId").IsString() ? spec.Get("appId").As<Napi::String>().Utf8Value() : "";
  if (!ParseGuid(appId, &b.param.AppId)) b.error = ERROR_INVALID_PARAMETER;
  b.store = WideArg(spec.Get("store"));
  b.param.SslHashLength = static_cast<ULONG>(b.hash.size());
  b.param.pSslHash = b.hash.data();
  b.param.pSslCertStoreName = b.store.empty() ? nullptr : &b.store[0];
  b.param.DefaultFlags = spec.Get("flags").IsNumber() ? spec.Get("flags").As<Napi::Number>().Uint32Value() : 0;
  b.param.DefaultCertCheckMode =
      spec.Get("checkMode").IsNumber() ? spec.Get("checkMode").As<Napi::Number>().Uint32Value() : 0;
  Napi::Value freshness = spec.Get("revocationFreshnessTime");
  b.param.DefaultRevocationFreshnessTime = freshness.IsNumber() ? freshness.As<Napi::Number>().Uint32Value() : 0;
  Napi::Value timeout = spec.Get("urlRetrievalTimeout");
  b.param.DefaultRevocationUrlRetrievalTimeout = timeout.IsNumber() ? timeout.As<Napi::Number>().Uint32Value() : 0;
  b.ctlIdentifier = WideArg(spec.Get("ctlIdentifier"));
  b.ctlStoreName = WideArg(spec.Get("ctlStoreName"));
  b.param.pDefaultSslCtlIdentifier = b.ctlIdentifier.empty() ? nullptr : &b.ctlIdentifier[0];
  b.param.pDefaultSslCtlStoreName = b.ctlStoreName.empty() ? nullptr : &b.ctlStoreName[0];
}

// sslCertSet(spec, update) -> Win32 code. update uses
// HttpUpdateServiceConfiguration where the OS has it (atomic rotation), else
// ERROR_NOT_SUPPORTED so the caller can delete and set.
Napi::Value SslCertSet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ULONG rc = InitConfig();
  if (rc != NO_ERROR || !info[0].IsObject()) return Napi::Number::New(env, rc ? rc : ERROR_INVALID_PARAMETER);
  bool update = info[1].ToBoolean().Value();
  Binding b;
  ReadBinding(info[0].As<Napi::Object>(), true, &b);
  if (b.error != NO_ERROR) return Napi::Number::New(env, b.error);
  UpdateServiceConfigurationFn updateFn = GetApi().updateServiceConfiguration;
  if (update && !updateFn) return Napi::Number::New(env, ERROR_NOT_SUPPORTED);
  if (!b.host.empty()) {
    SslSniSet set = {};
    set.KeyDesc.IpPort = b.address;
    set.KeyDesc.Host = &b.host[0];
    set.ParamDesc = b.param;
    auto id = static_cast<HTTP_SERVICE_CONFIG_ID>(kServiceConfigSslSniCertInfo);
    rc = update ? updateFn(nullptr, id, &set, sizeof(set), nullptr)
                : HttpSetServiceConfiguration(nullptr, id, &set, sizeof(set), nullptr);
  } else {
    HTTP_SERVICE_CONFIG_SSL_SET set = {};
    set.KeyDesc.pIpPort = reinterpret_cast<PSOCKADDR>(&b.address);
    set.ParamDesc = b.param;
    rc = update ? updateFn(nullptr, HttpServiceConfigSSLCertInfo, &set, sizeof(set), nullptr)
                : HttpSetServiceConfiguration(nullptr, HttpServiceConfigSSLCertInfo, &set, sizeof(set), nullptr);
  }
  return Napi::Number::New(env, rc);
}

Napi::Value SslCertDelete(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ULONG rc = InitConfig();
  if (rc != NO_ERROR || !info[0].IsObject()) return Napi::Number::New(env, rc ? rc : ERROR_INVALID_PARAMETER);
  Binding b;
  ReadBinding(info[0].As<Napi::Object>(), false, &b);
  if (b.error != NO_ERROR) return Napi::Number::New(env, b.error);
  if (!b.host.empty()) {
    SslSniSet set = {};
    set.KeyDesc.IpPort = b.address;
    set.KeyDesc.Host = &b.host[0];
    rc = HttpDeleteServiceConfiguration(nullptr, static_cast<HTTP_SERVICE_CONFIG_ID>(kServiceConfigSslSniCertInfo),
                                        &set, sizeof(set), nullptr);
  } else {
    HTTP_SERVICE_CONFIG_SSL_SET set = {};
    set.KeyDesc.pIpPort = reinterpret_cast<PSOCKADDR>(&b.address);
    rc = HttpDeleteServiceConfiguration(nullptr, HttpServiceConfigSSLCertInfo, &set, sizeof(set), nullptr);
  }
  return Napi::Number::New(env, rc);
}

// sslCertList(sni) -> { code, records: [{ ip, port, host?, hash, appId, store, flags, checkMode,
//   revocationFreshnessTime, urlRetrievalTimeout, ctlIdentifier, ctlStoreName }] }
Napi::Value SslCertList(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Result(env, InitConfig());
  Napi::Array records = Napi::Array::New(env);
  out.Set("records", records);
  if (out.Get("code").As<Napi::Number>().Uint32Value() != NO_ERROR) return out;
  bool sni = info[0].ToBoolean().Value();
  std::vector<uint64_t> buffer;
  uint32_t n = 0;
  for (DWORD token = 0;; ++token) {
    ULONG rc;
    if (sni) {
      SslSniQuery query = {};
      query.QueryDesc = HttpServiceConfigQueryNext;
      query.dwToken = token;
      rc = Query(static_cast<HTTP_SERVICE_CONFIG_ID>(kServiceConfigSslSniCertInfo), &query, sizeof(query), &buffer);
    } else {
      HTTP_SERVICE_CONFIG_SSL_QUERY query = {};
      query.QueryDesc = HttpServiceConfigQueryNext;
      query.dwToken = token;
      rc = Query(HttpServiceConfigSSLCertInfo, &query, sizeof(query), &buffer);
    }
    if (rc == ERROR_NO_MORE_ITEMS) break;
    if (rc != NO_ERROR) {
      out.Set("code", Napi::Number::New(env, rc));
      break;
    }
    Napi::Object record = Napi::Object::New(env);
    if (sni) {
      const auto* set = reinterpret_cast<const SslSniSet*>(buffer.data());
      SetAddress(record, reinterpret_cast<const SOCKADDR*>(&set->KeyDesc.IpPort));
      record.Set("host", Narrow(set->KeyDesc.Host));
      DescribeParam(record, set->ParamDesc);
    } else {
      const auto* set = reinterpret_cast<const HTTP_SERVICE_CONFIG_SSL_SET*>(buffer.data());
      SetAddress(record, set->KeyDesc.pIpPort);
      DescribeParam(record, set->ParamDesc);
    }
    records.Set(n++, record);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Accounts: URL ACLs are written with SIDs, not names (names are localised).

const char* SidTypeName(SID_NAME_USE use) {
  switch (use) {
    case SidTypeUser: return "user";
    case SidTypeGroup: return "group";
    case SidTypeDomain: return "domain";
    case SidTypeAlias: return "alias";
    case SidTypeWellKnownGroup: return "wellKnownGroup";
    case SidTypeComputer: return "computer";
    default: return "other";
  }
}

// lookupAccount(name) -> { code, sid, domain, name, type }
Napi::Value LookupAccount(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::wstring name = WideArg(info[0]);
  DWORD sidSize = 0;
  DWORD domainSize = 0;
  SID_NAME_USE use;
  LookupAccountNameW(nullptr, name.c_str(), nullptr, &sidSize, nullptr, &domainSize, &use);
  DWORD rc = GetLastError();
  if (rc != ERROR_INSUFFICIENT_BUFFER) return Result(env, rc);
  std::vector<unsigned char> sid(sidSize);
  std::wstring domain(domainSize, L'\0');
  if (!LookupAccountNameW(nullptr, name.c_str(), sid.data(), &sidSize, &domain[0], &domainSize, &use)) {
    return Result(env, GetLastError());
  }
  LPWSTR text = nullptr;
  if (!ConvertSidToStringSidW(sid.data(), &text)) return Result(env, GetLastError());
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("sid", Narrow(text));
  LocalFree(text);
  out.Set("domain", Narrow(domain.c_str()));
  out.Set("name", Narrow(name.c_str()));
  out.Set("type", SidTypeName(use));
  return out;
}

// lookupSid(sid) -> { code, domain, name, type }
Napi::Value LookupSid(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::wstring text = WideArg(info[0]);
  PSID sid = nullptr;
  if (!ConvertStringSidToSidW(text.c_str(), &sid)) return Result(env, GetLastError());
  wchar_t name[256];
  wchar_t domain[256];
  DWORD nameSize = 256;
  DWORD domainSize = 256;
  SID_NAME_USE use;
  BOOL ok = LookupAccountSidW(nullptr, sid, name, &nameSize, domain, &domainSize, &use);
  DWORD rc = ok ? NO_ERROR : GetLastError();
  LocalFree(sid);
  Napi::Object out = Result(env, rc);
  if (ok) {
    out.Set("name", Narrow(name));
    out.Set("domain", Narrow(domain));
    out.Set("type", SidTypeName(use));
  }
  return out;
}

}  // namespace

void InitServiceConfig(Napi::Env env, Napi::Object exports) {
  exports.Set("urlAclSet", Napi::Function::New(env, UrlAclSet, "urlAclSet"));
  exports.Set("urlAclDelete", Napi::Function::New(env, UrlAclDelete, "urlAclDelete"));
  exports.Set("urlAclList", Napi::Function::New(env, UrlAclList, "urlAclList"));
  exports.Set("sslCertSet", Napi::Function::New(env, SslCertSet, "sslCertSet"));
  exports.Set("sslCertDelete", Napi::Function::New(env, SslCertDelete, "sslCertDelete"));
  exports.Set("sslCertList", Napi::Function::New(env, SslCertList, "sslCertList"));
  exports.Set("lookupAccount", Napi::Function::New(env, LookupAccount, "lookupAccount"));
  exports.Set("lookupSid", Napi::Function::New(env, LookupSid, "lookupSid"));
}

}  // namespace httpsys
