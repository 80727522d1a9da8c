#include "service-host.h"

#include "http-api.h"

#include <winsvc.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httpsys {

namespace {

// ---------------------------------------------------------------------------
// Helpers

Napi::Object Result(Napi::Env env, DWORD code, const char* syscall = nullptr) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("code", Napi::Number::New(env, code));
  if (code != NO_ERROR && syscall) out.Set("syscall", syscall);
  return out;
}

void ThrowType(Napi::Env env, const char* message) {
  Napi::TypeError error = Napi::TypeError::New(env, message);
  error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  error.ThrowAsJavaScriptException();
}

bool Has(const Napi::Object& object, const char* key) {
  return object.Has(key) && !object.Get(key).IsUndefined() && !object.Get(key).IsNull();
}

std::wstring WideString(const Napi::Object& object, const char* key) {
  Napi::Value value = object.Get(key);
  return value.IsString() ? Widen(value.As<Napi::String>().Utf8Value()) : std::wstring();
}

DWORD Number(const Napi::Object& object, const char* key, DWORD fallback) {
  Napi::Value value = object.Get(key);
  return value.IsNumber() ? value.As<Napi::Number>().Uint32Value() : fallback;
}

struct ScHandle {
  SC_HANDLE handle = nullptr;
  ~ScHandle() {
    if (handle) CloseServiceHandle(handle);
  }
};

// Opens the manager with `managerAccess` and the service with `access`; a
// failure is returned as { code, syscall }.
Napi::Value OpenService(Napi::Env env, const std::wstring& name, DWORD managerAccess, DWORD access,
                        ScHandle* manager, ScHandle* service) {
  manager->handle = OpenSCManagerW(nullptr, nullptr, managerAccess);
  if (!manager->handle) return Result(env, GetLastError(), "OpenSCManagerW");
  service->handle = OpenServiceW(manager->handle, name.c_str(), access);
  if (!service->handle) return Result(env, GetLastError(), "OpenServiceW");
  return env.Undefined();
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

bool StartType(const std::string& name, DWORD* out) {
  if (name == "auto") *out = SERVICE_AUTO_START;
  else if (name == "demand") *out = SERVICE_DEMAND_START;
  else if (name == "disabled") *out = SERVICE_DISABLED;
  else return false;
  return true;
}

const char* ActionName(SC_ACTION_TYPE type) {
  switch (type) {
    case SC_ACTION_NONE: return "none";
    case SC_ACTION_RESTART: return "restart";
    case SC_ACTION_REBOOT: return "reboot";
    case SC_ACTION_RUN_COMMAND: return "run";
    default: return "unknown";
  }
}

// QueryServiceConfig2W into a buffer grown as asked; false on failure (*rc set).
bool QueryConfig2(SC_HANDLE service, DWORD level, std::vector<uint64_t>* buffer, DWORD* rc) {
  DWORD needed = 0;
  buffer->assign(1024 / 8, 0);
  for (int attempt = 0; attempt < 3; ++attempt) {
    DWORD size = static_cast<DWORD>(buffer->size() * 8);
    if (QueryServiceConfig2W(service, level, reinterpret_cast<LPBYTE>(buffer->data()), size, &needed)) {
      *rc = NO_ERROR;
      return true;
    }
    *rc = GetLastError();
    if (*rc != ERROR_INSUFFICIENT_BUFFER) return false;
    buffer->assign((needed + 7) / 8, 0);
  }
  return false;
}

// ---------------------------------------------------------------------------
// The service control manager's side

// serviceCreate({ name, displayName, binPath, startType: 'auto' | 'demand' |
// 'disabled', account?, password?, dependencies?: string[] }) -> { code, syscall }.
// An own-process service; account null is LocalSystem.
Napi::Value ServiceCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) {
    ThrowType(env, "serviceCreate(spec) needs { name, displayName, binPath, startType }");
    return env.Undefined();
  }
  Napi::Object spec = info[0].As<Napi::Object>();
  DWORD startType = 0;
  if (!spec.Get("name").IsString() || !spec.Get("binPath").IsString() || !spec.Get("startType").IsString() ||
      !StartType(spec.Get("startType").As<Napi::String>().Utf8Value(), &startType)) {
    ThrowType(env, "serviceCreate(spec): name and binPath must be strings, startType 'auto', 'demand' or 'disabled'");
    return env.Undefined();
  }
  std::wstring name = WideString(spec, "name");
  std::wstring display = Has(spec, "displayName") ? WideString(spec, "displayName") : name;
  std::wstring binPath = WideString(spec, "binPath");
  std::wstring account = WideString(spec, "account");
  std::wstring password = WideString(spec, "password");
  // REG_MULTI_SZ: each name and its NUL, then one more NUL
  std::wstring dependencies;
  if (spec.Get("dependencies").IsArray()) {
    Napi::Array list = spec.Get("dependencies").As<Napi::Array>();
    for (uint32_t i = 0; i < list.Length(); ++i) {
      if (!list.Get(i).IsString()) continue;
      dependencies += Widen(list.Get(i).As<Napi::String>().Utf8Value());
      dependencies.push_back(L'\0');
    }
  }
  dependencies.push_back(L'\0');

  ScHandle manager;
  manager.handle = OpenSCManagerW(nullptr, nullptr, SC_MANAGER_CONNECT | SC_MANAGER_CREATE_SERVICE);
  if (!manager.handle) return Result(env, GetLastError(), "OpenSCManagerW");
  ScHandle service;
  service.handle = CreateServiceW(manager.handle, name.c_str(), display.c_str(), SERVICE_QUERY_STATUS,
                                  SERVICE_WIN32_OWN_PROCESS, startType, SERVICE_ERROR_NORMAL, binPath.c_str(),
                                  nullptr, nullptr, dependencies.c_str(),
                                  account.empty() ? nullptr : account.c_str(),
                                  password.empty() ? nullptr : password.c_str());
  SecureZeroMemory(&password[0], password.size() * sizeof(wchar_t));
  if (!service.handle) return Result(env, GetLastError(), "CreateServiceW");
  return Result(env, NO_ERROR);
}

