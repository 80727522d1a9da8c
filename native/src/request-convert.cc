#include "request-convert.h"

#include <wincrypt.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace httpsys {

namespace {

// HTTP_VERB order (http.h); HttpVerbUnknown carries its own text.
const char* const kVerbs[] = {
    nullptr, nullptr, nullptr, "OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE",
    "TRACE", "CONNECT", "TRACK", "MOVE", "COPY", "PROPFIND", "PROPPATCH", "MKCOL",
    "LOCK", "UNLOCK", "SEARCH"};

// HTTP_HEADER_ID order for requests. HTTP.SYS drops the client's spelling of
// known header names, so they come back in their usual capitalisation.
const char* const kRequestHeaders[HttpHeaderRequestMaximum] = {
    "Cache-Control", "Connection", "Date", "Keep-Alive", "Pragma", "Trailer",
    "Transfer-Encoding", "Upgrade", "Via", "Warning", "Allow", "Content-Length",
    "Content-Type", "Content-Encoding", "Content-Language", "Content-Location",
    "Content-MD5", "Content-Range", "Expires", "Last-Modified", "Accept",
    "Accept-Charset", "Accept-Encoding", "Accept-Language", "Authorization",
    "Cookie", "Expect", "From", "Host", "If-Match", "If-Modified-Since",
    "If-None-Match", "If-Range", "If-Unmodified-Since", "Max-Forwards",
    "Proxy-Authorization", "Referer", "Range", "TE", "Translate", "User-Agent"};

// Header bytes and the raw URL are taken as latin1, as node's own parser does.
napi_value Latin1(napi_env env, const char* text, size_t length) {
  napi_value value;
  napi_create_string_latin1(env, text ? text : "", text ? length : 0, &value);
  return value;
}

void SetAddress(Napi::Object& target, const char* addressKey, const char* portKey,
                const SOCKADDR* address, const char* familyKey) {
  Napi::Env env = target.Env();
  char text[INET6_ADDRSTRLEN] = "";
  int port = 0;
  const char* family = nullptr;
  if (address && address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, const_cast<in_addr*>(&in->sin_addr), text, sizeof(text));
    port = ntohs(in->sin_port);
    family = "IPv4";
  } else if (address && address->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, const_cast<in6_addr*>(&in6->sin6_addr), text, sizeof(text));
    port = ntohs(in6->sin6_port);
    family = "IPv6";
  }
  target.Set(addressKey, family ? Napi::String::New(env, text) : env.Undefined());
  target.Set(portKey, family ? Napi::Number::New(env, port) : env.Undefined());
  if (familyKey) target.Set(familyKey, family ? Napi::String::New(env, family) : env.Undefined());
}

const char* TlsProtocolName(ULONG protocol) {
  // SP_PROT_* bits (schannel.h), server or client side.
  if (protocol & 0x3000) return "TLSv1.3";
  if (protocol & 0xC00) return "TLSv1.2";
  if (protocol & 0x300) return "TLSv1.1";
  if (protocol & 0xC0) return "TLSv1";
  if (protocol & 0x30) return "SSLv3";
  return nullptr;
}

// Cipher suites Schannel negotiates, by IANA number: the IANA name, OpenSSL's
// name (what node's getCipher().name says) and OpenSSL's minimum protocol
// version of the suite (getCipher().version).
struct Suite {
  uint32_t id;
  const char* standardName;
  const char* name;
  const char* version;
};

