#include "queue.h"

#include "response-build.h"
#include "win32-errors.h"

#include <sddl.h>

#include <algorithm>
#include <cstring>

namespace httpsys {

namespace {

const HTTPAPI_VERSION kVersion2 = HTTPAPI_VERSION_2;

// contract.js flags
constexpr uint32_t kResponseMore = 1;
constexpr uint32_t kResponseClose = 2;
constexpr uint32_t kResponseOpaque = 4;

uint32_t GetUint(const Napi::Object& options, const char* key, uint32_t fallback) {
  Napi::Value value = options.Get(key);
  return value.IsNumber() ? value.As<Napi::Number>().Uint32Value() : fallback;
}

bool GetBool(const Napi::Object& options, const char* key, bool fallback) {
  Napi::Value value = options.Get(key);
  return value.IsBoolean() ? value.As<Napi::Boolean>().Value() : fallback;
}

std::string GetString(const Napi::Object& options, const char* key) {
  Napi::Value value = options.Get(key);
  return value.IsString() ? value.As<Napi::String>().Utf8Value() : std::string();
}

// Hot-path methods report Win32 codes as numbers; JS decides what they mean.
Napi::Value Code(Napi::Env env, ULONG code) { return Napi::Number::New(env, code); }

}  // namespace

Napi::Function Queue::Init(Napi::Env env) {
  return DefineClass(env, "Queue", {
      InstanceMethod<&Queue::Start>("start"),
      InstanceMethod<&Queue::AddUrl>("addUrl"),
      InstanceMethod<&Queue::RemoveUrl>("removeUrl"),
      InstanceMethod<&Queue::SetPropertyJs>("setProperty"),
      InstanceMethod<&Queue::FlushCache>("flushCache"),
      InstanceMethod<&Queue::Respond>("respond"),
      InstanceMethod<&Queue::SendBody>("sendBody"),
      InstanceMethod<&Queue::ReadBody>("readBody"),
      InstanceMethod<&Queue::Cancel>("cancel"),
      InstanceMethod<&Queue::StopReceiving>("stopReceiving"),
      InstanceMethod<&Queue::Close>("close"),
      InstanceMethod<&Queue::Ref>("ref"),
      InstanceMethod<&Queue::Unref>("unref"),
      InstanceMethod<&Queue::Info>("info"),
      InstanceMethod<&Queue::QueryTokenUser>("tokenUser"),
      InstanceMethod<&Queue::QueryTokenGroups>("tokenGroups"),
      InstanceMethod<&Queue::CloseToken>("closeToken"),
  });
}

// new Queue(options)
//   options.mode      'create' | 'open' | 'controller'
//   options.name      queue name ('' = anonymous; required for open)
//   options.urls      prefixes to register
//   options.sddl      security descriptor of a created queue
//   options.properties the property calls (ReadProperties), bytes and all, built by
//                     src/httpsys/properties.js
//   options.receives, options.bufferSize, options.bodyChunk, options.bufferData, options.watchDisconnect
Queue::Queue(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Queue>(info) {
  Napi::Env env = info.Env();
  env_ = env;
  if (!info[0].IsObject()) {
    Napi::TypeError::New(env, "options must be an object").ThrowAsJavaScriptException();
    return;
  }
  Napi::Object options = info[0].As<Napi::Object>();
  std::string mode = GetString(options, "mode");
  mode_ = mode == "open" ? Mode::Open : mode == "controller" ? Mode::Controller : Mode::Create;
  name_ = GetString(options, "name");
  bufferData_ = GetBool(options, "bufferData", false);
  watchDisconnect_ = GetBool(options, "watchDisconnect", true);
  bufferSize_ = std::max<uint32_t>(GetUint(options, "bufferSize", 4096), sizeof(HTTP_REQUEST) + 256);
  bodyChunk_ = std::max<uint32_t>(GetUint(options, "bodyChunk", 65536), 1024);
  napi_add_env_cleanup_hook(env, EnvCleanup, this);
  if (!ReadProperties(env, options)) return;  // before anything exists: nothing to undo

  ULONG rc = InitServer();
  if (rc != NO_ERROR) {
    ThrowWin32(env, rc, "HttpInitialize");
    return;
  }

  std::wstring wideName = Widen(name_);
  if (mode_ == Mode::Open) {
    rc = HttpCreateRequestQueue(kVersion2, wideName.c_str(), nullptr, kQueueFlagOpenExisting, &queue_);
    if (rc != NO_ERROR) {
      ThrowWin32(env, rc, "HttpCreateRequestQueue");
      return;
    }
  } else {
    rc = CreateQueue(wideName, GetString(options, "sddl"));
    if (rc != NO_ERROR) {
      ThrowWin32(env, rc, "HttpCreateRequestQueue");
      return;
    }
  }
  // A queue opened by name gets what JS passes too (nothing: only the creator may set
  // a queue's properties).
  rc = ApplyQueueProperties();
  if (rc != NO_ERROR) {
    std::string property = failedProperty_;
    CloseHandles();
    ThrowWin32(env, rc, "HttpSetRequestQueueProperty", "", property);
    return;
  }

  Napi::Value urls = options.Get("urls");
  if (urls.IsArray()) {
    Napi::Array list = urls.As<Napi::Array>();
    for (uint32_t i = 0; i < list.Length(); ++i) {
      std::string url = list.Get(i).ToString().Utf8Value();
      rc = RegisterUrl(Widen(url));
      if (rc != NO_ERROR) {
        std::string property = failedProperty_;
        CloseHandles();
        ThrowWin32(env, rc, failedCall_, url, property);
        return;
      }
    }
  }

  if (mode_ == Mode::Controller) return;

  port_ = CreateIoCompletionPort(queue_, nullptr, kOpKey, 1);
  if (!port_) {
    rc = GetLastError();
    CloseHandles();
    ThrowWin32(env, rc, "CreateIoCompletionPort");
    return;
  }
  // A call that succeeds at once is completed inline; no packet follows it.
  skipOnSuccess_ = SetFileCompletionNotificationModes(
                       queue_, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS | FILE_SKIP_SET_EVENT_ON_HANDLE) != FALSE;

  uint32_t receives = std::min<uint32_t>(std::max<uint32_t>(GetUint(options, "receives", 8), 1), 256);
  for (uint32_t i = 0; i < receives; ++i) {
    auto* slot = new ReceiveSlot();
    slot->buffer.Allocate(bufferSize_);
    receives_.push_back(slot);
  }
}

Queue::~Queue() {
  napi_remove_env_cleanup_hook(env_, EnvCleanup, this);
  StopThread();
  CloseHandles();
  // After a port failure the kernel may still write into receives it cancelled.
  if (!portFailed_) {
    for (ReceiveSlot* slot : receives_) {
      delete slot->issue;
      delete slot;
    }
  }
  // Their calls completed at once: the kernel is done with them.
  for (ReceiveOp* op : orphans_) delete op;
  for (Event& event : events_) {
    if (event.op && event.op->kind == OpKind::Receive) continue;
    delete event.op;
  }
}

ULONG Queue::CreateQueue(const std::wstring& name, const std::string& sddl) {
  SECURITY_ATTRIBUTES attributes = {};
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  if (!sddl.empty()) {
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(Widen(sddl).c_str(), SDDL_REVISION_1,
                                                              &descriptor, nullptr)) {
      return GetLastError();
    }
    attributes.nLength = sizeof(attributes);
    attributes.lpSecurityDescriptor = descriptor;
  }
  ULONG flags = mode_ == Mode::Controller ? kQueueFlagController : 0;
  ULONG rc = HttpCreateRequestQueue(kVersion2, name.empty() ? nullptr : name.c_str(),
                                    descriptor ? &attributes : nullptr, flags, &queue_);
  if (descriptor) LocalFree(descriptor);
  return rc;
}

// options.properties: [{ call, property, name, data, handleAt, pointerAt, pointee }].
// false with a JS exception pending when one is unusable.
bool Queue::ReadProperties(Napi::Env env, const Napi::Object& options) {
  Napi::Value value = options.Get("properties");
  if (value.IsUndefined() || value.IsNull()) return true;
  if (!value.IsArray()) {
    Napi::Error error = Napi::TypeError::New(env, "options.properties must be an array");
    error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
    error.ThrowAsJavaScriptException();
    return false;
  }
  Napi::Array list = value.As<Napi::Array>();
  for (uint32_t i = 0; i < list.Length(); ++i) {
    PropertyCall call;
    if (!ReadPropertyCall(env, list.Get(i), "options.properties[" + std::to_string(i) + "]", &call)) return false;
    (call.urlGroup ? groupProperties_ : queueProperties_).push_back(std::move(call));
  }
  Napi::Value urls = options.Get("urls");
  if (urls.IsArray() && urls.As<Napi::Array>().Length() > 0) return CheckBinding(env);
  return true;
}

// A URL group that is not bound to this queue would hold its URLs for nobody: the
// binding is one of the calls JS passes, so its absence is refused, not patched here.
bool Queue::CheckBinding(Napi::Env env) {
  for (const PropertyCall& call : groupProperties_) {
    if (call.property == HttpServerBindingProperty && call.handleAt >= 0) return true;
  }
  Napi::Error error = Napi::TypeError::New(
      env, "options.properties must hold the HttpServerBindingProperty call (queueSetup() in "
           "src/httpsys/properties.js) to register URLs");
  error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  error.ThrowAsJavaScriptException();
  return false;
}

ULONG Queue::ApplyQueueProperties() {
  for (PropertyCall& call : queueProperties_) {
    ULONG rc = SetProperty(call, queue_, HTTP_NULL_ID);
    if (rc != NO_ERROR) {
      failedProperty_ = call.name;
      return rc;
    }
  }
  return NO_ERROR;
}

ULONG Queue::NewUrlGroup(HTTP_URL_GROUP_ID* group) {
  ULONG rc;
  if (session_ == HTTP_NULL_ID) {
    failedCall_ = "HttpCreateServerSession";
    rc = HttpCreateServerSession(kVersion2, &session_, 0);
    if (rc != NO_ERROR) return rc;
  }
  failedCall_ = "HttpCreateUrlGroup";
  rc = HttpCreateUrlGroup(session_, group, 0);
  if (rc != NO_ERROR) return rc;
  groups_.push_back(*group);
  // JS ends the list with the binding to this queue (before any URL is added, as ASP.NET
  // does: an add then reports a conflict at once, under Wine too).
  failedCall_ = "HttpSetUrlGroupProperty";
  for (PropertyCall& call : groupProperties_) {
    rc = SetProperty(call, queue_, *group);
    if (rc != NO_ERROR) {
      failedProperty_ = call.name;
      return rc;
    }
  }
  return NO_ERROR;
}

// failedCall_ names the call that failed, for the error JS gets.
ULONG Queue::RegisterUrl(const std::wstring& url) {
  HTTP_URL_GROUP_ID group = HTTP_NULL_ID;
  ULONG rc;
  failedProperty_.clear();
  if (groups_.empty() || groupFull_) {
    rc = NewUrlGroup(&group);
    if (rc != NO_ERROR) return rc;
    groupFull_ = false;
  } else {
    group = groups_.back();
  }
  failedCall_ = "HttpAddUrlToUrlGroup";
  failedProperty_.clear();
  rc = HttpAddUrlToUrlGroup(group, url.c_str(), 0, 0);
  if (rc == ERROR_CALL_NOT_IMPLEMENTED) {
    // Wine 8 holds one URL per group; a group per prefix works everywhere.
    rc = NewUrlGroup(&group);
    if (rc != NO_ERROR) return rc;
    failedCall_ = "HttpAddUrlToUrlGroup";
    rc = HttpAddUrlToUrlGroup(group, url.c_str(), 0, 0);
    groupFull_ = true;
  }
  if (rc == ERROR_ALREADY_EXISTS && mode_ == Mode::Open && GetApi().findUrlGroupId) {
    // A worker attached to its controller's queue: the prefix may already be
    // registered on this very queue, which is what it asked for.
    HTTP_URL_GROUP_ID owner = HTTP_NULL_ID;
    if (GetApi().findUrlGroupId(url.c_str(), queue_, &owner) == NO_ERROR) return NO_ERROR;
  }
  if (rc == NO_ERROR) urls_.emplace_back(group, url);
  return rc;
}

void Queue::CloseHandles() {
  if (closed_.exchange(true)) return;
  // Explicit removal: Wine does not unregister URLs when their group closes.
  for (auto& entry : urls_) HttpRemoveUrlFromUrlGroup(entry.first, entry.second.c_str(), 0);
  urls_.clear();
  for (HTTP_URL_GROUP_ID group : groups_) HttpCloseUrlGroup(group);
  groups_.clear();
  if (session_ != HTTP_NULL_ID) HttpCloseServerSession(session_);
  session_ = HTTP_NULL_ID;
  if (queue_) HttpCloseRequestQueue(queue_);
  queue_ = nullptr;
  if (port_) CloseHandle(port_);
  port_ = nullptr;
}

void Queue::ThrowWin32(Napi::Env env, ULONG code, const char* syscall, const std::string& prefix,
                       const std::string& property) {
  const char* name = Win32ErrorName(code);
  std::string message = std::string(syscall) + (property.empty() ? "" : "(" + property + ")") + " failed: " +
                        (name ? name : "Win32 error") + " (" + std::to_string(code) + ")";
  if (!prefix.empty()) message += " for " + prefix;
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("win32", Napi::Number::New(env, code));
  error.Set("win32Name", name ? Napi::Value(Napi::String::New(env, name)) : env.Undefined());
  error.Set("syscall", Napi::String::New(env, syscall));
  if (!prefix.empty()) error.Set("prefix", Napi::String::New(env, prefix));
  if (!property.empty()) error.Set("property", Napi::String::New(env, property));
  error.ThrowAsJavaScriptException();
}

// ---------------------------------------------------------------------------
// JS methods

// start(onEvents): begin receiving; batches arrive as onEvents([type, id, arg, ...]).
Napi::Value Queue::Start(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (mode_ == Mode::Controller || started_ || closing_ || !queue_) {
    Napi::Error::New(env, "this queue cannot start receiving").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (!info[0].IsFunction()) {
    Napi::TypeError::New(env, "start(onEvents) needs a function").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  tsfn_ = Napi::TypedThreadSafeFunction<Queue, void, CallJs>::New(
      env, info[0].As<Napi::Function>(), "httpsys-queue", 0, 1, this, OnTsfnFinalize, static_cast<void*>(nullptr));
  // Alive while the thread runs and until the thread-safe function is finalized
  // (its queued calls use this object).
  Napi::ObjectWrap<Queue>::Ref();
  refHeld_ = true;
  started_ = true;
  // Suspended until the receives are posted: they are all waiting before start()
  // returns, so the attach resolves (and the app says it listens) only once the queue
  // takes requests. On Windows a request that comes first just waits in the kernel;
  // Wine's http.sys matches a receive posted after requests arrived only against the
  // newest connection and starves the rest (docs/wine.md 2.7). The IO thread owns the
  // slots from ResumeThread on (a full barrier).
  thread_ = CreateThread(nullptr, 0, ThreadMain, this, CREATE_SUSPENDED, nullptr);
  if (!thread_) {
    ULONG rc = GetLastError();
    started_ = false;
    released_ = true;
    tsfn_.Release();  // OnTsfnFinalize drops the reference
    ThrowWin32(env, rc, "CreateThread");
    return env.Undefined();
  }
  for (ReceiveSlot* slot : receives_) PostReceive(slot);
  ResumeThread(thread_);
  return env.Undefined();
}

Napi::Value Queue::AddUrl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string url = info[0].ToString().Utf8Value();
  if (closing_ || !queue_) return Code(env, ERROR_INVALID_HANDLE);
  if (!CheckBinding(env)) return env.Undefined();
  ULONG rc = RegisterUrl(Widen(url));
  if (rc != NO_ERROR) ThrowWin32(env, rc, failedCall_, url, failedProperty_);
  return env.Undefined();
}

Napi::Value Queue::RemoveUrl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::wstring url = Widen(info[0].ToString().Utf8Value());
  for (auto it = urls_.begin(); it != urls_.end(); ++it) {
    if (it->second != url) continue;
    ULONG rc = HttpRemoveUrlFromUrlGroup(it->first, url.c_str(), 0);
    urls_.erase(it);
    return Code(env, rc);
  }
  return Code(env, ERROR_FILE_NOT_FOUND);
}

// setProperty(call) -> Win32 code: one property call (src/httpsys/properties.js)
// on this queue, or on each of its URL groups. The controller turns an app's queue off
// with it while nothing can serve it (errored, stopped by command): HTTP.SYS then answers
// its requests 503 at once, as IIS's stopped application pools do, instead of holding
// them until the queue's timeout. Bad arguments throw.
Napi::Value Queue::SetPropertyJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PropertyCall call;
  if (!ReadPropertyCall(env, info[0], "call", &call)) return env.Undefined();
  if (closing_ || !queue_) return Code(env, ERROR_INVALID_HANDLE);
  if (!call.urlGroup) return Code(env, SetProperty(call, queue_, HTTP_NULL_ID));
  ULONG rc = NO_ERROR;
  for (HTTP_URL_GROUP_ID group : groups_) {
    ULONG r = SetProperty(call, queue_, group);
    if (r != NO_ERROR && rc == NO_ERROR) rc = r;
  }
  return Code(env, rc);
}