// serviceConfigure(name, { description?, failureActions?: { resetPeriod (s),
// actions: [{ type: 'none' | 'restart' | 'reboot', delay (ms) }] },
// failureActionsOnNonCrashFailures?: bool, delayedAutoStart?: bool,
// preshutdownTimeout?: ms, sidType?: 'none' | 'unrestricted' | 'restricted' })
// -> { code, syscall, level }: the ChangeServiceConfig2W calls, in this order,
// up to the first that fails (`level` names it).
Napi::Value ServiceConfigure(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsObject()) {
    ThrowType(env, "serviceConfigure(name, options) needs the service name and an options object");
    return env.Undefined();
  }
  std::wstring name = Widen(info[0].As<Napi::String>().Utf8Value());
  Napi::Object options = info[1].As<Napi::Object>();
  ScHandle manager;
  ScHandle service;
  // SERVICE_START: ChangeServiceConfig2W refuses SC_ACTION_RESTART without it
  Napi::Value failed = OpenService(env, name, SC_MANAGER_CONNECT, SERVICE_CHANGE_CONFIG | SERVICE_START, &manager, &service);
  if (!failed.IsUndefined()) return failed;

  auto change = [&](DWORD level, void* data, const char* what) -> Napi::Value {
    if (ChangeServiceConfig2W(service.handle, level, data)) return env.Undefined();
    Napi::Object out = Result(env, GetLastError(), "ChangeServiceConfig2W");
    out.Set("level", what);
    return out;
  };

  if (Has(options, "description")) {
    std::wstring text = WideString(options, "description");
    SERVICE_DESCRIPTIONW description = {&text[0]};
    Napi::Value r = change(SERVICE_CONFIG_DESCRIPTION, &description, "description");
    if (!r.IsUndefined()) return r;
  }
  if (Has(options, "failureActions") && options.Get("failureActions").IsObject()) {
    Napi::Object spec = options.Get("failureActions").As<Napi::Object>();
    std::vector<SC_ACTION> actions;
    if (spec.Get("actions").IsArray()) {
      Napi::Array list = spec.Get("actions").As<Napi::Array>();
      for (uint32_t i = 0; i < list.Length(); ++i) {
        if (!list.Get(i).IsObject()) continue;
        Napi::Object item = list.Get(i).As<Napi::Object>();
        std::string type = item.Get("type").IsString() ? item.Get("type").As<Napi::String>().Utf8Value() : "none";
        SC_ACTION action = {};
        action.Type = type == "restart" ? SC_ACTION_RESTART : type == "reboot" ? SC_ACTION_REBOOT : SC_ACTION_NONE;
        action.Delay = Number(item, "delay", 0);
        actions.push_back(action);
      }
    }
    SERVICE_FAILURE_ACTIONSW failure = {};
    failure.dwResetPeriod = Number(spec, "resetPeriod", INFINITE);
    failure.cActions = static_cast<DWORD>(actions.size());
    failure.lpsaActions = actions.empty() ? nullptr : actions.data();
    Napi::Value r = change(SERVICE_CONFIG_FAILURE_ACTIONS, &failure, "failureActions");
    if (!r.IsUndefined()) return r;
  }
  if (Has(options, "failureActionsOnNonCrashFailures")) {
    SERVICE_FAILURE_ACTIONS_FLAG flag = {options.Get("failureActionsOnNonCrashFailures").ToBoolean().Value() ? TRUE : FALSE};
    Napi::Value r = change(SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &flag, "failureActionsOnNonCrashFailures");
    if (!r.IsUndefined()) return r;
  }
  if (Has(options, "delayedAutoStart")) {
    SERVICE_DELAYED_AUTO_START_INFO delayed = {options.Get("delayedAutoStart").ToBoolean().Value() ? TRUE : FALSE};
    Napi::Value r = change(SERVICE_CONFIG_DELAYED_AUTO_START_INFO, &delayed, "delayedAutoStart");
    if (!r.IsUndefined()) return r;
  }
  if (Has(options, "preshutdownTimeout")) {
    SERVICE_PRESHUTDOWN_INFO preshutdown = {Number(options, "preshutdownTimeout", 180000)};
    Napi::Value r = change(SERVICE_CONFIG_PRESHUTDOWN_INFO, &preshutdown, "preshutdownTimeout");
    if (!r.IsUndefined()) return r;
  }
  if (Has(options, "sidType") && options.Get("sidType").IsString()) {
    std::string type = options.Get("sidType").As<Napi::String>().Utf8Value();
    SERVICE_SID_INFO sid = {};
    sid.dwServiceSidType = type == "unrestricted" ? SERVICE_SID_TYPE_UNRESTRICTED
                           : type == "restricted" ? SERVICE_SID_TYPE_RESTRICTED
                                                  : SERVICE_SID_TYPE_NONE;
    Napi::Value r = change(SERVICE_CONFIG_SERVICE_SID_INFO, &sid, "sidType");
    if (!r.IsUndefined()) return r;
  }
  return Result(env, NO_ERROR);
}

