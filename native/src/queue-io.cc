// The queue's IO thread (its completion port loop and the receives it keeps
// outstanding), the registry of live operations, and the hand-off of completions
// to JS in batches.
#include "queue.h"

#include "request-convert.h"

#include <algorithm>
#include <cstdio>

namespace httpsys {

namespace {

// Receives failing for a reason that may pass are retried after 5 ms, doubling up
// to 1 s; an abort nobody asked for (no stop, no close) is given up after a while:
// something keeps cancelling the queue's I/O.
constexpr ULONGLONG kRetryFirstMs = 5;
constexpr ULONGLONG kRetryMaxMs = 1000;
constexpr unsigned kMaxStrayAborts = 16;

bool Transient(DWORD error) {
  return error == ERROR_NO_SYSTEM_RESOURCES || error == ERROR_NOT_ENOUGH_MEMORY || error == ERROR_OUTOFMEMORY ||
         error == ERROR_NOT_ENOUGH_QUOTA;
}

}  // namespace

// ---------------------------------------------------------------------------
// The live-operation registry

// Called before every issue. STATUS_PENDING is what DeviceIoControl itself puts
// there; the kernel overwrites it with the result before it queues the packet.
void Queue::Track(Op* op) {
  op->ov.Internal = STATUS_PENDING;
  std::lock_guard<std::mutex> lock(liveMutex_);
  op->generation = ++lastGeneration_;
  live_[&op->ov] = op->generation;
}

bool Queue::Untrack(OVERLAPPED* ov) {
  std::lock_guard<std::mutex> lock(liveMutex_);
  return live_.erase(ov) == 1;
}

// The operation a packet completes, or nullptr: not ours (Wine's own, or an
// orphaned receive's, see Orphan), or not for the current call (the registry's
// generation, and the OVERLAPPED must say the call has completed). An address
// the registry does not hold is never dereferenced.
Op* Queue::Take(OVERLAPPED* ov) {
  std::lock_guard<std::mutex> lock(liveMutex_);
  auto it = live_.find(ov);
  if (it == live_.end()) return nullptr;
  Op* op = reinterpret_cast<Op*>(ov);
  if (op->generation != it->second || !HasOverlappedIoCompleted(ov)) return nullptr;
  live_.erase(it);
  return op;
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

// Start() has posted every slot's first receive.
void Queue::Run() {
  while (!finished_) {
    DWORD bytes = 0;
    ULONG_PTR key = 0;
    OVERLAPPED* ov = nullptr;
    BOOL ok = GetQueuedCompletionStatus(port_, &bytes, &key, &ov, RetryTimeout());
    DWORD error = ok ? NO_ERROR : GetLastError();
    Op* op = nullptr;
    if (!ok && !ov) {
      if (error != WAIT_TIMEOUT) {
        PortFailed(error);
        break;
      }
    } else if (key == kCommandKey) {
      HandleCommand(reinterpret_cast<uintptr_t>(ov));
    } else if (key == kReapKey) {
      // Orphan()'s marker: whatever packet its receive left has been dequeued.
      auto* stale = reinterpret_cast<ReceiveOp*>(ov);
      if (orphans_.erase(stale) == 1) delete stale;
    } else if (ov && (op = Take(ov)) != nullptr) {
      if (op->kind == OpKind::Receive) {
        auto* receive = static_cast<ReceiveOp*>(op);
        ReceiveSlot* slot = receive->slot;
        slot->issue = nullptr;
        delete receive;  // its one packet is in: the address may be reused
        if (OnReceiveDone(slot, error, bytes)) PostReceive(slot);
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
    RetryParked(false);
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
    for (ReceiveSlot* slot : receives_) {
      if (slot->issue && !slot->parked && slot->requestId == HTTP_NULL_ID) CancelIoEx(queue_, &slot->issue->ov);
    }
  }
  // A parked receive is not in the kernel: it ends (or finishes its request) now.
  RetryParked(true);
  CheckDetached();
}

// The port itself failed: no packet will ever arrive, so nothing in flight can be
// waited for. Receiving ends, JS hears Fatal then Closed, and Finish() closes the
// handles on the JS thread (which unregisters the prefixes). Operations still in
// the kernel keep their memory: it is leaked, never freed under the kernel.
void Queue::PortFailed(DWORD error) {
  portFailed_ = true;
  closing_ = true;
  stopping_ = true;
  CancelIoEx(queue_, nullptr);
  for (ReceiveSlot* slot : receives_) {
    slot->pending = false;
    slot->parked = false;
  }
  parked_ = 0;
  Event event;
  event.type = Event::Type::Fatal;
  event.error = error;
  Push(std::move(event));
  CheckDetached();
}

// false: the slot is parked and RetryParked() issues it again later.
bool Queue::Park(ReceiveSlot* slot) {
  ULONGLONG delay = kRetryFirstMs << std::min(slot->failures - 1, 10u);
  slot->retryAt = GetTickCount64() + std::min(delay, kRetryMaxMs);
  if (!slot->parked) ++parked_;
  slot->parked = true;
  slot->pending = true;  // a stop still waits for it (RetryParked(true) ends it)
  return false;
}

DWORD Queue::RetryTimeout() {
  if (parked_ == 0) return INFINITE;
  ULONGLONG next = 0;
  for (ReceiveSlot* slot : receives_) {
    if (slot->parked && (next == 0 || slot->retryAt < next)) next = slot->retryAt;
  }
  if (next == 0) return INFINITE;
  ULONGLONG now = GetTickCount64();
  return next <= now ? 0 : static_cast<DWORD>(next - now);
}

void Queue::RetryParked(bool all) {
  if (parked_ == 0) return;
  ULONGLONG now = GetTickCount64();
  for (ReceiveSlot* slot : receives_) {
    if (!slot->parked || (!all && slot->retryAt > now)) continue;
    slot->parked = false;
    --parked_;
    PostReceive(slot);
  }
}

void Queue::ReceiveFailed(ReceiveSlot* slot, DWORD error) {
  Event event;
  event.type = Event::Type::Fatal;
  event.error = error;
  Push(std::move(event));
  slot->requestId = HTTP_NULL_ID;
  CheckDetached();
}

// Every call gets a ReceiveOp of its own: the re-receive after ERROR_MORE_DATA
// must never share an OVERLAPPED with the call before it (see Orphan).
void Queue::PostReceive(ReceiveSlot* slot) {
  for (;;) {
    if (closing_ || (stopping_ && slot->requestId == HTTP_NULL_ID)) {
      slot->pending = false;
      CheckDetached();
      return;
    }
    // COPY_BODY: a small body arrives with the headers, one call per request.
    ULONG flags = slot->requestId == HTTP_NULL_ID ? HTTP_RECEIVE_REQUEST_FLAG_COPY_BODY : 0;
    ULONG bytes = 0;
    auto* op = new ReceiveOp(slot);
    slot->issue = op;
    slot->pending = true;
    Track(op);
    ULONG rc = HttpReceiveHttpRequest(queue_, slot->requestId, flags, slot->buffer.request(), slot->buffer.size,
                                      &bytes, &op->ov);
    if (rc == ERROR_IO_PENDING || (rc == NO_ERROR && !skipOnSuccess_)) return;
    Untrack(&op->ov);
    slot->issue = nullptr;
    if (rc == NO_ERROR && bytes == 0) bytes = static_cast<DWORD>(op->ov.InternalHigh);
    if (rc == NO_ERROR) {
      delete op;  // success with FILE_SKIP_COMPLETION_PORT_ON_SUCCESS: no packet follows
    } else {
      Orphan(op);
    }
    if (!OnReceiveDone(slot, rc, bytes)) return;
  }
}

// A call that returned at once with anything but success may still leave a
// packet in the port: ERROR_MORE_DATA is STATUS_BUFFER_OVERFLOW, a warning, and
// FILE_SKIP_COMPLETION_PORT_ON_SUCCESS skips the packet for success only
// (https://learn.microsoft.com/windows/win32/api/winbase/nf-winbase-setfilecompletionnotificationmodes).
// Reusing its OVERLAPPED for the next call would credit that packet (its
// ERROR_MORE_DATA, its byte count) to the new call. So the op stays allocated,
// out of the registry (Take drops its packet), until a marker posted now comes
// out of the port: packets leave in the order they went in, and the call queued
// its packet, if any, before it returned.
void Queue::Orphan(ReceiveOp* op) {
  orphans_.insert(op);
  // Should the post fail, the op stays until the queue goes (~Queue).
  PostQueuedCompletionStatus(port_, 0, kReapKey, &op->ov);
}

// true: receive again with this slot.
bool Queue::OnReceiveDone(ReceiveSlot* slot, DWORD error, DWORD bytes) {
  slot->pending = false;
  switch (error) {
    case NO_ERROR: {
      slot->failures = 0;
      Event event;
      event.type = Event::Type::Request;
      tlsQueries_.Prepare(queue_, slot->buffer.request(), &event.tls);
      TakeAuthInfo(slot->buffer.request(), slot->buffer.size, &event.auth);
      event.buffer = std::move(slot->buffer);
      Push(std::move(event));
      slot->buffer.Allocate(bufferSize_);
      slot->requestId = HTTP_NULL_ID;
      return true;
    }
    case ERROR_MORE_DATA: {
      // The headers did not fit: receive the same request into a buffer of the
      // size HTTP.SYS reported.
      HTTP_REQUEST_ID requestId = slot->buffer.request()->RequestId;
      ULONG size = std::max<ULONG>(bytes, slot->buffer.size * 2);
      slot->buffer.Allocate(size);
      slot->requestId = requestId;
      return true;
    }
    case ERROR_CONNECTION_INVALID:
    case ERROR_INVALID_PARAMETER:
      if (slot->requestId != HTTP_NULL_ID) {
        // The client left between the two receives (ASP.NET sees 87 there too):
        // take the next request.
        slot->requestId = HTTP_NULL_ID;
        slot->buffer.Allocate(bufferSize_);
        return true;
      }
      break;
    case ERROR_OPERATION_ABORTED:
      if (stopping_) {
        CheckDetached();
        return false;
      }
      // Nobody asked for it: issue again, but never in a tight loop.
      if (++slot->failures > kMaxStrayAborts) break;
      return Park(slot);
    default:
      if (Transient(error)) {
        if (closing_ || (stopping_ && slot->requestId == HTTP_NULL_ID)) {
          CheckDetached();
          return false;
        }
        ++slot->failures;
        return Park(slot);
      }
      break;
  }
  ReceiveFailed(slot, error);
  return false;
}

void Queue::CheckDetached() {
  if (!stopping_ || detachedSent_) return;
  for (ReceiveSlot* slot : receives_) {
    if (slot->pending) return;
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
        requests_[id] = RequestState{request->RequestId, request->ConnectionId, false, false, IsMultiplexed(request)};
        double token = tokens_.Adopt(std::move(event.auth.token));
        put(kEventRequest, id, RequestToJs(env, request, id, event.tls, event.auth, token));
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
          case OpKind::Send: {
            auto* send = static_cast<SendOp*>(op);
            if (event.error != NO_ERROR) {
              // A failed piece ends the exchange: nothing can be sent after it, and
              // the client must not be left waiting for the rest, so the request
              // is cancelled (its connection or stream reset). Not again for an
              // abort that a cancel or the close itself caused.
              bool known = requests_.erase(op->id) == 1;
              if (event.error != ERROR_OPERATION_ABORTED || known) CancelRequest(send->requestId, op->id);
            }
            --sendsInFlight_;
            put(kEventSent, op->id, Napi::Number::New(env, event.error));
            delete send;
            break;
          }
          case OpKind::Disconnect: {
            auto* disconnect = static_cast<DisconnectOp*>(op);
            watched_.erase(disconnect->connectionId);
            if (event.error == ERROR_INVALID_FUNCTION || event.error == ERROR_NOT_SUPPORTED ||
                event.error == ERROR_CALL_NOT_IMPLEMENTED) {
              // The call itself is unusable here: it says nothing about the client.
              disconnectBroken_ = true;
            } else if (!(event.error == ERROR_OPERATION_ABORTED && closing_)) {
              // Any other end (1229: the connection was gone already) means the
              // client is gone; an abort during close is the close's own.
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
        if (portFailed_) {
          // Sends still in the kernel will never complete through the dead port:
          // each still gets its one SENT event (their memory stays, see PortFailed).
          std::lock_guard<std::mutex> lock(liveMutex_);
          for (auto& entry : live_) {
            Op* live = reinterpret_cast<Op*>(entry.first);
            if (live->kind != OpKind::Send) continue;
            --sendsInFlight_;
            put(kEventSent, live->id, Napi::Number::New(env, ERROR_OPERATION_ABORTED));
          }
        }
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
  CloseHandles();  // the thread closed them, unless the port failed under it
  // after the batch with CLOSED: JS let go of each identity then (its last reads first)
  tokens_.CloseAll();
  started_ = false;
  if (!released_) {
    released_ = true;
    // Calls already queued still run with this object as their context: the
    // reference goes in OnTsfnFinalize, after the last of them.
    tsfn_.Release();
  }
}

void Queue::OnTsfnFinalize(Napi::Env, void*, Queue* self) {
  if (!self->refHeld_) return;
  self->refHeld_ = false;
  self->Napi::ObjectWrap<Queue>::Unref();
}

void Queue::StopThread() {
  if (!thread_) return;
  tearingDown_ = true;
  // Close() already posted the command if closing_ was set.
  if (!closing_.exchange(true)) {
    PostQueuedCompletionStatus(port_, 0, kCommandKey, reinterpret_cast<LPOVERLAPPED>(kCommandClose));
  }
  // No time limit: the thread uses this object until it ends, so freeing it any
  // sooner would be a use-after-free. Everything in flight was cancelled and
  // completes; should it not, say so rather than hang silently.
  if (WaitForSingleObject(thread_, 5000) == WAIT_TIMEOUT) {
    std::fprintf(stderr, "httpsys: still waiting for %u cancelled HTTP.SYS operations of queue '%s' to complete\n",
                 static_cast<unsigned>(LiveCount()), name_.c_str());
    WaitForSingleObject(thread_, INFINITE);
  }
  CloseHandle(thread_);
  thread_ = nullptr;
}

// The environment is going away (process exit, worker thread end) with the
// queue still open: stop the thread before the thread-safe function dies.
void Queue::EnvCleanup(void* self) {
  static_cast<Queue*>(self)->StopThread();
}

}  // namespace httpsys
