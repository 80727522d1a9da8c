#include "diagnostics.h"

#include "http-api.h"

#include <iphlpapi.h>
#include <winsvc.h>

#include <string>
#include <vector>

namespace httpsys {

namespace {

Napi::Object Result(Napi::Env env, DWORD code) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("code", Napi::Number::New(env, code));
  return out;
}

void ThrowType(Napi::Env env, const char* message) {
  Napi::TypeError error = Napi::TypeError::New(env, message);
  error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  error.ThrowAsJavaScriptException();
}

const char* StateName(DWORD state) {
  switch (state) {
    case SERVICE_STOPPED: return "stopped";
    case SERVICE_START_PENDING: return "start_pending";
    case SERVICE_STOP_PENDING: return "stop_pending";
    case SERVICE_RUNNING: return "running";
    case SERVICE_CONTINUE_PENDING: return "continue_pending";
    case SERVICE_PAUSE_PENDING: return "pause_pending";
    case SERVICE_PAUSED: return "paused";
    default: return "unknown";
  }
}

const char* StartTypeName(DWORD type) {
  switch (type) {
    case SERVICE_BOOT_START: return "boot";
    case SERVICE_SYSTEM_START: return "system";
    case SERVICE_AUTO_START: return "auto";
    case SERVICE_DEMAND_START: return "demand";
    case SERVICE_DISABLED: return "disabled";
    default: return "unknown";
  }
}

struct ServiceHandle {
  SC_HANDLE handle = nullptr;
  ~ServiceHandle() {
    if (handle) CloseServiceHandle(handle);
  }
};

// serviceStatus(name) -> { code, state, startType, pid }: the service control
// manager's view of one service; 'HTTP' is HTTP.SYS (a kernel driver, started
// on demand, so pid is 0). Query rights only: no elevation needed.
Napi::Value ServiceStatus(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) {
    ThrowType(env, "serviceStatus(name) needs the service name as a string");
    return env.Undefined();
  }
  std::wstring name = Widen(info[0].As<Napi::String>().Utf8Value());
  ServiceHandle manager;
  manager.handle = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_CONNECT);
  if (!manager.handle) return Result(env, GetLastError());
  ServiceHandle service;
  service.handle = OpenServiceW(manager.handle, name.c_str(), SERVICE_QUERY_STATUS | SERVICE_QUERY_CONFIG);
  if (!service.handle) return Result(env, GetLastError());  // 1060: no such service

  SERVICE_STATUS_PROCESS status = {};
  DWORD needed = 0;
  if (!QueryServiceStatusEx(service.handle, SC_STATUS_PROCESS_INFO, reinterpret_cast<LPBYTE>(&status),
                            sizeof(status), &needed)) {
    return Result(env, GetLastError());
  }
  std::vector<uint64_t> buffer(8192 / 8);
  DWORD size = static_cast<DWORD>(buffer.size() * 8);
  auto* config = reinterpret_cast<QUERY_SERVICE_CONFIGW*>(buffer.data());
  if (!QueryServiceConfigW(service.handle, config, size, &needed)) {
    DWORD rc = GetLastError();
    if (rc != ERROR_INSUFFICIENT_BUFFER) return Result(env, rc);
    buffer.assign((needed + 7) / 8, 0);
    config = reinterpret_cast<QUERY_SERVICE_CONFIGW*>(buffer.data());
    if (!QueryServiceConfigW(service.handle, config, needed, &needed)) return Result(env, GetLastError());
  }
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("state", StateName(status.dwCurrentState));
  out.Set("startType", StartTypeName(config->dwStartType));
  out.Set("pid", Napi::Number::New(env, status.dwProcessId));
  return out;
}

// isElevated() -> boolean (or { code } if the token cannot be read): whether this
// process runs with the administrators' full token (UAC elevation), which the
// machine-wide HTTP.SYS configuration and LocalMachine\My need.
Napi::Value IsElevated(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HANDLE token = nullptr;
  if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) return Result(env, GetLastError());
  TOKEN_ELEVATION elevation = {};
  DWORD size = 0;
  BOOL ok = GetTokenInformation(token, TokenElevation, &elevation, sizeof(elevation), &size);
  DWORD rc = ok ? NO_ERROR : GetLastError();
  CloseHandle(token);
  if (!ok) return Result(env, rc);
  return Napi::Boolean::New(env, elevation.TokenIsElevated != 0);
}

// One GetExtendedTcpTable call, growing the buffer as asked.
DWORD TcpTable(ULONG family, std::vector<uint64_t>* table) {
  DWORD size = 16 * 1024;
  for (int attempt = 0; attempt < 5; ++attempt) {
    table->assign((size + 7) / 8, 0);
    size = static_cast<DWORD>(table->size() * 8);
    DWORD rc = GetExtendedTcpTable(table->data(), &size, FALSE, family, TCP_TABLE_OWNER_PID_LISTENER, 0);
    if (rc != ERROR_INSUFFICIENT_BUFFER) return rc;
  }
  return ERROR_INSUFFICIENT_BUFFER;
}