// serviceDelete(name) -> { code, syscall }: marks the service for deletion (it
// goes once it has stopped and every handle to it is closed).
Napi::Value ServiceDelete(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) {
    ThrowType(env, "serviceDelete(name) needs the service name as a string");
    return env.Undefined();
  }
  std::wstring name = Widen(info[0].As<Napi::String>().Utf8Value());
  ScHandle manager;
  ScHandle service;
  Napi::Value failed = OpenService(env, name, SC_MANAGER_CONNECT, DELETE, &manager, &service);
  if (!failed.IsUndefined()) return failed;
  if (!DeleteService(service.handle)) return Result(env, GetLastError(), "DeleteService");
  return Result(env, NO_ERROR);
}

// serviceControl(name, 'start' | 'stop') -> { code, syscall, state }: StartServiceW,
// or ControlService(SERVICE_CONTROL_STOP); state is what the SCM reported back.
Napi::Value ServiceControl(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string what = info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
  if (!info[0].IsString() || (what != "start" && what != "stop")) {
    ThrowType(env, "serviceControl(name, action) needs the service name and 'start' or 'stop'");
    return env.Undefined();
  }
  std::wstring name = Widen(info[0].As<Napi::String>().Utf8Value());
  ScHandle manager;
  ScHandle service;
  DWORD access = SERVICE_QUERY_STATUS | (what == "start" ? SERVICE_START : SERVICE_STOP);
  Napi::Value failed = OpenService(env, name, SC_MANAGER_CONNECT, access, &manager, &service);
  if (!failed.IsUndefined()) return failed;
  SERVICE_STATUS status = {};
  if (what == "start") {
    if (!StartServiceW(service.handle, 0, nullptr)) return Result(env, GetLastError(), "StartServiceW");
    QueryServiceStatus(service.handle, &status);
  } else if (!ControlService(service.handle, SERVICE_CONTROL_STOP, &status)) {
    return Result(env, GetLastError(), "ControlService");
  }
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("state", StateName(status.dwCurrentState));
  return out;
}

