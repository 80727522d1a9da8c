#include "request-convert.h"

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
  // SP_PROT_* server-side bits (schannel.h).
  if (protocol & 0x1000) return "TLSv1.3";
  if (protocol & 0x400) return "TLSv1.2";
  if (protocol & 0x100) return "TLSv1.1";
  if (protocol & 0x40) return "TLSv1";
  if (protocol & 0x10) return "SSLv3";
  return nullptr;
}

Napi::Value TlsInfo(Napi::Env env, const HTTP_REQUEST* request) {
  const HTTP_SSL_INFO* ssl = request->pSslInfo;
  if (!ssl) return env.Null();
  Napi::Object tls = Napi::Object::New(env);
  tls.Set("connectionKeySize", Napi::Number::New(env, ssl->ConnectionKeySize));
  tls.Set("serverCertKeySize", Napi::Number::New(env, ssl->ServerCertKeySize));
  tls.Set("serverCertIssuer",
          Napi::Value(env, Latin1(env, ssl->pServerCertIssuer, ssl->ServerCertIssuerSize)));
  tls.Set("serverCertSubject",
          Napi::Value(env, Latin1(env, ssl->pServerCertSubject, ssl->ServerCertSubjectSize)));
  tls.Set("clientCertNegotiated", Napi::Boolean::New(env, ssl->SslClientCertNegotiated != 0));
  const HTTP_SSL_CLIENT_CERT_INFO* cert = ssl->pClientCertInfo;
  if (cert && cert->pCertEncoded && cert->CertEncodedSize) {
    tls.Set("clientCert", Napi::Buffer<uint8_t>::Copy(env, cert->pCertEncoded, cert->CertEncodedSize));
    tls.Set("clientCertFlags", Napi::Number::New(env, cert->CertFlags));
  }
  for (USHORT i = 0; i < request->RequestInfoCount; ++i) {
    const HTTP_REQUEST_INFO& info = request->pRequestInfo[i];
    if (static_cast<int>(info.InfoType) != kRequestInfoTypeSslProtocol || !info.pInfo) continue;
    const auto* protocol = static_cast<const SslProtocolInfo*>(info.pInfo);
    const char* name = TlsProtocolName(protocol->Protocol);
    tls.Set("protocol", name ? Napi::String::New(env, name) : env.Null());
    tls.Set("cipherType", Napi::Number::New(env, protocol->CipherType));
    tls.Set("cipherStrength", Napi::Number::New(env, protocol->CipherStrength));
    tls.Set("hashType", Napi::Number::New(env, protocol->HashType));
    tls.Set("hashStrength", Napi::Number::New(env, protocol->HashStrength));
    tls.Set("keyExchangeType", Napi::Number::New(env, protocol->KeyExchangeType));
    tls.Set("keyExchangeStrength", Napi::Number::New(env, protocol->KeyExchangeStrength));
  }
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

}  // namespace

Napi::Object RequestToJs(Napi::Env env, const HTTP_REQUEST* request, double id) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("id", Napi::Number::New(env, id));

  const char* verb = nullptr;
  if (request->Verb > HttpVerbInvalid && request->Verb < HttpVerbMaximum) verb = kVerbs[request->Verb];
  out.Set("method", verb ? Napi::String::New(env, verb)
                         : Napi::Value(env, Latin1(env, request->pUnknownVerb, request->UnknownVerbLength)));
  out.Set("url", Napi::Value(env, Latin1(env, request->pRawUrl, request->RawUrlLength)));
  out.Set("httpVersionMajor", Napi::Number::New(env, request->Version.MajorVersion));
  out.Set("httpVersionMinor", Napi::Number::New(env, request->Version.MinorVersion));

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
  out.Set("tls", TlsInfo(env, request));
  out.Set("hasBody", Napi::Boolean::New(env, request->EntityChunkCount > 0 || MoreBody(request)));
  out.Set("connectionId", Napi::Number::New(env, ConnectionIdToNumber(request->ConnectionId)));

  // HTTP.SYS keeps the connection by HTTP/1.1 rules; report what it will do.
  const HTTP_KNOWN_HEADER& connection = headers.KnownHeaders[HttpHeaderConnection];
  bool keepAlive;
  if (request->Version.MajorVersion > 1 ||
      (request->Version.MajorVersion == 1 && request->Version.MinorVersion >= 1)) {
    keepAlive = !HasToken(connection, "close");
  } else {
    keepAlive = HasToken(connection, "keep-alive");
  }
  out.Set("keepAlive", Napi::Boolean::New(env, keepAlive));
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
