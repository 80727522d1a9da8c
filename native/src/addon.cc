// httpsys_native: the HTTP Server API (HTTP.SYS) for node, through N-API so one
// binary serves every node version. Policy lives in src/queue/httpsys/;
// this side is a thin, non-blocking layer over the OS calls.
#include "cert-store.h"
#include "diagnostics.h"
#include "http-api.h"
#include "job.h"
#include "property-call.h"
#include "queue.h"
#include "service-config.h"
#include "service-host.h"
#include "win32-errors.h"

#include <napi.h>

namespace httpsys {

namespace {

// platform() -> { wine, features }: what this process may rely on.
Napi::Value Platform(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const Api& api = GetApi();
  Napi::Object out = Napi::Object::New(env);
  out.Set("wine", api.wineVersion ? Napi::Value(Napi::String::New(env, api.wineVersion)) : env.Null());
  Napi::Object features = Napi::Object::New(env);
  features.Set("cancel", Napi::Boolean::New(env, api.cancelHttpRequest != nullptr));
  features.Set("disconnect", Napi::Boolean::New(env, api.waitForDisconnect != nullptr || api.waitForDisconnectEx != nullptr));
  features.Set("streaming", Napi::Boolean::New(env, api.sendEntityBody));
  features.Set("queueProperties", Napi::Boolean::New(env, api.queueProperties));
  features.Set("updateServiceConfiguration", Napi::Boolean::New(env, api.updateServiceConfiguration != nullptr));
  features.Set("findUrlGroupId", Napi::Boolean::New(env, api.findUrlGroupId != nullptr));
  features.Set("delegateRequestEx", Napi::Boolean::New(env, api.delegateRequestEx));
  features.Set("queryRequestProperty", Napi::Boolean::New(env, api.queryRequestProperty != nullptr));
  features.Set("flushCache", Napi::Boolean::New(env, api.flushResponseCache != nullptr));
  features.Set("isFeatureSupported", Napi::Boolean::New(env, api.isFeatureSupported != nullptr));
  out.Set("features", features);
  return out;
}

// errors() -> { [code]: 'ERROR_...' }: the one Win32 code table.
Napi::Value Errors(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t count = 0;
  const Win32Name* table = Win32ErrorTable(&count);
  Napi::Object out = Napi::Object::New(env);
  for (size_t i = 0; i < count; ++i) out.Set(table[i].code, table[i].name);
  return out;
}

// events: { REQUEST: 1, ... }, the event types of Queue batches (queue.h).
Napi::Object Events(Napi::Env env) {
  Napi::Object out = Napi::Object::New(env);
#define HTTPSYS_EVENT_EXPORT(name, js, value) out.Set(#js, Napi::Number::New(env, value));
  HTTPSYS_EVENTS(HTTPSYS_EVENT_EXPORT)
#undef HTTPSYS_EVENT_EXPORT
  out.Freeze();
  return out;
}

// win32: { ERROR_ACCESS_DENIED: 5, ... }, the same table as errors() the other way round.
Napi::Object Win32Codes(Napi::Env env) {
  size_t count = 0;
  const Win32Name* table = Win32ErrorTable(&count);
  Napi::Object out = Napi::Object::New(env);
  for (size_t i = 0; i < count; ++i) out.Set(table[i].name, Napi::Number::New(env, table[i].code));
  out.Freeze();
  return out;
}

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("platform", Napi::Function::New(env, Platform, "platform"));
  exports.Set("errors", Napi::Function::New(env, Errors, "errors"));
  exports.Set("events", Events(env));
  exports.Set("win32", Win32Codes(env));
  exports.Set("Queue", Queue::Init(env));
  InitServiceConfig(env, exports);
  InitCertStore(env, exports);
  InitDiagnostics(env, exports);
  InitServiceHost(env, exports);
  InitJob(env, exports);
  InitPropertyLayouts(env, exports);
  return exports;
}

}  // namespace httpsys

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return httpsys::Init(env, exports); }

NODE_API_MODULE(httpsys_native, InitModule)