// serviceQuery(name) -> { code, syscall, state, pid, win32ExitCode,
// serviceExitCode, startType, binPath, account, displayName, dependencies,
// description, failureActions, failureActionsOnNonCrashFailures,
// delayedAutoStart, preshutdownTimeout }. Query rights only. The optional
// parts an OS does not answer are null.
Napi::Value ServiceQuery(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) {
    ThrowType(env, "serviceQuery(name) needs the service name as a string");
    return env.Undefined();
  }
  std::wstring name = Widen(info[0].As<Napi::String>().Utf8Value());
  ScHandle manager;
  ScHandle service;
  Napi::Value failed =
      OpenService(env, name, SC_MANAGER_CONNECT, SERVICE_QUERY_STATUS | SERVICE_QUERY_CONFIG, &manager, &service);
  if (!failed.IsUndefined()) return failed;

  SERVICE_STATUS_PROCESS status = {};
  DWORD needed = 0;
  if (!QueryServiceStatusEx(service.handle, SC_STATUS_PROCESS_INFO, reinterpret_cast<LPBYTE>(&status), sizeof(status),
                            &needed)) {
    return Result(env, GetLastError(), "QueryServiceStatusEx");
  }
  std::vector<uint64_t> buffer(8192 / 8);
  auto* config = reinterpret_cast<QUERY_SERVICE_CONFIGW*>(buffer.data());
  if (!QueryServiceConfigW(service.handle, config, static_cast<DWORD>(buffer.size() * 8), &needed)) {
    DWORD rc = GetLastError();
    if (rc != ERROR_INSUFFICIENT_BUFFER) return Result(env, rc, "QueryServiceConfigW");
    buffer.assign((needed + 7) / 8, 0);
    config = reinterpret_cast<QUERY_SERVICE_CONFIGW*>(buffer.data());
    if (!QueryServiceConfigW(service.handle, config, needed, &needed)) return Result(env, GetLastError(), "QueryServiceConfigW");
  }
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("state", StateName(status.dwCurrentState));
  out.Set("pid", Napi::Number::New(env, status.dwProcessId));
  out.Set("win32ExitCode", Napi::Number::New(env, status.dwWin32ExitCode));
  out.Set("serviceExitCode", Napi::Number::New(env, status.dwServiceSpecificExitCode));
  out.Set("startType", StartTypeName(config->dwStartType));
  out.Set("binPath", config->lpBinaryPathName ? Narrow(config->lpBinaryPathName) : std::string());
  out.Set("account", config->lpServiceStartName ? Narrow(config->lpServiceStartName) : std::string());
  out.Set("displayName", config->lpDisplayName ? Narrow(config->lpDisplayName) : std::string());
  Napi::Array dependencies = Napi::Array::New(env);
  uint32_t n = 0;
  for (const wchar_t* p = config->lpDependencies; p && *p; p += wcslen(p) + 1) dependencies.Set(n++, Narrow(p));
  out.Set("dependencies", dependencies);

  std::vector<uint64_t> extra;
  DWORD rc = 0;
  out.Set("description", env.Null());
  if (QueryConfig2(service.handle, SERVICE_CONFIG_DESCRIPTION, &extra, &rc)) {
    const auto* d = reinterpret_cast<const SERVICE_DESCRIPTIONW*>(extra.data());
    out.Set("description", d->lpDescription ? Narrow(d->lpDescription) : std::string());
  }
  out.Set("failureActions", env.Null());
  if (QueryConfig2(service.handle, SERVICE_CONFIG_FAILURE_ACTIONS, &extra, &rc)) {
    const auto* f = reinterpret_cast<const SERVICE_FAILURE_ACTIONSW*>(extra.data());
    Napi::Object failure = Napi::Object::New(env);
    failure.Set("resetPeriod", Napi::Number::New(env, f->dwResetPeriod));
    Napi::Array actions = Napi::Array::New(env);
    for (DWORD i = 0; f->lpsaActions && i < f->cActions; ++i) {
      Napi::Object action = Napi::Object::New(env);
      action.Set("type", ActionName(f->lpsaActions[i].Type));
      action.Set("delay", Napi::Number::New(env, f->lpsaActions[i].Delay));
      actions.Set(i, action);
    }
    failure.Set("actions", actions);
    out.Set("failureActions", failure);
  }
  out.Set("failureActionsOnNonCrashFailures", env.Null());
  if (QueryConfig2(service.handle, SERVICE_CONFIG_FAILURE_ACTIONS_FLAG, &extra, &rc)) {
    const auto* f = reinterpret_cast<const SERVICE_FAILURE_ACTIONS_FLAG*>(extra.data());
    out.Set("failureActionsOnNonCrashFailures", Napi::Boolean::New(env, f->fFailureActionsOnNonCrashFailures != FALSE));
  }
  out.Set("delayedAutoStart", env.Null());
  if (QueryConfig2(service.handle, SERVICE_CONFIG_DELAYED_AUTO_START_INFO, &extra, &rc)) {
    const auto* d = reinterpret_cast<const SERVICE_DELAYED_AUTO_START_INFO*>(extra.data());
    out.Set("delayedAutoStart", Napi::Boolean::New(env, d->fDelayedAutostart != FALSE));
  }
  out.Set("preshutdownTimeout", env.Null());
  if (QueryConfig2(service.handle, SERVICE_CONFIG_PRESHUTDOWN_INFO, &extra, &rc)) {
    const auto* p = reinterpret_cast<const SERVICE_PRESHUTDOWN_INFO*>(extra.data());
    out.Set("preshutdownTimeout", Napi::Number::New(env, p->dwPreshutdownTimeout));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Hosting: the process the SCM starts. StartServiceCtrlDispatcherW blocks for
// the life of the service, so it runs on a thread of its own; the SCM calls
// ServiceMain and the control handler on threads of its dispatcher. What they
// see reaches JS as (type, value) through one thread-safe function:
//   'start'   ServiceMain runs, the status handle is registered (value 0)
//   'control' the SCM asks to stop: value is SERVICE_CONTROL_STOP (1),
//             _SHUTDOWN (5) or _PRESHUTDOWN (15); STOP_PENDING is already reported
//   'exit'    the dispatcher returned: value is 0, or its Win32 code (1063 when
//             the process was not started by the SCM)
// JS reports every state change with serviceHostStatus(). One per process.

struct HostEvent {
  const char* type;
  uint32_t value;
};

struct Host {
  std::mutex mutex;
  std::wstring name;
  SERVICE_STATUS_HANDLE handle = nullptr;
  SERVICE_STATUS status = {};
  DWORD stopWaitHint = 30000;
  HANDLE done = nullptr;  // set when JS reports SERVICE_STOPPED: ServiceMain returns
  Napi::ThreadSafeFunction tsfn;
};

Host* g_host = nullptr;
std::atomic<bool> g_hostStarted{false};

void Post(const char* type, uint32_t value) {
  auto* event = new HostEvent{type, value};
  napi_status rc = g_host->tsfn.BlockingCall(event, [](Napi::Env env, Napi::Function callback, HostEvent* e) {
    std::unique_ptr<HostEvent> owned(e);
    if (env != nullptr && callback != nullptr) {
      callback.Call({Napi::String::New(env, owned->type), Napi::Number::New(env, owned->value)});
    }
  });
  if (rc != napi_ok) delete event;
}

DWORD WINAPI ControlHandler(DWORD control, DWORD, LPVOID, LPVOID) {
  switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN:
    case SERVICE_CONTROL_PRESHUTDOWN: {
      {
        // the SCM wants an answer within 30 s: STOP_PENDING now, the stop itself in JS
        std::lock_guard<std::mutex> lock(g_host->mutex);
        if (g_host->status.dwCurrentState == SERVICE_STOPPED) return NO_ERROR;
        if (g_host->status.dwCurrentState != SERVICE_STOP_PENDING) {
          g_host->status.dwCurrentState = SERVICE_STOP_PENDING;
          g_host->status.dwControlsAccepted = 0;
          g_host->status.dwWaitHint = g_host->stopWaitHint;
          g_host->status.dwCheckPoint = 1;
          SetServiceStatus(g_host->handle, &g_host->status);
        }
      }
      Post("control", control);
      return NO_ERROR;
    }
    case SERVICE_CONTROL_INTERROGATE:
      return NO_ERROR;
    default:
      return ERROR_CALL_NOT_IMPLEMENTED;
  }
}

