// One request queue: a standalone queue this process creates, a named queue it
// opens (a worker under the supervisor), or a controller handle (the
// supervisor: registers URLs, never receives). Receiving runs on the queue's
// own IO completion port and thread; completions reach JS in batches through
// one thread-safe function; libuv is never touched.
#pragma once

#include "ops.h"
#include "property-call.h"
#include "request-convert.h"

#include <napi.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace httpsys {

// Completion keys: packets for the queue handle, the queue's own commands, and
// markers for receives that completed at once.
constexpr ULONG_PTR kOpKey = 1;
constexpr ULONG_PTR kCommandKey = 2;
constexpr ULONG_PTR kReapKey = 3;  // the OVERLAPPED is an orphaned ReceiveOp (Queue::Orphan)
constexpr uintptr_t kCommandStop = 1;
constexpr uintptr_t kCommandClose = 2;

// Event types in the flat [type, id, arg, ...] batches handed to JS. The one
// list: the enum below and the `events` export (addon.cc) are both made from it.
//   X(enum suffix, JS name, value)
#define HTTPSYS_EVENTS(X)                                                     \
  X(Request, REQUEST, 1)     /* arg: the QueueRequest object */                \
  X(Body, BODY, 2)           /* arg: Buffer */                                 \
  X(BodyEnd, BODY_END, 3)    /* arg: 0 */                                      \
  X(Sent, SENT, 4)           /* arg: Win32 code of the send (0 = done) */      \
  X(Abort, ABORT, 5)         /* arg: Win32 code that ended the request */      \
  X(Detached, DETACHED, 6)   /* no more receives are outstanding; arg: 0 */    \
  X(Closed, CLOSED, 7)       /* handles closed; arg: 0 */                      \
  X(Fatal, FATAL, 8)         /* receiving stopped; arg: Win32 code */

enum EventCode : int {
#define HTTPSYS_EVENT_ENUM(name, js, value) kEvent##name = value,
  HTTPSYS_EVENTS(HTTPSYS_EVENT_ENUM)
#undef HTTPSYS_EVENT_ENUM
};

