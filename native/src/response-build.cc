#include "response-build.h"

#include <cstring>

namespace httpsys {

namespace {

// HTTP_HEADER_ID order for responses (http.h).
const char* const kResponseHeaders[HttpHeaderResponseMaximum] = {
    "Cache-Control", "Connection", "Date", "Keep-Alive", "Pragma", "Trailer",
    "Transfer-Encoding", "Upgrade", "Via", "Warning", "Allow", "Content-Length",
    "Content-Type", "Content-Encoding", "Content-Language", "Content-Location",
    "Content-MD5", "Content-Range", "Expires", "Last-Modified", "Accept-Ranges",
    "Age", "ETag", "Location", "Proxy-Authenticate", "Retry-After", "Server",
    "Set-Cookie", "Vary", "WWW-Authenticate"};

int KnownResponseHeader(const char* name, size_t length) {
  for (int i = 0; i < HttpHeaderResponseMaximum; ++i) {
    const char* known = kResponseHeaders[i];
    if (std::strlen(known) == length && _strnicmp(known, name, length) == 0) return i;
  }
  return -1;
}

struct Slice {
  const char* data;
  size_t length;
};

// Latin1 bytes of a JS string into the arena; returns the slice.
bool CopyLatin1(napi_env env, napi_value value, char*& cursor, Slice* out) {
  size_t length = 0;
  if (napi_get_value_string_latin1(env, value, nullptr, 0, &length) != napi_ok) return false;
  size_t copied = 0;
  napi_get_value_string_latin1(env, value, cursor, length + 1, &copied);
  out->data = cursor;
  out->length = copied;
  cursor += copied + 1;
  return true;
}

bool Latin1Length(napi_env env, napi_value value, size_t* length) {
  return napi_get_value_string_latin1(env, value, nullptr, 0, length) == napi_ok;
}

}  // namespace

bool BuildResponseHead(Napi::Env env, SendOp* op, uint32_t status, Napi::Value reason,
                       Napi::Value rawHeaders, bool opaque, bool multipleKnownHeaders) {
  if (status < 100 || status > 999) {
    Napi::RangeError::New(env, "status code out of range").ThrowAsJavaScriptException();
    return false;
  }
  uint32_t count = 0;
  Napi::Array headers;
  if (rawHeaders.IsArray()) {
    headers = rawHeaders.As<Napi::Array>();
    count = headers.Length() & ~1u;
  }

  // Pass 1: sizes, so one arena holds every byte and no pointer moves.
  size_t total = 0;
  size_t length = 0;
  bool hasReason = reason.IsString();
  if (hasReason && !Latin1Length(env, reason, &length)) return false;
  if (hasReason) total += length + 1;
  std::vector<napi_value> values(count);
  for (uint32_t i = 0; i < count; ++i) {
    napi_value item = headers.Get(i);
    napi_valuetype type;
    napi_typeof(env, item, &type);
    if (type != napi_string) {
      Napi::TypeError::New(env, "header names and values must be strings").ThrowAsJavaScriptException();
      return false;
    }
    values[i] = item;
    if (!Latin1Length(env, item, &length)) return false;
    if (length > 0xFFFF) {
      Napi::RangeError::New(env, "a header is longer than HTTP.SYS accepts (65535 bytes)")
          .ThrowAsJavaScriptException();
      return false;
    }
    total += length + 1;
  }
  op->arena.reset(new char[total + 1]);
  char* cursor = op->arena.get();

  HTTP_RESPONSE_V2& response = op->response;
  response.Version.MajorVersion = 1;
  response.Version.MinorVersion = 1;
  response.StatusCode = static_cast<USHORT>(status);
  if (hasReason) {
    Slice text;
    CopyLatin1(env, reason, cursor, &text);
    response.pReason = text.data;
    response.ReasonLength = static_cast<USHORT>(text.length > 0xFFFF ? 0xFFFF : text.length);
  }

  // Pass 2: copy, then place each header.
  std::vector<Slice> names(count / 2), texts(count / 2);
  std::vector<int> known(count / 2, -1);
  int perKnown[HttpHeaderResponseMaximum] = {0};
  for (uint32_t i = 0; i < count / 2; ++i) {
    CopyLatin1(env, values[2 * i], cursor, &names[i]);
    CopyLatin1(env, values[2 * i + 1], cursor, &texts[i]);
    int index = KnownResponseHeader(names[i].data, names[i].length);
    if (opaque && (index == HttpHeaderConnection || index == HttpHeaderUpgrade)) index = -1;
    known[i] = index;
    if (index >= 0) ++perKnown[index];
  }

  size_t unknownCount = 0;
  size_t multiCount = 0;
  size_t multiIds = 0;
  for (uint32_t i = 0; i < count / 2; ++i) {
    int index = known[i];
    if (index < 0 || (perKnown[index] > 1 && !multipleKnownHeaders)) ++unknownCount;
    else if (perKnown[index] > 1) ++multiCount;
  }
  for (int index = 0; index < HttpHeaderResponseMaximum; ++index) {
    if (perKnown[index] > 1 && multipleKnownHeaders) ++multiIds;
  }
  op->unknownHeaders.reserve(unknownCount);
  op->multiValues.reserve(multiCount);
  op->multiHeaders.reserve(multiIds);
  op->responseInfo.reserve(multiIds);

  for (uint32_t i = 0; i < count / 2; ++i) {
    int index = known[i];
    if (index >= 0 && perKnown[index] == 1) {
      response.Headers.KnownHeaders[index].pRawValue = texts[i].data;
      response.Headers.KnownHeaders[index].RawValueLength = static_cast<USHORT>(texts[i].length);
    } else if (index < 0 || !multipleKnownHeaders) {
      HTTP_UNKNOWN_HEADER header = {};
      header.pName = names[i].data;
      header.NameLength = static_cast<USHORT>(names[i].length);
      header.pRawValue = texts[i].data;
      header.RawValueLength = static_cast<USHORT>(texts[i].length);
      op->unknownHeaders.push_back(header);
    }
  }
  // Every value of a repeated known header, in order, through pResponseInfo
  // (https://learn.microsoft.com/windows/win32/api/http/ns-http-http_multiple_known_headers).
  if (multipleKnownHeaders) {
    for (int index = 0; index < HttpHeaderResponseMaximum; ++index) {
      if (perKnown[index] < 2) continue;
      size_t first = op->multiValues.size();
      for (uint32_t i = 0; i < count / 2; ++i) {
        if (known[i] != index) continue;
        HTTP_KNOWN_HEADER value = {};
        value.pRawValue = texts[i].data;
        value.RawValueLength = static_cast<USHORT>(texts[i].length);
        op->multiValues.push_back(value);
      }
      HTTP_MULTIPLE_KNOWN_HEADERS multi = {};
      multi.HeaderId = static_cast<HTTP_HEADER_ID>(index);
      multi.Flags = kResponseInfoPreserveOrder;
      multi.KnownHeaderCount = static_cast<USHORT>(op->multiValues.size() - first);
      multi.KnownHeaders = op->multiValues.data() + first;
      op->multiHeaders.push_back(multi);
      HTTP_RESPONSE_INFO info = {};
      info.Type = HttpResponseInfoTypeMultipleKnownHeaders;
      info.Length = sizeof(HTTP_MULTIPLE_KNOWN_HEADERS);
      info.pInfo = &op->multiHeaders.back();
      op->responseInfo.push_back(info);
    }
  }
  response.Headers.UnknownHeaderCount = static_cast<USHORT>(op->unknownHeaders.size());
  response.Headers.pUnknownHeaders = op->unknownHeaders.empty() ? nullptr : op->unknownHeaders.data();
  response.ResponseInfoCount = static_cast<USHORT>(op->responseInfo.size());
  response.pResponseInfo = op->responseInfo.empty() ? nullptr : op->responseInfo.data();
  return true;
}

bool BuildBodyChunks(Napi::Env env, SendOp* op, Napi::Value body, size_t* bytes) {
  *bytes = 0;
  if (body.IsNull() || body.IsUndefined()) return true;

  std::vector<Napi::Value> parts;
  if (body.IsArray()) {
    Napi::Array array = body.As<Napi::Array>();
    for (uint32_t i = 0; i < array.Length(); ++i) parts.push_back(array.Get(i));
  } else {
    parts.push_back(body);
  }
  if (parts.size() > 0xFFFF) {
    Napi::RangeError::New(env, "too many body chunks").ThrowAsJavaScriptException();
    return false;
  }
  // Strings are concatenated into one utf8 block first so no pointer moves.
  size_t textLength = 0;
  for (const Napi::Value& part : parts) {
    if (part.IsString()) {
      size_t length = 0;
      napi_get_value_string_utf8(env, part, nullptr, 0, &length);
      textLength += length;
    } else if (!part.IsBuffer() && !part.IsTypedArray()) {
      Napi::TypeError::New(env, "body chunks must be Buffers or strings").ThrowAsJavaScriptException();
      return false;
    }
  }
  op->textBody.resize(textLength + 1);
  size_t textOffset = 0;
  op->chunks.reserve(parts.size());
  op->buffers.reserve(parts.size());
  for (const Napi::Value& part : parts) {
    HTTP_DATA_CHUNK chunk = {};
    chunk.DataChunkType = HttpDataChunkFromMemory;
    if (part.IsString()) {
      size_t copied = 0;
      napi_get_value_string_utf8(env, part, &op->textBody[textOffset], textLength - textOffset + 1, &copied);
      chunk.FromMemory.pBuffer = &op->textBody[textOffset];
      chunk.FromMemory.BufferLength = static_cast<ULONG>(copied);
      textOffset += copied;
    } else {
      Napi::TypedArray array = part.As<Napi::TypedArray>();
      Napi::ArrayBuffer backing = array.ArrayBuffer();
      chunk.FromMemory.pBuffer = static_cast<char*>(backing.Data()) + array.ByteOffset();
      chunk.FromMemory.BufferLength = static_cast<ULONG>(array.ByteLength());
      op->buffers.push_back(Napi::Persistent(part.As<Napi::Object>()));
    }
    if (chunk.FromMemory.BufferLength == 0) continue;
    *bytes += chunk.FromMemory.BufferLength;
    op->chunks.push_back(chunk);
  }
  return true;
}

}  // namespace httpsys