void WINAPI ServiceMain(DWORD, LPWSTR*) {
  SERVICE_STATUS_HANDLE handle = RegisterServiceCtrlHandlerExW(g_host->name.c_str(), ControlHandler, nullptr);
  if (!handle) {
    Post("error", GetLastError());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(g_host->mutex);
    g_host->handle = handle;
    g_host->status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
    g_host->status.dwCurrentState = SERVICE_START_PENDING;
    g_host->status.dwWaitHint = 30000;
    g_host->status.dwCheckPoint = 1;
    SetServiceStatus(handle, &g_host->status);
  }
  Post("start", 0);
  WaitForSingleObject(g_host->done, INFINITE);
}

// serviceHostStart(name, onEvent(type, value)) -> 0, or a Win32 code: starts the
// dispatcher thread. The thread-safe function keeps node alive until 'exit'.
Napi::Value ServiceHostStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsFunction()) {
    ThrowType(env, "serviceHostStart(name, onEvent) needs the service name and a function");
    return env.Undefined();
  }
  if (g_hostStarted.exchange(true)) return Napi::Number::New(env, ERROR_ALREADY_EXISTS);
  g_host = new Host();  // lives as long as the process: the SCM's threads may still use it
  g_host->name = Widen(info[0].As<Napi::String>().Utf8Value());
  g_host->done = CreateEventW(nullptr, TRUE, FALSE, nullptr);
  g_host->tsfn = Napi::ThreadSafeFunction::New(env, info[1].As<Napi::Function>(), "httpsys-service-host", 0, 1);
  std::thread([] {
    std::vector<wchar_t> name(g_host->name.begin(), g_host->name.end());
    name.push_back(L'\0');
    SERVICE_TABLE_ENTRYW table[] = {{name.data(), ServiceMain}, {nullptr, nullptr}};
    DWORD rc = StartServiceCtrlDispatcherW(table) ? NO_ERROR : GetLastError();
    Post("exit", rc);
    g_host->tsfn.Release();
  }).detach();
  return Napi::Number::New(env, NO_ERROR);
}