const Suite kSuites[] = {
    {0x1301, "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "TLSv1.3"},
    {0x1302, "TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", "TLSv1.3"},
    {0x1303, "TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", "TLSv1.3"},
    {0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", "TLSv1.2"},
    {0xC02C, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384", "TLSv1.2"},
    {0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "TLSv1.2"},
    {0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", "TLSv1.2"},
    {0xCCA8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305", "TLSv1.2"},
    {0xCCA9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "TLSv1.2"},
    {0xC023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256", "TLSv1.2"},
    {0xC024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "ECDHE-ECDSA-AES256-SHA384", "TLSv1.2"},
    {0xC027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256", "TLSv1.2"},
    {0xC028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "ECDHE-RSA-AES256-SHA384", "TLSv1.2"},
    {0xC009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA", "TLSv1"},
    {0xC00A, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA", "TLSv1"},
    {0xC013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA", "TLSv1"},
    {0xC014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA", "TLSv1"},
    {0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "DHE-RSA-AES128-GCM-SHA256", "TLSv1.2"},
    {0x009F, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", "DHE-RSA-AES256-GCM-SHA384", "TLSv1.2"},
    {0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", "DHE-RSA-AES128-SHA", "SSLv3"},
    {0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", "DHE-RSA-AES256-SHA", "SSLv3"},
    {0x009C, "TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256", "TLSv1.2"},
    {0x009D, "TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384", "TLSv1.2"},
    {0x003C, "TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256", "TLSv1.2"},
    {0x003D, "TLS_RSA_WITH_AES_256_CBC_SHA256", "AES256-SHA256", "TLSv1.2"},
    {0x002F, "TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA", "SSLv3"},
    {0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA", "SSLv3"},
    {0x000A, "TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA", "SSLv3"},
    {0x0005, "TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA", "SSLv3"},
    {0x0004, "TLS_RSA_WITH_RC4_128_MD5", "RC4-MD5", "SSLv3"},
};

const Suite* FindSuite(uint32_t id) {
  for (const Suite& suite : kSuites) {
    if (suite.id == id) return &suite;
  }
  return nullptr;
}

Napi::Value CipherObject(Napi::Env env, const std::string& name, const std::string& standardName,
                         const char* version) {
  Napi::Object cipher = Napi::Object::New(env);
  cipher.Set("name", name);
  cipher.Set("standardName", standardName);
  cipher.Set("version", version ? Napi::Value(Napi::String::New(env, version)) : env.Null());
  return cipher;
}

// The suite from the ALG_IDs of HTTP_SSL_PROTOCOL_INFO (every Windows), where
// HttpRequestPropertyTlsCipherInfo is not available. Those name the bulk cipher,
// the MAC hash and the key exchange, but not the certificate's key type (RSA or
// ECDSA) nor always the mode: only what they pin down to one suite gets its
// IANA/OpenSSL names.
//   - TLS 1.3: AES_128 and AES_256 are TLS_AES_128_GCM_SHA256 / TLS_AES_256_GCM_SHA384,
//     the only AES suites of TLS 1.3 Schannel offers.
//   - RSA key exchange: the certificate is RSA. A SHA-1 MAC means the CBC (or RC4)
//     suite; no MAC hash (0) means an AEAD suite, GCM for AES.
// Everything else (ECDHE/DHE, whose suite names depend on the certificate; AES
// with SHA-256/384, which is CBC-SHA256 or a GCM suite reporting its PRF hash)
// gets a descriptive name such as "ECDHE_AES_256_GCM" or "ECDHE_AES_128_SHA256",
// as name and standardName alike; its version is then the negotiated protocol.
Napi::Value CipherFromAlgIds(Napi::Env env, const SslProtocolInfo& info, const char* protocol) {
  const ALG_ID cipher = info.CipherType;
  const ALG_ID hash = info.HashType;
  const ALG_ID exchange = info.KeyExchangeType;
  const bool tls13 = (info.Protocol & 0x3000) != 0;
  const bool aes = cipher == CALG_AES_128 || cipher == CALG_AES_256;
  uint32_t id = 0;
  if (tls13 && aes) {
    id = cipher == CALG_AES_128 ? 0x1301 : 0x1302;
  } else if (!tls13 && exchange == CALG_RSA_KEYX) {
    if (aes && hash == CALG_SHA1) id = cipher == CALG_AES_128 ? 0x002F : 0x0035;
    else if (aes && hash == 0) id = cipher == CALG_AES_128 ? 0x009C : 0x009D;
    else if (cipher == CALG_3DES && hash == CALG_SHA1) id = 0x000A;
    else if (cipher == CALG_RC4 && hash == CALG_SHA1) id = 0x0005;
    else if (cipher == CALG_RC4 && hash == CALG_MD5) id = 0x0004;
  }
  if (const Suite* suite = id ? FindSuite(id) : nullptr) {
    return CipherObject(env, suite->name, suite->standardName, suite->version);
  }
  char unknown[32];
  std::string text;
  switch (exchange) {
    case CALG_RSA_KEYX: text = "RSA"; break;
    case CALG_DH_EPHEM: text = "DHE"; break;
    case CALG_ECDH_EPHEM: text = "ECDHE"; break;
    case CALG_ECDH: text = "ECDH"; break;
    case 0: break;
    default:
      std::snprintf(unknown, sizeof(unknown), "KX_0x%04X", static_cast<unsigned>(exchange));
      text = unknown;
  }
  if (!text.empty()) text += '_';
  switch (cipher) {
    case CALG_AES_128: text += "AES_128"; break;
    case CALG_AES_192: text += "AES_192"; break;
    case CALG_AES_256: text += "AES_256"; break;
    case CALG_3DES: text += "3DES_EDE"; break;
    case CALG_DES: text += "DES"; break;
    case CALG_RC4: text += "RC4_128"; break;
    default:
      std::snprintf(unknown, sizeof(unknown), "CIPHER_0x%04X", static_cast<unsigned>(cipher));
      text += unknown;
  }
  switch (hash) {
    case 0: if (aes) text += "_GCM"; break;
    case CALG_MD5: text += "_MD5"; break;
    case CALG_SHA1: text += cipher == CALG_RC4 ? "_SHA" : "_CBC_SHA"; break;
    case CALG_SHA_256: text += "_SHA256"; break;
    case CALG_SHA_384: text += "_SHA384"; break;
    default:
      std::snprintf(unknown, sizeof(unknown), "_HASH_0x%04X", static_cast<unsigned>(hash));
      text += unknown;
  }
  return CipherObject(env, text, text, protocol);
}

// HTTP_SSL_CLIENT_CERT_INFO.CertFlags is the certificate chain policy's error
// (CERT_CHAIN_POLICY_STATUS.dwError) or an SSPI status
// (https://learn.microsoft.com/windows/win32/api/http/ns-http-http_ssl_client_cert_info).
// Named like node's socket.authorizationError where one OpenSSL error means the same.
std::string CertFailureName(ULONG flags) {
  switch (flags) {
    case 0x800B0101: return "CERT_HAS_EXPIRED";                   // CERT_E_EXPIRED (or not yet valid)
    case 0x800B0109: return "SELF_SIGNED_CERT_IN_CHAIN";          // CERT_E_UNTRUSTEDROOT
    case 0x800B010A: return "UNABLE_TO_GET_ISSUER_CERT_LOCALLY";  // CERT_E_CHAINING
    case 0x800B0112: return "CERT_UNTRUSTED";                     // CERT_E_UNTRUSTEDCA
    case 0x800B010C: return "CERT_REVOKED";                       // CERT_E_REVOKED
    case 0x800B0110: return "INVALID_PURPOSE";                    // CERT_E_WRONG_USAGE
    case 0x800B010F: return "HOSTNAME_MISMATCH";                  // CERT_E_CN_NO_MATCH
    case 0x80096004: return "CERT_SIGNATURE_FAILURE";             // TRUST_E_CERT_SIGNATURE
    case 0x80092012:                                              // CRYPT_E_NO_REVOCATION_CHECK
    case 0x80092013: return "UNABLE_TO_GET_CRL";                  // CRYPT_E_REVOCATION_OFFLINE
    default: {
      char text[32];
      std::snprintf(text, sizeof(text), "CERT_FLAGS_0x%08lX", static_cast<unsigned long>(flags));
      return text;
    }
  }
}

// The neutral tls object: { protocol, cipher, alpnProtocol, servername,
// authorized, authorizationError, peerCertificate }; null for plain HTTP.
Napi::Value TlsInfo(Napi::Env env, const HTTP_REQUEST* request, const TlsExtras& extras) {
  const HTTP_SSL_INFO* ssl = request->pSslInfo;
  if (!ssl) return env.Null();
  Napi::Object tls = Napi::Object::New(env);

  const SslProtocolInfo* protocol = nullptr;
  for (USHORT i = 0; i < request->RequestInfoCount; ++i) {
    const HTTP_REQUEST_INFO& info = request->pRequestInfo[i];
    if (static_cast<int>(info.InfoType) == kRequestInfoTypeSslProtocol && info.pInfo) {
      protocol = static_cast<const SslProtocolInfo*>(info.pInfo);
    }
  }
  const char* protocolName = protocol ? TlsProtocolName(protocol->Protocol) : nullptr;
  tls.Set("protocol", protocolName ? Napi::Value(Napi::String::New(env, protocolName)) : env.Null());

  Napi::Value cipher = env.Null();
  if (extras.suiteKnown) {
    const Suite* suite = FindSuite(extras.suite);
    if (suite) {
      cipher = CipherObject(env, suite->name, suite->standardName, suite->version);
    } else if (!extras.suiteName.empty()) {
      // A suite this table does not know: Schannel's (IANA) name for both.
      cipher = CipherObject(env, extras.suiteName, extras.suiteName, protocolName);
    }
  }
  if (cipher.IsNull() && protocol) cipher = CipherFromAlgIds(env, *protocol, protocolName);
  tls.Set("cipher", cipher);

  // HTTP.SYS negotiates ALPN itself; what it settled on shows in the request.
  const char* alpn = (request->Flags & kRequestFlagHttp3)   ? "h3"
                     : (request->Flags & kRequestFlagHttp2) ? "h2"
                                                            : "http/1.1";
  tls.Set("alpnProtocol", alpn);
  tls.Set("servername", extras.sniKnown && !extras.servername.empty()
                            ? Napi::Value(Napi::String::New(env, extras.servername))
                            : env.Null());

  const HTTP_SSL_CLIENT_CERT_INFO* cert = ssl->SslClientCertNegotiated ? ssl->pClientCertInfo : nullptr;
  bool hasCert = cert && cert->pCertEncoded && cert->CertEncodedSize;
  tls.Set("authorized", Napi::Boolean::New(env, hasCert && cert->CertFlags == 0));
  tls.Set("authorizationError", hasCert && cert->CertFlags != 0
                                    ? Napi::Value(Napi::String::New(env, CertFailureName(cert->CertFlags)))
                                    : env.Null());
  tls.Set("peerCertificate", hasCert ? Napi::Value(Napi::Buffer<uint8_t>::Copy(env, cert->pCertEncoded,
                                                                              cert->CertEncodedSize))
                                     : env.Null());
  return tls;
}

// Does a comma-separated header value contain this token (case-insensitive)?
bool HasToken(const HTTP_KNOWN_HEADER& header, const char* token) {
  size_t tokenLength = std::strlen(token);
  const char* p = header.pRawValue;
  const char* end = p + header.RawValueLength;
  while (p && p < end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) ++p;
    const char* start = p;
    while (p < end && *p != ',') ++p;
    const char* stop = p;
    while (stop > start && (stop[-1] == ' ' || stop[-1] == '\t')) --stop;
    if (static_cast<size_t>(stop - start) == tokenLength &&
        _strnicmp(start, token, tokenLength) == 0) {
      return true;
    }
  }
  return false;
}

// `expect`: 'continue' for `100-continue` (node's checkContinue), 'other' for
// any other expectation (node's checkExpectation), null without one. Only
// HTTP/1.1 has it; HTTP.SYS itself sends the 100 Continue on the first body read.
Napi::Value Expectation(Napi::Env env, const HTTP_REQUEST* request, bool http11) {
  const HTTP_KNOWN_HEADER& expect = request->Headers.KnownHeaders[HttpHeaderExpect];
  if (!expect.pRawValue || !http11) return env.Null();
  return Napi::String::New(env, HasToken(expect, "100-continue") ? "continue" : "other");
}

}  // namespace

bool IsMultiplexed(const HTTP_REQUEST* request) {
  return (request->Flags & (kRequestFlagHttp2 | kRequestFlagHttp3)) != 0;
}

void TlsQueries::Prepare(HANDLE queue, HTTP_REQUEST* request, TlsExtras* out) {
  HTTP_SSL_INFO* ssl = request->pSslInfo;
  if (!ssl) return;
  HTTP_SSL_CLIENT_CERT_INFO* cert = ssl->pClientCertInfo;
  if (cert && cert->Token) {
    CloseHandle(cert->Token);
    cert->Token = nullptr;
  }
  QueryRequestPropertyFn query = GetApi().queryRequestProperty;
  if (!query) return;  // before Windows 10 1709, and under Wine
  auto cached = byConnection_.find(request->ConnectionId);
  if (cached != byConnection_.end()) {
    *out = cached->second;
    return;
  }
  // Synchronous queries (no OVERLAPPED), as ASP.NET's GetClientSni makes them.
  RequestPropertySni sni = {};
  ULONG bytes = 0;
  if (query(queue, request->RequestId, kRequestPropertySni, nullptr, 0, &sni, sizeof(sni), &bytes, nullptr) ==
      NO_ERROR) {
    out->sniKnown = true;
    sni.Hostname[255] = L'\0';
    if (!(sni.Flags & kSniFlagNoSni)) out->servername = Narrow(sni.Hostname);
  }
  if (!noCipherInfo_) {
    TlsCipherInfo cipher = {};
    cipher.dwVersion = 1;  // SECPKGCONTEXT_CIPHERINFO_V1
    ULONG rc = query(queue, request->RequestId, kRequestPropertyTlsCipherInfo, nullptr, 0, &cipher, sizeof(cipher),
                     &bytes, nullptr);
    if (rc == NO_ERROR) {
      out->suiteKnown = true;
      out->suite = cipher.dwCipherSuite;
      cipher.szCipherSuite[63] = L'\0';
      out->suiteName = Narrow(cipher.szCipherSuite);
    } else if (rc == ERROR_INVALID_PARAMETER || rc == ERROR_NOT_SUPPORTED || rc == ERROR_INVALID_FUNCTION) {
      // An HTTP.SYS that predates the property: the ALG_IDs of the request
      // info stand in (see CipherFromAlgIds).
      noCipherInfo_ = true;
    }
  }
  // A bound on what dead connections leave behind: ids are never reused soon.
  if (byConnection_.size() >= 1024) byConnection_.clear();
  byConnection_.emplace(request->ConnectionId, *out);
}

Napi::Object RequestToJs(Napi::Env env, const HTTP_REQUEST* request, double id, const TlsExtras& extras,
                         const AuthExtras& auth, double tokenId) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("id", Napi::Number::New(env, id));

  const char* verb = nullptr;
  if (request->Verb > HttpVerbInvalid && request->Verb < HttpVerbMaximum) verb = kVerbs[request->Verb];
  out.Set("method", verb ? Napi::String::New(env, verb)
                         : Napi::Value(env, Latin1(env, request->pUnknownVerb, request->UnknownVerbLength)));
  out.Set("url", Napi::Value(env, Latin1(env, request->pRawUrl, request->RawUrlLength)));
  // HTTP/2 and HTTP/3 come as version 1.1 with a flag
  // (https://learn.microsoft.com/windows/win32/api/http/ns-http-http_request_v1).
  const bool http3 = (request->Flags & kRequestFlagHttp3) != 0;
  const bool multiplexed = IsMultiplexed(request);
  const USHORT major = multiplexed ? (http3 ? 3 : 2) : request->Version.MajorVersion;
  const USHORT minor = multiplexed ? 0 : request->Version.MinorVersion;
  out.Set("httpVersionMajor", Napi::Number::New(env, major));
  out.Set("httpVersionMinor", Napi::Number::New(env, minor));

  const HTTP_REQUEST_HEADERS& headers = request->Headers;
  std::vector<napi_value> raw;
  raw.reserve(2 * (headers.UnknownHeaderCount + 8));
  // Host first, as clients send it; then the other known headers; then the rest.
  auto pushKnown = [&](int index) {
    const HTTP_KNOWN_HEADER& header = headers.KnownHeaders[index];
    if (!header.pRawValue) return;
    raw.push_back(Latin1(env, kRequestHeaders[index], std::strlen(kRequestHeaders[index])));
    raw.push_back(Latin1(env, header.pRawValue, header.RawValueLength));
  };
  pushKnown(HttpHeaderHost);
  for (int i = 0; i < HttpHeaderRequestMaximum; ++i) {
    if (i != HttpHeaderHost) pushKnown(i);
  }
  for (USHORT i = 0; i < headers.UnknownHeaderCount; ++i) {
    const HTTP_UNKNOWN_HEADER& header = headers.pUnknownHeaders[i];
    raw.push_back(Latin1(env, header.pName, header.NameLength));
    raw.push_back(Latin1(env, header.pRawValue, header.RawValueLength));
  }
  napi_value rawHeaders;
  napi_create_array_with_length(env, raw.size(), &rawHeaders);
  for (size_t i = 0; i < raw.size(); ++i) napi_set_element(env, rawHeaders, static_cast<uint32_t>(i), raw[i]);
  out.Set("rawHeaders", Napi::Value(env, rawHeaders));

  SetAddress(out, "remoteAddress", "remotePort", request->Address.pRemoteAddress, "remoteFamily");
  SetAddress(out, "localAddress", "localPort", request->Address.pLocalAddress, nullptr);

  out.Set("encrypted", Napi::Boolean::New(env, request->pSslInfo != nullptr));
  out.Set("tls", TlsInfo(env, request, extras));
  out.Set("hasBody", Napi::Boolean::New(env, request->EntityChunkCount > 0 || MoreBody(request)));
  out.Set("connectionId", Napi::Number::New(env, ConnectionIdToNumber(request->ConnectionId)));

  // HTTP.SYS keeps the connection by HTTP/1.1 rules; report what it will do.
  // An HTTP/2 or HTTP/3 stream never ends its connection.
  const HTTP_KNOWN_HEADER& connection = headers.KnownHeaders[HttpHeaderConnection];
  const bool http11 = !multiplexed && major == 1 && minor == 1;
  bool keepAlive;
  if (multiplexed) {
    keepAlive = true;
  } else if (major > 1 || (major == 1 && minor >= 1)) {
    keepAlive = !HasToken(connection, "close");
  } else {
    keepAlive = HasToken(connection, "keep-alive");
  }
  out.Set("keepAlive", Napi::Boolean::New(env, keepAlive));
  out.Set("expect", Expectation(env, request, http11));
  out.Set("auth", AuthToJs(env, auth, tokenId));
  return out;
}

Napi::Value InlineBody(Napi::Env env, const HTTP_REQUEST* request) {
  size_t total = 0;
  for (USHORT i = 0; i < request->EntityChunkCount; ++i) {
    const HTTP_DATA_CHUNK& chunk = request->pEntityChunks[i];
    if (chunk.DataChunkType == HttpDataChunkFromMemory) total += chunk.FromMemory.BufferLength;
  }
  if (total == 0) return env.Undefined();
  Napi::Buffer<char> body = Napi::Buffer<char>::New(env, total);
  char* out = body.Data();
  for (USHORT i = 0; i < request->EntityChunkCount; ++i) {
    const HTTP_DATA_CHUNK& chunk = request->pEntityChunks[i];
    if (chunk.DataChunkType != HttpDataChunkFromMemory) continue;
    std::memcpy(out, chunk.FromMemory.pBuffer, chunk.FromMemory.BufferLength);
    out += chunk.FromMemory.BufferLength;
  }
  return body;
}

}  // namespace httpsys
