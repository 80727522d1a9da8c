// The queue's IO thread (its completion port loop and the receives it keeps
// outstanding), the registry of live operations, and the hand-off of completions
// to JS in batches.
#include "queue.h"

#include "request-convert.h"

#include <algorithm>

namespace httpsys {

// ---------------------------------------------------------------------------
// The live-operation registry

void Queue::Track(Op* op) {
  std::lock_guard<std::mutex> lock(liveMutex_);
  live_.insert(&op->ov);
}

bool Queue::Untrack(OVERLAPPED* ov) {
  std::lock_guard<std::mutex> lock(liveMutex_);
  return live_.erase(ov) == 1;
}

size_t Queue::LiveCount() {
  std::lock_guard<std::mutex> lock(liveMutex_);
  return live_.size();
}

// ---------------------------------------------------------------------------
// The IO thread

DWORD WINAPI Queue::ThreadMain(void* self) {
  static_cast<Queue*>(self)->Run();
  return 0;
}

void Queue::Run() {
  for (ReceiveOp* op : receives_) PostReceive(op);
  while (!finished_) {
    DWORD bytes = 0;
    ULONG_PTR key = 0;
    OVERLAPPED* ov = nullptr;
    BOOL ok = GetQueuedCompletionStatus(port_, &bytes, &key, &ov, INFINITE);
    DWORD error = ok ? NO_ERROR : GetLastError();
    if (!ok && !ov) {
      // The port itself failed: nothing more will arrive.
      Event event;
      event.type = Event::Type::Fatal;
      event.error = error;
      Push(std::move(event));
      break;
    }
    if (key == kCommandKey) {
      HandleCommand(reinterpret_cast<uintptr_t>(ov));
    } else if (ov && Untrack(ov)) {
      Op* op = reinterpret_cast<Op*>(ov);
      if (op->kind == OpKind::Receive) {
        auto* receive = static_cast<ReceiveOp*>(op);
        if (OnReceiveDone(receive, error, bytes)) PostReceive(receive);
      } else {
        Event event;
        event.type = Event::Type::OpDone;
        event.op = op;
        event.error = error;
        event.bytes = bytes;
        Push(std::move(event));
      }
    }
    // Any other packet is not ours (Wine queues some for its internal calls).
    if (closing_ && stopping_ && LiveCount() == 0) {
      CloseHandles();
      finished_ = true;
    }
  }
  Event event;
  event.type = Event::Type::Closed;
  Push(std::move(event));
}

void Queue::HandleCommand(uintptr_t command) {
  stopping_ = true;
  if (command == kCommandClose) {
    // Everything in flight completes with ERROR_OPERATION_ABORTED, then the
    // handles close (HttpShutdownRequestQueue would end the queue for every
    // process attached to it, and is a stub in Wine).
    CancelIoEx(queue_, nullptr);
  } else {
    // Only idle receives: one re-receiving after ERROR_MORE_DATA already owns
    // a request, which must be delivered.
    for (ReceiveOp* op : receives_) {
      if (op->pending && op->requestId == HTTP_NULL_ID) CancelIoEx(queue_, &op->ov);
    }
  }
  CheckDetached();
}

void Queue::PostReceive(ReceiveOp* op) {
  for (;;) {
    if (closing_ || (stopping_ && op->requestId == HTTP_NULL_ID)) {
      op->pending = false;
      CheckDetached();
      return;
    }
    // COPY_BODY: a small body arrives with the headers, one call per request.
    ULONG flags = op->requestId == HTTP_NULL_ID ? HTTP_RECEIVE_REQUEST_FLAG_COPY_BODY : 0;
    ULONG bytes = 0;
    op->ov = OVERLAPPED();
    op->pending = true;
    Track(op);
    ULONG rc = HttpReceiveHttpRequest(queue_, op->requestId, flags, op->buffer.request(), op->buffer.size,
                                      &bytes, &op->ov);
    if (rc == ERROR_IO_PENDING || (rc == NO_ERROR && !skipOnSuccess_)) return;
    Untrack(&op->ov);
    if (rc == NO_ERROR && bytes == 0) bytes = static_cast<DWORD>(op->ov.InternalHigh);
    if (!OnReceiveDone(op, rc, bytes)) return;
  }
}

// true: receive again with this op.
bool Queue::OnReceiveDone(ReceiveOp* op, DWORD error, DWORD bytes) {
  op->pending = false;
  switch (error) {
    case NO_ERROR: {
      Event event;
      event.type = Event::Type::Request;
      event.buffer = std::move(op->buffer);
      Push(std::move(event));
      op->buffer.Allocate(bufferSize_);
      op->requestId = HTTP_NULL_ID;
      return true;
    }
    case ERROR_MORE_DATA: {
      // The headers did not fit: receive the same request into a buffer of the
      // size HTTP.SYS reported.
      HTTP_REQUEST_ID requestId = op->buffer.request()->RequestId;
      ULONG size = std::max<ULONG>(bytes, op->buffer.size * 2);
      op->buffer.Allocate(size);
      op->requestId = requestId;
      return true;
    }
    case ERROR_CONNECTION_INVALID:
      if (op->requestId != HTTP_NULL_ID) {
        // The client left between the two receives: take the next request.
        op->requestId = HTTP_NULL_ID;
        op->buffer.Allocate(bufferSize_);
        return true;
      }
      break;
    case ERROR_OPERATION_ABORTED:
      if (!stopping_) return true;
      CheckDetached();
      return false;
    default:
      break;
  }
  Event event;
  event.type = Event::Type::Fatal;
  event.error = error;
  Push(std::move(event));
  op->requestId = HTTP_NULL_ID;
  CheckDetached();
  return false;
}

void Queue::CheckDetached() {
  if (!stopping_ || detachedSent_) return;
  for (ReceiveOp* op : receives_) {
    if (op->pending) return;
  }
  detachedSent_ = true;
  Event event;
  event.type = Event::Type::Detached;
  Push(std::move(event));
}

// ---------------------------------------------------------------------------
// Hand-off to JS

void Queue::Push(Event&& event) {
  {
    std::lock_guard<std::mutex> lock(eventMutex_);
    events_.push_back(std::move(event));
  }
  // One call per batch: the JS side drains everything queued by then.
  if (tearingDown_ || !started_) return;
  if (!signalled_.exchange(true)) tsfn_.NonBlockingCall();
}

void Queue::CallJs(Napi::Env env, Napi::Function callback, Queue* self, void*) {
  if (env == nullptr || self == nullptr) return;  // the environment is going away
  self->Deliver(env, callback);
}

void Queue::Deliver(Napi::Env env, Napi::Function callback) {
  signalled_.store(false);
  std::vector<Event> events;
  {
    std::lock_guard<std::mutex> lock(eventMutex_);
    events.swap(events_);
  }
  if (events.empty()) return;
  Napi::HandleScope scope(env);
  Napi::Array out = Napi::Array::New(env);
  uint32_t n = 0;
  auto put = [&](int type, double id, Napi::Value arg) {
    out.Set(n++, Napi::Number::New(env, type));
    out.Set(n++, Napi::Number::New(env, id));
    out.Set(n++, arg);
  };
  bool closed = false;

  for (Event& event : events) {
    switch (event.type) {
      case Event::Type::Request: {
        const HTTP_REQUEST* request = event.buffer.request();
        double id = ++lastId_;
        requests_[id] = RequestState{request->RequestId, request->ConnectionId, false};
        put(kEventRequest, id, RequestToJs(env, request, id));
        Napi::Value inlineBody = InlineBody(env, request);
        if (!inlineBody.IsUndefined()) put(kEventBody, id, inlineBody);
        if ((request->EntityChunkCount > 0 || MoreBody(request)) && !MoreBody(request)) {
          put(kEventBodyEnd, id, Napi::Number::New(env, 0));
        }
        WatchDisconnect(request->ConnectionId);
        break;
      }
      case Event::Type::OpDone: {
        Op* op = event.op;
        switch (op->kind) {
          case OpKind::Body: {
            auto* body = static_cast<BodyOp*>(op);
            RequestState* state = Find(op->id);
            if (state) {
              state->reading = false;
              if ((event.error == NO_ERROR || event.error == ERROR_HANDLE_EOF) && event.bytes > 0) {
                put(kEventBody, op->id, Napi::Buffer<char>::Copy(env, body->data.get(), event.bytes));
              }
              if (event.error == ERROR_HANDLE_EOF || (event.error == NO_ERROR && event.bytes == 0)) {
                put(kEventBodyEnd, op->id, Napi::Number::New(env, 0));
              } else if (event.error != NO_ERROR) {
                requests_.erase(op->id);
                put(kEventAbort, op->id, Napi::Number::New(env, event.error));
              }
            }
            delete body;
            break;
          }
          case OpKind::Send:
            put(kEventSent, op->id, Napi::Number::New(env, event.error));
            delete static_cast<SendOp*>(op);
            break;
          case OpKind::Disconnect: {
            auto* disconnect = static_cast<DisconnectOp*>(op);
            watched_.erase(disconnect->connectionId);
            if (event.error == NO_ERROR) {
              std::vector<double> gone;
              for (auto& entry : requests_) {
                if (entry.second.connectionId == disconnect->connectionId) gone.push_back(entry.first);
              }
              for (double id : gone) {
                requests_.erase(id);
                put(kEventAbort, id, Napi::Number::New(env, ERROR_CONNECTION_ABORTED));
              }
            }
            delete disconnect;
            break;
          }
          case OpKind::Cancel:
            delete static_cast<CancelOp*>(op);
            break;
          case OpKind::Receive:
            break;
        }
        break;
      }
      case Event::Type::Detached:
        put(kEventDetached, 0, Napi::Number::New(env, 0));
        break;
      case Event::Type::Fatal:
        put(kEventFatal, 0, Napi::Number::New(env, event.error));
        break;
      case Event::Type::Closed:
        for (auto& entry : requests_) put(kEventAbort, entry.first, Napi::Number::New(env, ERROR_OPERATION_ABORTED));
        requests_.clear();
        put(kEventClosed, 0, Napi::Number::New(env, 0));
        closed = true;
        break;
    }
  }
  if (n > 0) callback.Call({out});
  if (closed) Finish();
}

void Queue::Finish() {
  if (thread_) {
    WaitForSingleObject(thread_, INFINITE);
    CloseHandle(thread_);
    thread_ = nullptr;
  }
  if (!released_) {
    released_ = true;
    tsfn_.Release();
  }
  if (started_.exchange(false)) Napi::ObjectWrap<Queue>::Unref();
}

void Queue::StopThread() {
  if (!thread_) return;
  tearingDown_ = true;
  closing_ = true;
  // A second close command is harmless: the thread only acts on the first.
  PostQueuedCompletionStatus(port_, 0, kCommandKey, reinterpret_cast<LPOVERLAPPED>(kCommandClose));
  WaitForSingleObject(thread_, 5000);
  CloseHandle(thread_);
  thread_ = nullptr;
}

// The environment is going away (process exit, worker thread end) with the
// queue still open: stop the thread before the thread-safe function dies.
void Queue::EnvCleanup(void* self) {
  static_cast<Queue*>(self)->StopThread();
}

}  // namespace httpsys