// serviceHostStatus(state, { waitHint?, stopWaitHint?, win32ExitCode?,
// serviceExitCode?, accept?: ['stop', 'shutdown', 'preshutdown'] }) -> 0 or a
// Win32 code. state: 'start_pending' | 'running' | 'stop_pending' | 'stopped'.
// A pending state reported again advances the checkpoint (progress for the
// SCM); 'stopped' lets ServiceMain return. stopWaitHint is the wait hint the
// control handler reports with STOP_PENDING.
Napi::Value ServiceHostStatus(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string state = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  DWORD value = state == "start_pending" ? SERVICE_START_PENDING
                : state == "running"     ? SERVICE_RUNNING
                : state == "stop_pending" ? SERVICE_STOP_PENDING
                : state == "stopped"     ? SERVICE_STOPPED
                                         : 0;
  if (value == 0) {
    ThrowType(env, "serviceHostStatus(state, options): state is start_pending, running, stop_pending or stopped");
    return env.Undefined();
  }
  Napi::Object options = info[1].IsObject() ? info[1].As<Napi::Object>() : Napi::Object::New(env);
  if (g_host == nullptr) return Napi::Number::New(env, ERROR_INVALID_HANDLE);
  std::lock_guard<std::mutex> lock(g_host->mutex);
  if (g_host->handle == nullptr) return Napi::Number::New(env, ERROR_INVALID_HANDLE);
  if (g_host->status.dwCurrentState == SERVICE_STOPPED) return Napi::Number::New(env, ERROR_SERVICE_NOT_ACTIVE);
  g_host->stopWaitHint = Number(options, "stopWaitHint", g_host->stopWaitHint);
  SERVICE_STATUS& s = g_host->status;
  bool pending = value == SERVICE_START_PENDING || value == SERVICE_STOP_PENDING;
  s.dwCheckPoint = pending ? (s.dwCurrentState == value ? s.dwCheckPoint + 1 : 1) : 0;
  s.dwCurrentState = value;
  s.dwWaitHint = pending ? Number(options, "waitHint", s.dwWaitHint) : 0;
  s.dwControlsAccepted = 0;
  if (value == SERVICE_RUNNING && options.Get("accept").IsArray()) {
    Napi::Array accept = options.Get("accept").As<Napi::Array>();
    for (uint32_t i = 0; i < accept.Length(); ++i) {
      std::string what = accept.Get(i).IsString() ? accept.Get(i).As<Napi::String>().Utf8Value() : "";
      if (what == "stop") s.dwControlsAccepted |= SERVICE_ACCEPT_STOP;
      if (what == "shutdown") s.dwControlsAccepted |= SERVICE_ACCEPT_SHUTDOWN;
      if (what == "preshutdown") s.dwControlsAccepted |= SERVICE_ACCEPT_PRESHUTDOWN;
    }
  }
  s.dwWin32ExitCode = value == SERVICE_STOPPED ? Number(options, "win32ExitCode", NO_ERROR) : NO_ERROR;
  s.dwServiceSpecificExitCode = value == SERVICE_STOPPED ? Number(options, "serviceExitCode", 0) : 0;
  DWORD rc = SetServiceStatus(g_host->handle, &s) ? NO_ERROR : GetLastError();
  if (value == SERVICE_STOPPED) SetEvent(g_host->done);
  return Napi::Number::New(env, rc);
}

}  // namespace

void InitServiceHost(Napi::Env env, Napi::Object exports) {
  exports.Set("serviceCreate", Napi::Function::New(env, ServiceCreate, "serviceCreate"));
  exports.Set("serviceConfigure", Napi::Function::New(env, ServiceConfigure, "serviceConfigure"));
  exports.Set("serviceDelete", Napi::Function::New(env, ServiceDelete, "serviceDelete"));
  exports.Set("serviceControl", Napi::Function::New(env, ServiceControl, "serviceControl"));
  exports.Set("serviceQuery", Napi::Function::New(env, ServiceQuery, "serviceQuery"));
  exports.Set("serviceHostStart", Napi::Function::New(env, ServiceHostStart, "serviceHostStart"));
  exports.Set("serviceHostStatus", Napi::Function::New(env, ServiceHostStatus, "serviceHostStatus"));
}

}  // namespace httpsys
