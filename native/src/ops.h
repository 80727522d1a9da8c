// Overlapped operations the addon issues. Each starts with an OVERLAPPED, so a
// completion packet's pointer leads back to its operation; only pointers found
// in the queue's registry of live operations are ever dereferenced (Wine posts
// packets for OVERLAPPEDs of its own). A packet names an address only, so no
// OVERLAPPED is ever issued twice while a packet of its earlier call may still
// be on its way: every HttpReceiveHttpRequest call gets a ReceiveOp of its own
// (Queue::PostReceive), and one that returned at once with a result other than
// success stays allocated until the port has passed any packet it left behind
// (Queue::Orphan).
#pragma once

#include "http-api.h"

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace httpsys {

enum class OpKind : uint8_t { Receive, Body, Send, Disconnect, Cancel };

struct Op {
  OVERLAPPED ov;
  OpKind kind;
  double id = 0;            // the JS request id (0 for receives)
  uint64_t generation = 0;  // of the current call (Queue::Track)

  explicit Op(OpKind k) : ov(), kind(k) {}
  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;
};

// A request buffer: 8-byte aligned, as HTTP_REQUEST needs.
struct RequestBuffer {
  std::unique_ptr<uint64_t[]> words;
  ULONG size = 0;

  void Allocate(ULONG bytes) {
    size_t n = (static_cast<size_t>(bytes) + 7) / 8;
    // zeroed: HTTP.SYS fills an HTTP_REQUEST_V2, but an implementation that writes only
    // the V1 part (Wine's) must leave RequestInfoCount and pRequestInfo at 0, not at
    // whatever the heap held (token.cc reads them on every request)
    words.reset(new uint64_t[n]());
    size = static_cast<ULONG>(n * 8);
  }
  HTTP_REQUEST* request() const { return reinterpret_cast<HTTP_REQUEST*>(words.get()); }
};

struct ReceiveOp;

// One of the receives kept outstanding: its buffer and state. It lives as long
// as the queue; each call it makes is a ReceiveOp.
struct ReceiveSlot {
  HTTP_REQUEST_ID requestId = HTTP_NULL_ID;  // set while re-receiving after ERROR_MORE_DATA
  RequestBuffer buffer;
  ReceiveOp* issue = nullptr;  // the call HTTP.SYS holds, if any
  bool pending = false;     // issued, or parked for a retry
  bool parked = false;      // waiting for retryAt after a transient failure
  unsigned failures = 0;    // consecutive failed receives
  ULONGLONG retryAt = 0;    // GetTickCount64() deadline while parked
};

// One HttpReceiveHttpRequest call of a slot.
struct ReceiveOp : Op {
  ReceiveSlot* slot;

  explicit ReceiveOp(ReceiveSlot* s) : Op(OpKind::Receive), slot(s) {}
};

struct BodyOp : Op {
  std::unique_ptr<char[]> data;
  ULONG size = 0;

  BodyOp() : Op(OpKind::Body) {}
};

// Everything HttpSendHttpResponse / HttpSendResponseEntityBody point into; kept
// until the send completes because the kernel reads it asynchronously.
struct SendOp : Op {
  HTTP_REQUEST_ID requestId = HTTP_NULL_ID;  // to cancel the request if the send fails
  bool final = false;
  HTTP_RESPONSE_V2 response;
  HTTP_CACHE_POLICY cachePolicy;
  std::vector<HTTP_UNKNOWN_HEADER> unknownHeaders;
  std::vector<HTTP_KNOWN_HEADER> multiValues;
  std::vector<HTTP_MULTIPLE_KNOWN_HEADERS> multiHeaders;
  std::vector<HTTP_RESPONSE_INFO> responseInfo;
  std::vector<HTTP_DATA_CHUNK> chunks;
  std::unique_ptr<char[]> arena;  // latin1 header bytes and the reason phrase
  std::string textBody;           // a string body, as utf8
  std::vector<Napi::ObjectReference> buffers;  // Buffer bodies, released on the JS thread

  SendOp() : Op(OpKind::Send), response(), cachePolicy() {}
};

struct DisconnectOp : Op {
  HTTP_CONNECTION_ID connectionId = HTTP_NULL_ID;

  DisconnectOp() : Op(OpKind::Disconnect) {}
};

struct CancelOp : Op {
  CancelOp() : Op(OpKind::Cancel) {}
};

}  // namespace httpsys
