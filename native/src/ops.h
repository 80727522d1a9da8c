// Overlapped operations the addon issues. Each starts with an OVERLAPPED, so a
// completion packet's pointer leads back to its operation; only pointers found
// in the queue's registry of live operations are ever dereferenced (Wine posts
// packets for OVERLAPPEDs of its own). A packet names an address only, and a
// ReceiveOp reuses its OVERLAPPED for every issue: each issue gets a generation
// in the registry, and a packet counts only while its OVERLAPPED says the issue
// has completed (see Queue::Take).
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
  uint64_t generation = 0;  // of the current issue (Queue::Track)

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
    words.reset(new uint64_t[n]);
    size = static_cast<ULONG>(n * 8);
  }
  HTTP_REQUEST* request() const { return reinterpret_cast<HTTP_REQUEST*>(words.get()); }
};

// One of the receives kept outstanding. It lives as long as the queue.
struct ReceiveOp : Op {
  HTTP_REQUEST_ID requestId = HTTP_NULL_ID;  // set while re-receiving after ERROR_MORE_DATA
  RequestBuffer buffer;
  bool pending = false;     // issued, or parked for a retry
  bool parked = false;      // waiting for retryAt after a transient failure
  unsigned failures = 0;    // consecutive failed receives
  ULONGLONG retryAt = 0;    // GetTickCount64() deadline while parked

  ReceiveOp() : Op(OpKind::Receive) {}
};

struct BodyOp : Op {
  std::unique_ptr<char[]> data;
  ULONG size = 0;

  BodyOp() : Op(OpKind::Body) {}
};

// Everything HttpSendHttpResponse / HttpSendResponseEntityBody point into; kept
// until the send completes because the kernel reads it asynchronously.
struct SendOp : Op {
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