// flushCache([prefixes]) -> Win32 code: HttpFlushResponseCache, recursively, under each
// of `prefixes`, or without them under every prefix this queue registered. A worker
// passes its queue's prefixes (it opened the queue and registered none): HTTP.SYS is
// taken to drop only the entries the calling process cached, so the flush relied on
// for a worker's entries is the worker's own (docs/output-cache.md "Invalidation on
// HTTP.SYS"). Synchronous: it completes in the kernel, without I/O.
Napi::Value Queue::FlushCache(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (closing_ || !queue_) return Code(env, ERROR_INVALID_HANDLE);
  auto flush = GetApi().flushResponseCache;
  if (flush == nullptr) return Code(env, ERROR_CALL_NOT_IMPLEMENTED);
  std::vector<std::wstring> prefixes;
  if (info.Length() > 0 && info[0].IsArray()) {
    Napi::Array list = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < list.Length(); i++) prefixes.push_back(Widen(list.Get(i).ToString().Utf8Value()));
  } else {
    for (const auto& url : urls_) prefixes.push_back(url.second);
  }
  ULONG rc = NO_ERROR;
  for (const auto& prefix : prefixes) {
    ULONG r = flush(queue_, prefix.c_str(), HTTP_FLUSH_RESPONSE_FLAG_RECURSIVE, nullptr);
    if (r != NO_ERROR && rc == NO_ERROR) rc = r;
  }
  return Code(env, rc);
}

