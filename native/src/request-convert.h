// HTTP_REQUEST (in the receive buffer) -> the contract's QueueRequest object.
#pragma once

#include "http-api.h"
#include "token.h"

#include <napi.h>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace httpsys {

// What HttpQueryRequestProperty adds to a TLS request: the SNI host name and
// the exact cipher suite (HttpRequestPropertyTlsCipherInfo, newer Windows
// only). Both are per connection.
struct TlsExtras {
  bool sniKnown = false;
  std::string servername;       // utf8; empty: the client sent no SNI
  bool suiteKnown = false;
  uint32_t suite = 0;           // the IANA number
  std::string suiteName;        // Schannel's name for it (IANA spelling)
};

// Runs the property queries for TLS requests on the IO thread (they are
// synchronous calls), so the JS thread never waits for them. Answers are kept
// per connection: a keep-alive or HTTP/2 connection is asked once. IO thread only.
class TlsQueries {
 public:
  // Fills `out` for this request (nothing for a plain-HTTP one). Also closes
  // the access token HTTP.SYS opens for a client certificate mapped to an
  // account (the binding's DS mapper flag): it is this process's handle, and
  // nothing here uses it.
  void Prepare(HANDLE queue, HTTP_REQUEST* request, TlsExtras* out);

 private:
  std::unordered_map<HTTP_CONNECTION_ID, TlsExtras> byConnection_;
  bool noCipherInfo_ = false;  // the OS does not know HttpRequestPropertyTlsCipherInfo
};

// The QueueRequest fields of src/wire/contract.js, and `auth` (token.h AuthToJs: what
// HTTP.SYS's authentication made of the request; tokenId: the queue's number for its
// access token, 0 for none).
Napi::Object RequestToJs(Napi::Env env, const HTTP_REQUEST* request, double id, const TlsExtras& tls,
                         const AuthExtras& auth, double tokenId);

// HTTP/2 or HTTP/3: HTTP.SYS reports these as version 1.1 and flags them.
bool IsMultiplexed(const HTTP_REQUEST* request);

// The entity chunks HTTP.SYS copied along with the headers (COPY_BODY), as one
// Buffer; an empty value when there are none.
Napi::Value InlineBody(Napi::Env env, const HTTP_REQUEST* request);

// More body is waiting in the kernel (read it with HttpReceiveRequestEntityBody).
inline bool MoreBody(const HTTP_REQUEST* request) {
  return (request->Flags & HTTP_REQUEST_FLAG_MORE_ENTITY_BODY_EXISTS) != 0;
}

// Connection ids are opaque 64-bit values; JS gets a number that stays unique
// in practice (the high bits are folded into the 53 a double holds exactly).
inline double ConnectionIdToNumber(HTTP_CONNECTION_ID id) {
  const uint64_t mask = (uint64_t(1) << 53) - 1;
  return static_cast<double>((id ^ (id >> 53)) & mask);
}

}  // namespace httpsys
