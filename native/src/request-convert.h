// HTTP_REQUEST (in the receive buffer) -> the contract's QueueRequest object.
#pragma once

#include "http-api.h"

#include <napi.h>

namespace httpsys {

// The QueueRequest fields of src/queue/contract.js.
Napi::Object RequestToJs(Napi::Env env, const HTTP_REQUEST* request, double id);

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