Queue::RequestState* Queue::Find(double id) {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

// The flag a response that closes its connection goes out with. On HTTP/2 and
// HTTP/3 the connection carries other streams: it is asked to wind down with a
// GOAWAY (HTTP_SEND_RESPONSE_FLAG_GOAWAY) instead of being cut; an HTTP.SYS that
// predates that flag gets neither (see IssueSend).
ULONG Queue::CloseFlag(const RequestState& state) const {
  if (!state.multiplexed) return HTTP_SEND_RESPONSE_FLAG_DISCONNECT;
  return goAwayRejected_ ? 0 : kSendFlagGoAway;
}

// One HttpSendHttpResponse (withHead) or HttpSendResponseEntityBody for `op`.
// Whatever HTTP.SYS answers, the outcome reaches JS as exactly one SENT event
// (a synchronous result goes out with the next batch), so the call itself
// always counts as issued.
ULONG Queue::IssueSend(SendOp* op, ULONG flags, HTTP_CACHE_POLICY* cache, bool withHead) {
  auto call = [&](ULONG sendFlags) {
    Track(op);
    if (withHead) {
      return HttpSendHttpResponse(queue_, op->requestId, sendFlags, reinterpret_cast<PHTTP_RESPONSE>(&op->response),
                                  cache, nullptr, nullptr, 0, &op->ov, nullptr);
    }
    return HttpSendResponseEntityBody(queue_, op->requestId, sendFlags, static_cast<USHORT>(op->chunks.size()),
                                      op->chunks.empty() ? nullptr : op->chunks.data(), nullptr, nullptr, 0, &op->ov,
                                      nullptr);
  };
  ULONG rc = call(flags);
  if (rc == ERROR_INVALID_PARAMETER && (flags & kSendFlagGoAway)) {
    // An HTTP.SYS older than the GOAWAY flag rejects it: send without, as
    // ASP.NET Core does (Response.SendHeaders), and stop asking.
    Untrack(&op->ov);
    op->ov = OVERLAPPED();
    rc = call(flags & ~kSendFlagGoAway);
    if (rc != ERROR_INVALID_PARAMETER) goAwayRejected_ = true;
  }
  ++sendsInFlight_;
  Issued(op, rc);
  return NO_ERROR;
}

// respond(id, status, reason, rawHeaders, body, flags, cacheTtl) -> Win32 code.
// 0: HTTP.SYS was called and exactly one SENT event follows with the outcome.
// Otherwise nothing was sent and no event follows: 995 the queue is closing,
// 1229 no such request (unknown, answered, or ended). Bad arguments throw.
Napi::Value Queue::Respond(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double id = info[0].As<Napi::Number>().DoubleValue();
  RequestState* state = Find(id);
  if (closing_) return Code(env, ERROR_OPERATION_ABORTED);
  if (!state) return Code(env, ERROR_CONNECTION_INVALID);
  uint32_t flags = info[5].IsNumber() ? info[5].As<Napi::Number>().Uint32Value() : 0;
  uint32_t ttl = info[6].IsNumber() ? info[6].As<Napi::Number>().Uint32Value() : 0;
  bool opaque = (flags & kResponseOpaque) != 0;
  bool more = (flags & kResponseMore) != 0 || opaque;

  auto* op = new SendOp();
  op->id = id;
  op->requestId = state->requestId;
  op->final = !more;
  uint32_t status = info[1].As<Napi::Number>().Uint32Value();
  size_t bytes = 0;
  // Wine ignores pResponseInfo, so repeated known headers go as unknown ones there.
  bool multiKnown = GetApi().wineVersion == nullptr;
  if (!BuildResponseHead(env, op, status, info[2], info[3], opaque, multiKnown) ||
      !BuildBodyChunks(env, op, info[4], &bytes)) {
    delete op;
    return env.Undefined();
  }
  op->response.EntityChunkCount = static_cast<USHORT>(op->chunks.size());
  op->response.pEntityChunks = op->chunks.empty() ? nullptr : op->chunks.data();

  ULONG sendFlags = 0;
  // MORE_DATA with DISCONNECT (or GOAWAY) is undefined: the final sendBody carries the close.
  if (more) sendFlags |= HTTP_SEND_RESPONSE_FLAG_MORE_DATA;
  else if (flags & kResponseClose) sendFlags |= CloseFlag(*state);
  if (opaque) sendFlags |= kSendFlagOpaque;
  if (bufferData_) sendFlags |= HTTP_SEND_RESPONSE_FLAG_BUFFER_DATA;
  HTTP_CACHE_POLICY* cache = nullptr;
  if (ttl > 0) {
    op->cachePolicy.Policy = HttpCachePolicyTimeToLive;
    op->cachePolicy.SecondsToLive = ttl;
    cache = &op->cachePolicy;
  }
  state->responded = true;
  if (op->final) requests_.erase(id);
  return Code(env, IssueSend(op, sendFlags, cache, true));
}

// sendBody(id, body, flags) -> Win32 code, as respond(); also 120 where
// HttpSendResponseEntityBody is unusable (Wine), with no event.
Napi::Value Queue::SendBody(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double id = info[0].As<Napi::Number>().DoubleValue();
  RequestState* state = Find(id);
  if (closing_) return Code(env, ERROR_OPERATION_ABORTED);
  if (!state) return Code(env, ERROR_CONNECTION_INVALID);
  if (!GetApi().sendEntityBody) return Code(env, ERROR_CALL_NOT_IMPLEMENTED);
  uint32_t flags = info[2].IsNumber() ? info[2].As<Napi::Number>().Uint32Value() : 0;

  auto* op = new SendOp();
  op->id = id;
  op->requestId = state->requestId;
  op->final = (flags & kResponseMore) == 0;
  size_t bytes = 0;
  if (!BuildBodyChunks(env, op, info[1], &bytes)) {
    delete op;
    return env.Undefined();
  }
  ULONG sendFlags = 0;
  if (!op->final) sendFlags |= HTTP_SEND_RESPONSE_FLAG_MORE_DATA;
  else if (flags & kResponseClose) sendFlags |= CloseFlag(*state);
  if (bufferData_) sendFlags |= HTTP_SEND_RESPONSE_FLAG_BUFFER_DATA;
  if (op->final) requests_.erase(id);
  return Code(env, IssueSend(op, sendFlags, nullptr, false));
}

// readBody(id) -> Win32 code; one read of up to bodyChunk bytes at a time.
Napi::Value Queue::ReadBody(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double id = info[0].As<Napi::Number>().DoubleValue();
  RequestState* state = Find(id);
  if (closing_) return Code(env, ERROR_OPERATION_ABORTED);
  if (!state) return Code(env, ERROR_CONNECTION_INVALID);
  if (state->reading) return Code(env, NO_ERROR);
  auto* op = new BodyOp();
  op->id = id;
  op->size = bodyChunk_;
  op->data.reset(new char[bodyChunk_]);
  state->reading = true;
  Track(op);
  ULONG rc = HttpReceiveRequestEntityBody(queue_, state->requestId, 0, op->data.get(), op->size, nullptr, &op->ov);
  Issued(op, rc);
  return Code(env, rc == ERROR_IO_PENDING ? NO_ERROR : rc);
}

// HttpCancelHttpRequest: the client's connection is reset (HTTP/1.x) or its
// stream (HTTP/2). ERROR_NOT_SUPPORTED where the call is missing or a stub (Wine).
ULONG Queue::CancelRequest(HTTP_REQUEST_ID requestId, double id) {
  CancelHttpRequestFn cancel = GetApi().cancelHttpRequest;
  if (!cancel) return ERROR_NOT_SUPPORTED;
  if (closing_ || closed_ || !queue_) return ERROR_OPERATION_ABORTED;
  auto* op = new CancelOp();
  op->id = id;
  Track(op);
  ULONG rc = cancel(queue_, requestId, &op->ov);
  Issued(op, rc);
  return rc == ERROR_IO_PENDING ? NO_ERROR : rc;
}

// cancel(id) -> Win32 code; ERROR_NOT_SUPPORTED where HttpCancelHttpRequest is
// missing or a stub (Wine): the caller then ends the request another way.
Napi::Value Queue::Cancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double id = info[0].As<Napi::Number>().DoubleValue();
  RequestState* state = Find(id);
  if (!state || closing_) return Code(env, NO_ERROR);
  if (!GetApi().cancelHttpRequest) {
    // The caller ends an unanswered request with a closing response (which needs
    // the entry); one already answered in part has nothing left to send.
    if (state->responded) requests_.erase(id);
    return Code(env, ERROR_NOT_SUPPORTED);
  }
  HTTP_REQUEST_ID requestId = state->requestId;
  requests_.erase(id);
  return Code(env, CancelRequest(requestId, id));
}