Napi::Object Listener(Napi::Env env, int family, const void* address, DWORD port, DWORD pid) {
  char text[INET6_ADDRSTRLEN] = "";
  inet_ntop(family == 4 ? AF_INET : AF_INET6, const_cast<void*>(address), text, sizeof(text));
  Napi::Object entry = Napi::Object::New(env);
  entry.Set("address", text);
  entry.Set("port", Napi::Number::New(env, ntohs(static_cast<u_short>(port))));
  entry.Set("pid", Napi::Number::New(env, pid));
  entry.Set("family", Napi::Number::New(env, family));
  return entry;
}

// tcpListeners() -> { code, list: [{ address, port, pid, family: 4 | 6 }] }: every
// TCP socket in LISTEN state with its owning process. HTTP.SYS's listeners
// belong to pid 4 (System). code is the first failure (the list then holds what
// was read); a machine without IPv6 is not one.
Napi::Value TcpListeners(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Array list = Napi::Array::New(env);
  uint32_t n = 0;
  DWORD code = NO_ERROR;
  std::vector<uint64_t> table;
  DWORD rc = TcpTable(AF_INET, &table);
  if (rc == NO_ERROR) {
    const auto* rows = reinterpret_cast<const MIB_TCPTABLE_OWNER_PID*>(table.data());
    for (DWORD i = 0; i < rows->dwNumEntries; ++i) {
      const MIB_TCPROW_OWNER_PID& row = rows->table[i];
      list.Set(n++, Listener(env, 4, &row.dwLocalAddr, row.dwLocalPort, row.dwOwningPid));
    }
  } else {
    code = rc;
  }
  rc = TcpTable(AF_INET6, &table);
  if (rc == NO_ERROR) {
    const auto* rows = reinterpret_cast<const MIB_TCP6TABLE_OWNER_PID*>(table.data());
    for (DWORD i = 0; i < rows->dwNumEntries; ++i) {
      const MIB_TCP6ROW_OWNER_PID& row = rows->table[i];
      list.Set(n++, Listener(env, 6, row.ucLocalAddr, row.dwLocalPort, row.dwOwningPid));
    }
  } else if (code == NO_ERROR && rc != ERROR_NOT_SUPPORTED && rc != ERROR_INVALID_PARAMETER) {
    code = rc;
  }
  Napi::Object out = Result(env, code);
  out.Set("list", list);
  return out;
}

// processName(pid) -> the full path of the process's image, 'System' for pid 4
// (the kernel, which owns HTTP.SYS's sockets), or null when it cannot be read
// (gone, or protected from this account).
Napi::Value ProcessName(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsNumber()) {
    ThrowType(env, "processName(pid) needs the pid as a number");
    return env.Undefined();
  }
  DWORD pid = info[0].As<Napi::Number>().Uint32Value();
  if (pid == 4) return Napi::String::New(env, "System");
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (!process) return env.Null();
  std::wstring path(32768, L'\0');
  DWORD size = static_cast<DWORD>(path.size());
  BOOL ok = QueryFullProcessImageNameW(process, 0, &path[0], &size);
  CloseHandle(process);
  if (!ok) return env.Null();
  return Napi::String::New(env, Narrow(path.c_str(), static_cast<int>(size)));
}

// machineTimeouts() -> { code, idleConnection, headerWait }: the HTTP Server API-wide
// IdleConnection and HeaderWait timers in seconds (HttpServiceConfigTimeout), null where
// none is set (HTTP.SYS's 120 s then). They govern a connection until its first request
// reaches a queue: a URL group's own timers apply only after that ("Configuring the
// Application Specific Timeouts").
Napi::Value MachineTimeouts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Result(env, InitConfig());
  out.Set("idleConnection", env.Null());
  out.Set("headerWait", env.Null());
  if (out.Get("code").As<Napi::Number>().Uint32Value() != NO_ERROR) return out;
  const struct {
    const char* key;
    HTTP_SERVICE_CONFIG_TIMEOUT_KEY timer;
  } timers[] = {{"idleConnection", IdleConnectionTimeout}, {"headerWait", HeaderWaitTimeout}};
  for (const auto& t : timers) {
    HTTP_SERVICE_CONFIG_TIMEOUT_KEY key = t.timer;
    HTTP_SERVICE_CONFIG_TIMEOUT_PARAM seconds = 0;
    ULONG size = 0;
    ULONG rc = HttpQueryServiceConfiguration(nullptr, static_cast<HTTP_SERVICE_CONFIG_ID>(kServiceConfigTimeout), &key,
                                             sizeof(key), &seconds, sizeof(seconds), &size, nullptr);
    if (rc == NO_ERROR) {
      out.Set(t.key, Napi::Number::New(env, seconds));
    } else if (rc != ERROR_FILE_NOT_FOUND) {
      out.Set("code", Napi::Number::New(env, rc));
      break;
    }
  }
  return out;
}

}  // namespace

void InitDiagnostics(Napi::Env env, Napi::Object exports) {
  exports.Set("machineTimeouts", Napi::Function::New(env, MachineTimeouts, "machineTimeouts"));
  exports.Set("serviceStatus", Napi::Function::New(env, ServiceStatus, "serviceStatus"));
  exports.Set("isElevated", Napi::Function::New(env, IsElevated, "isElevated"));
  exports.Set("tcpListeners", Napi::Function::New(env, TcpListeners, "tcpListeners"));
  exports.Set("processName", Napi::Function::New(env, ProcessName, "processName"));
}

}  // namespace httpsys
