// Request queue and URL group properties, as bytes JavaScript built
// (src/httpsys/properties.js, the one table of these calls): the addon knows no
// property structure, it copies the bytes into an aligned buffer, writes its queue
// handle or the address of a pointed-to structure where the call says, and passes
// exactly that many bytes. The `layouts` export gives the Windows SDK's sizes and
// offsets of those structures so the Wine suite can hold the table against them.
#pragma once

#include "http-api.h"

#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace httpsys {

// A string (or other buffer) a field points to: the addon writes its copy's address at `at`.
struct PointedData {
  int at = -1;
  std::vector<uint64_t> data;  // 8-aligned copy
};

struct PropertyCall {
  bool urlGroup = false;  // HttpSetUrlGroupProperty, else HttpSetRequestQueueProperty
  HTTP_SERVER_PROPERTY property = HttpServerQueueLengthProperty;
  std::string name;       // HTTP_SERVER_PROPERTY's name, for errors
  std::vector<uint64_t> data;     // 8-aligned copies
  std::vector<uint64_t> pointee;
  ULONG size = 0;
  ULONG pointeeSize = 0;
  int handleAt = -1;   // the queue handle goes here
  int pointerAt = -1;  // the address of pointee goes here
  std::vector<PointedData> pointers;  // more addresses: HTTP_SERVER_AUTHENTICATION_INFO's strings
};

// { call, property, name, data, handleAt, pointerAt, pointee, pointers } -> *out. false with a JS
// TypeError / RangeError pending (node's codes, naming `label`) when it is unusable.
bool ReadPropertyCall(Napi::Env env, const Napi::Value& value, const std::string& label, PropertyCall* out);

// The call, on `queue` (HttpSetRequestQueueProperty) or `group` (HttpSetUrlGroupProperty).
ULONG SetProperty(PropertyCall& call, HANDLE queue, HTTP_URL_GROUP_ID group);

void InitPropertyLayouts(Napi::Env env, Napi::Object exports);

}  // namespace httpsys