class Queue : public Napi::ObjectWrap<Queue> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit Queue(const Napi::CallbackInfo& info);
  ~Queue() override;

 private:
  enum class Mode { Create, Open, Controller };

  struct Event {
    enum class Type : uint8_t { Request, OpDone, Detached, Closed, Fatal };
    Type type = Type::OpDone;
    Op* op = nullptr;
    DWORD error = 0;
    DWORD bytes = 0;
    RequestBuffer buffer;
    TlsExtras tls;  // Request: what the IO thread learnt about its TLS connection
    AuthExtras auth;  // Request: HTTP.SYS's authentication of it, its token owned here
  };

  struct RequestState {
    HTTP_REQUEST_ID requestId;
    HTTP_CONNECTION_ID connectionId;
    bool reading;
    bool responded;    // a respond() was issued (a partial one keeps the entry)
    bool multiplexed;  // HTTP/2 or HTTP/3: a close is a GOAWAY, not a disconnect
  };

  // JS methods
  Napi::Value Start(const Napi::CallbackInfo& info);
  Napi::Value AddUrl(const Napi::CallbackInfo& info);
  Napi::Value RemoveUrl(const Napi::CallbackInfo& info);
  Napi::Value SetPropertyJs(const Napi::CallbackInfo& info);
  Napi::Value FlushCache(const Napi::CallbackInfo& info);
  Napi::Value Respond(const Napi::CallbackInfo& info);
  Napi::Value SendBody(const Napi::CallbackInfo& info);
  Napi::Value ReadBody(const Napi::CallbackInfo& info);
  Napi::Value Cancel(const Napi::CallbackInfo& info);
  Napi::Value StopReceiving(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value Ref(const Napi::CallbackInfo& info);
  Napi::Value Unref(const Napi::CallbackInfo& info);
  Napi::Value Info(const Napi::CallbackInfo& info);
  Napi::Value QueryTokenUser(const Napi::CallbackInfo& info);
  Napi::Value QueryTokenGroups(const Napi::CallbackInfo& info);
  Napi::Value CloseToken(const Napi::CallbackInfo& info);

  // set-up and tear-down (JS thread, or the IO thread once it owns the handles)
  ULONG CreateQueue(const std::wstring& name, const std::string& sddl);
  bool ReadProperties(Napi::Env env, const Napi::Object& options);
  bool CheckBinding(Napi::Env env);
  ULONG ApplyQueueProperties();
  ULONG RegisterUrl(const std::wstring& url);
  ULONG NewUrlGroup(HTTP_URL_GROUP_ID* group);
  void CloseHandles();
  void ThrowWin32(Napi::Env env, ULONG code, const char* syscall, const std::string& prefix = "",
                  const std::string& property = "");

  // IO thread
  static DWORD WINAPI ThreadMain(void* self);
  void Run();
  void PostReceive(ReceiveSlot* slot);
  void Orphan(ReceiveOp* op);
  bool OnReceiveDone(ReceiveSlot* slot, DWORD error, DWORD bytes);
  bool Park(ReceiveSlot* slot);
  DWORD RetryTimeout();
  void RetryParked(bool all);
  void ReceiveFailed(ReceiveSlot* slot, DWORD error);
  void PortFailed(DWORD error);
  void CheckDetached();
  void HandleCommand(uintptr_t command);

  // JS-issued operations
  void Issued(Op* op, ULONG rc);
  ULONG CloseFlag(const RequestState& state) const;
  ULONG IssueSend(SendOp* op, ULONG flags, HTTP_CACHE_POLICY* cache, bool withHead);
  ULONG CancelRequest(HTTP_REQUEST_ID requestId, double id);
  RequestState* Find(double id);
  void WatchDisconnect(HTTP_CONNECTION_ID connectionId);

  // the live-operation registry
  void Track(Op* op);
  bool Untrack(OVERLAPPED* ov);
  Op* Take(OVERLAPPED* ov);
  size_t LiveCount();

  // hand-off to JS
  void Push(Event&& event);
  static void CallJs(Napi::Env env, Napi::Function callback, Queue* self, void* data);
  static void OnTsfnFinalize(Napi::Env env, void* data, Queue* self);
  void Deliver(Napi::Env env, Napi::Function callback);
  void Finish();
  static void EnvCleanup(void* self);
  void StopThread();

  Mode mode_ = Mode::Create;
  HANDLE queue_ = nullptr;
  HANDLE port_ = nullptr;
  HANDLE thread_ = nullptr;
  HTTP_SERVER_SESSION_ID session_ = HTTP_NULL_ID;
  std::vector<HTTP_URL_GROUP_ID> groups_;
  std::vector<std::pair<HTTP_URL_GROUP_ID, std::wstring>> urls_;
  bool groupFull_ = false;
  const char* failedCall_ = "HttpAddUrlToUrlGroup";  // what RegisterUrl's error came from
  std::string failedProperty_;                        // ... and which property, if one
  // options.properties (src/httpsys/properties.js): the queue's own, applied once
  // it exists, and what every URL group gets, in order (the binding last)
  std::vector<PropertyCall> queueProperties_;
  std::vector<PropertyCall> groupProperties_;
  std::string name_;

  bool skipOnSuccess_ = false;
  bool bufferData_ = false;
  bool watchDisconnect_ = true;
  ULONG bufferSize_ = 4096;
  ULONG bodyChunk_ = 65536;
  std::vector<ReceiveSlot*> receives_;
  std::unordered_set<ReceiveOp*> orphans_;  // IO thread (then ~Queue): see Orphan()
  TlsQueries tlsQueries_;       // IO thread only

  std::atomic<bool> started_{false};
  std::atomic<bool> closing_{false};
  bool stopping_ = false;       // IO thread only
  bool detachedSent_ = false;   // IO thread only
  bool finished_ = false;       // IO thread only
  unsigned parked_ = 0;         // IO thread only: receives waiting for a retry
  std::atomic<bool> portFailed_{false};  // the completion port broke: ops may never complete
  std::atomic<bool> closed_{false};      // handles closed (JS thread or IO thread)
  bool released_ = false;       // JS thread: the thread-safe function is released
  bool refHeld_ = false;        // JS thread: the wrapper is kept alive for the thread-safe function
  bool disconnectBroken_ = false;  // JS thread: HttpWaitForDisconnect(Ex) is unusable here

  std::mutex liveMutex_;
  std::unordered_map<OVERLAPPED*, uint64_t> live_;  // -> generation of the issue
  uint64_t lastGeneration_ = 0;

  std::mutex eventMutex_;
  std::vector<Event> events_;
  std::atomic<bool> signalled_{false};
  std::atomic<bool> tearingDown_{false};  // no more calls into JS
  Napi::TypedThreadSafeFunction<Queue, void, CallJs> tsfn_;

  // JS thread only
  double lastId_ = 0;
  std::unordered_map<double, RequestState> requests_;
  size_t sendsInFlight_ = 0;     // sends issued whose SENT event JS has not had yet
  bool goAwayRejected_ = false;  // this HTTP.SYS predates HTTP_SEND_RESPONSE_FLAG_GOAWAY
  std::unordered_set<HTTP_CONNECTION_ID> watched_;
  TokenTable tokens_;  // the access tokens of requests JS has (token.h); closed at Finish
  napi_env env_ = nullptr;
};

}  // namespace httpsys
