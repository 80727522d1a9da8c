#include "property-call.h"

#include <cstddef>
#include <cstring>

namespace httpsys {

namespace {

// The table's layouts are x64's (src/httpsys/properties.js).
static_assert(sizeof(void*) == 8 && sizeof(HANDLE) == 8, "the property table lays out x64 structures");

constexpr size_t kMaxPropertyBytes = 256;
// what `pointers` may hold: HTTP.SYS's strings here are a realm or a domain (the config
// allows 255 characters: 512 bytes of UTF-16 with the NUL)
constexpr size_t kMaxPointedBytes = 1024;
constexpr uint32_t kMaxPointers = 4;

void Throw(Napi::Env env, bool range, const std::string& message) {
  Napi::Error error = range ? Napi::Error(Napi::RangeError::New(env, message))
                            : Napi::Error(Napi::TypeError::New(env, message));
  error.Set("code", Napi::String::New(env, range ? "ERR_OUT_OF_RANGE" : "ERR_INVALID_ARG_TYPE"));
  error.ThrowAsJavaScriptException();
}

bool ReadBytes(Napi::Env env, const Napi::Value& value, const std::string& label, std::vector<uint64_t>* out,
               ULONG* size, size_t max = kMaxPropertyBytes) {
  if (!value.IsBuffer()) {
    Throw(env, false, label + " must be a Buffer");
    return false;
  }
  auto bytes = value.As<Napi::Buffer<uint8_t>>();
  if (bytes.Length() == 0 || bytes.Length() > max) {
    Throw(env, true, label + " must hold 1 to " + std::to_string(max) + " bytes; got " +
                         std::to_string(bytes.Length()));
    return false;
  }
  out->assign((bytes.Length() + 7) / 8, 0);
  std::memcpy(out->data(), bytes.Data(), bytes.Length());
  *size = static_cast<ULONG>(bytes.Length());
  return true;
}

// -1, or where an 8-byte handle or pointer fits, 8-aligned, inside `size` bytes.
bool ReadSlot(Napi::Env env, const Napi::Object& from, const char* key, const std::string& label, ULONG size,
              int* out) {
  Napi::Value value = from.Get(key);
  if (value.IsUndefined() || value.IsNull()) return true;
  if (!value.IsNumber()) {
    Throw(env, false, label + "." + key + " must be a number");
    return false;
  }
  double at = value.As<Napi::Number>().DoubleValue();
  if (at == -1) return true;
  if (!(at >= 0 && at + 8 <= size) || at != static_cast<double>(static_cast<int>(at)) ||
      static_cast<int>(at) % 8 != 0) {
    Throw(env, true, label + "." + key + " must be -1 or an 8-aligned offset inside the data; got " +
                         value.ToString().Utf8Value());
    return false;
  }
  *out = static_cast<int>(at);
  return true;
}

// pointers: [{ at, data }] (absent: none), each at its own 8-aligned slot inside the
// data that neither the handle nor the pointee uses.
bool ReadPointers(Napi::Env env, const Napi::Object& o, const std::string& label, PropertyCall* out) {
  Napi::Value value = o.Get("pointers");
  if (value.IsUndefined() || value.IsNull()) return true;
  if (!value.IsArray() || value.As<Napi::Array>().Length() > kMaxPointers) {
    Throw(env, false, label + ".pointers must be an array of at most " + std::to_string(kMaxPointers) + " { at, data }");
    return false;
  }
  Napi::Array list = value.As<Napi::Array>();
  for (uint32_t i = 0; i < list.Length(); ++i) {
    std::string at = label + ".pointers[" + std::to_string(i) + "]";
    if (!list.Get(i).IsObject()) {
      Throw(env, false, at + " must be an object");
      return false;
    }
    Napi::Object entry = list.Get(i).As<Napi::Object>();
    PointedData pointed;
    if (!ReadSlot(env, entry, "at", at, out->size, &pointed.at)) return false;
    if (pointed.at < 0) {
      Throw(env, true, at + ".at must be an 8-aligned offset inside the data");
      return false;
    }
    bool taken = pointed.at == out->handleAt || pointed.at == out->pointerAt;
    for (const PointedData& other : out->pointers) taken = taken || other.at == pointed.at;
    if (taken) {
      Throw(env, true, at + ".at must be a slot of its own");
      return false;
    }
    ULONG size = 0;
    if (!ReadBytes(env, entry.Get("data"), at + ".data", &pointed.data, &size, kMaxPointedBytes)) return false;
    out->pointers.push_back(std::move(pointed));
  }
  return true;
}

}  // namespace

bool ReadPropertyCall(Napi::Env env, const Napi::Value& value, const std::string& label, PropertyCall* out) {
  if (!value.IsObject()) {
    Throw(env, false, label + " must be an object");
    return false;
  }
  Napi::Object o = value.As<Napi::Object>();
  Napi::Value call = o.Get("call");
  std::string callName = call.IsString() ? call.As<Napi::String>().Utf8Value() : "";
  if (callName != "HttpSetRequestQueueProperty" && callName != "HttpSetUrlGroupProperty") {
    Throw(env, false, label + ".call must be 'HttpSetRequestQueueProperty' or 'HttpSetUrlGroupProperty'");
    return false;
  }
  out->urlGroup = callName == "HttpSetUrlGroupProperty";
  Napi::Value property = o.Get("property");
  double id = property.IsNumber() ? property.As<Napi::Number>().DoubleValue() : -1;
  if (!(id >= 0 && id <= 31) || id != static_cast<double>(static_cast<int>(id))) {
    Throw(env, !property.IsNumber() ? false : true, label + ".property must be an HTTP_SERVER_PROPERTY (0 to 31)");
    return false;
  }
  out->property = static_cast<HTTP_SERVER_PROPERTY>(static_cast<int>(id));
  Napi::Value name = o.Get("name");
  out->name = name.IsString() ? name.As<Napi::String>().Utf8Value() : "property " + std::to_string(static_cast<int>(id));
  if (!ReadBytes(env, o.Get("data"), label + ".data", &out->data, &out->size)) return false;
  if (!ReadSlot(env, o, "handleAt", label, out->size, &out->handleAt)) return false;
  if (!ReadSlot(env, o, "pointerAt", label, out->size, &out->pointerAt)) return false;
  if (out->handleAt >= 0 && out->handleAt == out->pointerAt) {
    Throw(env, true, label + ".handleAt and .pointerAt must differ");
    return false;
  }
  if (out->pointerAt >= 0 && !ReadBytes(env, o.Get("pointee"), label + ".pointee", &out->pointee, &out->pointeeSize)) {
    return false;
  }
  return ReadPointers(env, o, label, out);
}

ULONG SetProperty(PropertyCall& call, HANDLE queue, HTTP_URL_GROUP_ID group) {
  auto* bytes = reinterpret_cast<unsigned char*>(call.data.data());
  if (call.handleAt >= 0) std::memcpy(bytes + call.handleAt, &queue, sizeof(queue));
  if (call.pointerAt >= 0) {
    void* target = call.pointee.data();
    std::memcpy(bytes + call.pointerAt, &target, sizeof(target));
  }
  for (PointedData& pointed : call.pointers) {
    void* target = pointed.data.data();
    std::memcpy(bytes + pointed.at, &target, sizeof(target));
  }
  if (call.urlGroup) return HttpSetUrlGroupProperty(group, call.property, bytes, call.size);
  return HttpSetRequestQueueProperty(queue, call.property, bytes, call.size, 0, nullptr);
}

// layouts: { properties: { HttpServerStateProperty: 5, ... }, structs: { NAME: { size,
// fields: { Field: offset } } } }, from the Windows SDK's http.h as this addon was built
// with it: what the Wine suite holds src/httpsys/properties.js against.
void InitPropertyLayouts(Napi::Env env, Napi::Object exports) {
  Napi::Object properties = Napi::Object::New(env);
#define HTTPSYS_PROPERTY(name) properties.Set(#name, Napi::Number::New(env, name));
  HTTPSYS_PROPERTY(HttpServerQosProperty)
  HTTPSYS_PROPERTY(HttpServerTimeoutsProperty)
  HTTPSYS_PROPERTY(HttpServerQueueLengthProperty)
  HTTPSYS_PROPERTY(HttpServerStateProperty)
  HTTPSYS_PROPERTY(HttpServer503VerbosityProperty)
  HTTPSYS_PROPERTY(HttpServerBindingProperty)
  HTTPSYS_PROPERTY(HttpServerAuthenticationProperty)
#undef HTTPSYS_PROPERTY

  Napi::Object structs = Napi::Object::New(env);
  Napi::Object fields;
  auto add = [&](const char* name, size_t size) {
    Napi::Object s = Napi::Object::New(env);
    s.Set("size", Napi::Number::New(env, static_cast<double>(size)));
    fields = Napi::Object::New(env);
    s.Set("fields", fields);
    structs.Set(name, s);
  };
#define HTTPSYS_FIELD(type, field) fields.Set(#field, Napi::Number::New(env, static_cast<double>(offsetof(type, field))));
  add("ULONG", sizeof(ULONG));
  add("HTTP_ENABLED_STATE", sizeof(HTTP_ENABLED_STATE));
  add("HTTP_503_RESPONSE_VERBOSITY", sizeof(HTTP_503_RESPONSE_VERBOSITY));
  add("HTTP_STATE_INFO", sizeof(HTTP_STATE_INFO));
  HTTPSYS_FIELD(HTTP_STATE_INFO, Flags)
  HTTPSYS_FIELD(HTTP_STATE_INFO, State)
  add("HTTP_TIMEOUT_LIMIT_INFO", sizeof(HTTP_TIMEOUT_LIMIT_INFO));
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, Flags)
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, EntityBody)
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, DrainEntityBody)
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, RequestQueue)
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, IdleConnection)
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, HeaderWait)
  HTTPSYS_FIELD(HTTP_TIMEOUT_LIMIT_INFO, MinSendRate)
  add("HTTP_QOS_SETTING_INFO", sizeof(HTTP_QOS_SETTING_INFO));
  HTTPSYS_FIELD(HTTP_QOS_SETTING_INFO, QosType)
  HTTPSYS_FIELD(HTTP_QOS_SETTING_INFO, QosSetting)
  add("HTTP_CONNECTION_LIMIT_INFO", sizeof(HTTP_CONNECTION_LIMIT_INFO));
  HTTPSYS_FIELD(HTTP_CONNECTION_LIMIT_INFO, Flags)
  HTTPSYS_FIELD(HTTP_CONNECTION_LIMIT_INFO, MaxConnections)
  add("HTTP_BINDING_INFO", sizeof(HTTP_BINDING_INFO));
  HTTPSYS_FIELD(HTTP_BINDING_INFO, Flags)
  HTTPSYS_FIELD(HTTP_BINDING_INFO, RequestQueueHandle)
  add("HTTP_SERVER_AUTHENTICATION_INFO", sizeof(HTTP_SERVER_AUTHENTICATION_INFO));
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, Flags)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, AuthSchemes)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, ReceiveMutualAuth)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, ReceiveContextHandle)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, DisableNTLMCredentialCaching)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, ExFlags)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, DigestParams.DomainNameLength)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, DigestParams.DomainName)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, DigestParams.RealmLength)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, DigestParams.Realm)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, BasicParams.RealmLength)
  HTTPSYS_FIELD(HTTP_SERVER_AUTHENTICATION_INFO, BasicParams.Realm)
#undef HTTPSYS_FIELD

  Napi::Object layouts = Napi::Object::New(env);
  layouts.Set("properties", properties);
  layouts.Set("structs", structs);
  exports.Set("layouts", layouts);
}

}  // namespace httpsys
