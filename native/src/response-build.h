// JS response pieces -> the HTTP_RESPONSE_V2 / HTTP_DATA_CHUNKs of a SendOp.
#pragma once

#include "ops.h"

#include <napi.h>

namespace httpsys {

// Status line and headers. rawHeaders is [name, value, ...] as it goes on the
// wire; repeats of a known header go out as HTTP_MULTIPLE_KNOWN_HEADERS (or as
// unknown headers where that is not honoured, under Wine). After a 101 with
// `opaque`, Connection and Upgrade must be unknown headers for HTTP.SYS.
// Returns false with a JS exception pending when the input is unusable.
bool BuildResponseHead(Napi::Env env, SendOp* op, uint32_t status, Napi::Value reason,
                       Napi::Value rawHeaders, bool opaque, bool multipleKnownHeaders);

// Body: a Buffer, a string (utf8), an array of those, or null/undefined.
// Buffers are referenced, not copied, until the send completes.
bool BuildBodyChunks(Napi::Env env, SendOp* op, Napi::Value body, size_t* bytes);

}  // namespace httpsys