Napi::Value Queue::StopReceiving(const Napi::CallbackInfo& info) {
  if (started_ && !closing_ && port_) PostQueuedCompletionStatus(port_, 0, kCommandKey, reinterpret_cast<LPOVERLAPPED>(kCommandStop));
  return info.Env().Undefined();
}

Napi::Value Queue::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (closing_.exchange(true)) return env.Undefined();
  if (started_) {
    PostQueuedCompletionStatus(port_, 0, kCommandKey, reinterpret_cast<LPOVERLAPPED>(kCommandClose));
  } else {
    CloseHandles();  // never received: nothing is in flight
  }
  return env.Undefined();
}

Napi::Value Queue::Ref(const Napi::CallbackInfo& info) {
  if (started_ && !released_) tsfn_.Ref(info.Env());
  return info.Env().Undefined();
}

Napi::Value Queue::Unref(const Napi::CallbackInfo& info) {
  if (started_ && !released_) tsfn_.Unref(info.Env());
  return info.Env().Undefined();
}

Napi::Value Queue::Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("mode", mode_ == Mode::Open ? "open" : mode_ == Mode::Controller ? "controller" : "create");
  out.Set("name", name_);
  Napi::Array urls = Napi::Array::New(env, urls_.size());
  for (size_t i = 0; i < urls_.size(); ++i) urls.Set(static_cast<uint32_t>(i), Narrow(urls_[i].second.c_str()));
  out.Set("urls", urls);
  out.Set("receives", Napi::Number::New(env, static_cast<double>(receives_.size())));
  out.Set("skipCompletionPortOnSuccess", Napi::Boolean::New(env, skipOnSuccess_));
  out.Set("inFlight", Napi::Number::New(env, static_cast<double>(requests_.size())));
  out.Set("sendsInFlight", Napi::Number::New(env, static_cast<double>(sendsInFlight_)));
  out.Set("tokens", Napi::Number::New(env, static_cast<double>(tokens_.size())));
  return out;
}

// tokenUser(token), tokenGroups(token) -> token.h's answers; { code: 6 } for a token
// number this queue does not hold (closed, or never given). closeToken(token) -> whether
// it held it. The number is the request's `auth.token` (RequestToJs).
Napi::Value Queue::QueryTokenUser(const Napi::CallbackInfo& info) {
  HANDLE token = info[0].IsNumber() ? tokens_.Find(info[0].As<Napi::Number>().DoubleValue()) : nullptr;
  return TokenUserJs(info.Env(), token);
}

Napi::Value Queue::QueryTokenGroups(const Napi::CallbackInfo& info) {
  HANDLE token = info[0].IsNumber() ? tokens_.Find(info[0].As<Napi::Number>().DoubleValue()) : nullptr;
  return TokenGroupsJs(info.Env(), token);
}

Napi::Value Queue::CloseToken(const Napi::CallbackInfo& info) {
  bool held = info[0].IsNumber() && tokens_.Close(info[0].As<Napi::Number>().DoubleValue());
  return Napi::Boolean::New(info.Env(), held);
}

// ---------------------------------------------------------------------------
// Operations issued from the JS thread

void Queue::Issued(Op* op, ULONG rc) {
  if (rc == ERROR_IO_PENDING) return;               // the packet will come
  if (rc == NO_ERROR && !skipOnSuccess_) return;    // a packet comes anyway
  Untrack(&op->ov);
  Event event;
  event.type = Event::Type::OpDone;
  event.op = op;
  event.error = rc;
  event.bytes = rc == NO_ERROR ? static_cast<DWORD>(op->ov.InternalHigh) : 0;
  // Never completed re-entrantly: the result goes out with the next batch.
  Push(std::move(event));
}

// One HttpWaitForDisconnect(Ex) per connection: it completes when the client goes,
// and the requests still in flight on that connection are aborted.
void Queue::WatchDisconnect(HTTP_CONNECTION_ID connectionId) {
  const Api& api = GetApi();
  if (!watchDisconnect_ || disconnectBroken_ || (!api.waitForDisconnectEx && !api.waitForDisconnect) || closing_) {
    return;
  }
  if (!watched_.insert(connectionId).second) return;
  auto* op = new DisconnectOp();
  op->connectionId = connectionId;
  Track(op);
  ULONG rc = api.waitForDisconnectEx ? api.waitForDisconnectEx(queue_, connectionId, 0, &op->ov)
                                     : api.waitForDisconnect(queue_, connectionId, &op->ov);
  Issued(op, rc);
}

}  // namespace httpsys
