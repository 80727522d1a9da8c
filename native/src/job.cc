#include "job.h"

#include <windows.h>

namespace httpsys {

namespace {

// The job this process put itself in; never closed: the kernel closes it when the
// process ends, and that is what kills the tree.
HANDLE g_job = nullptr;

Napi::Object Result(Napi::Env env, DWORD code, const char* syscall) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("code", Napi::Number::New(env, code));
  if (code != 0 && syscall != nullptr) out.Set("syscall", Napi::String::New(env, syscall));
  return out;
}

// jobKillOnClose() -> { code, syscall? }: puts this process in a new job that kills
// every process in it when the last handle to it closes, which is when this process
// ends, however it ends. Processes it starts from then on are in the job (nested under
// libuv's own job for its children, Windows 8 and later), and no breakaway is allowed,
// so their children are too. Calling it again does nothing.
Napi::Value JobKillOnClose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (g_job != nullptr) return Result(env, 0, nullptr);
  HANDLE job = CreateJobObjectW(nullptr, nullptr);
  if (job == nullptr) return Result(env, GetLastError(), "CreateJobObjectW");
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof(limits))) {
    DWORD code = GetLastError();
    CloseHandle(job);
    return Result(env, code, "SetInformationJobObject");
  }
  if (!AssignProcessToJobObject(job, GetCurrentProcess())) {
    DWORD code = GetLastError();
    CloseHandle(job);
    return Result(env, code, "AssignProcessToJobObject");
  }
  g_job = job;
  return Result(env, 0, nullptr);
}

// jobContains(pid) -> { code, inJob }: whether a process is in this process's job
// (tests and `httpsys doctor` ask it).
Napi::Value JobContains(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "pid must be a number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Object out = Result(env, 0, nullptr);
  if (g_job == nullptr) {
    out.Set("inJob", Napi::Boolean::New(env, false));
    return out;
  }
  DWORD pid = info[0].As<Napi::Number>().Uint32Value();
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid);
  if (process == nullptr) return Result(env, GetLastError(), "OpenProcess");
  BOOL in = FALSE;
  BOOL ok = IsProcessInJob(process, g_job, &in);
  DWORD code = ok ? 0 : GetLastError();
  CloseHandle(process);
  if (!ok) return Result(env, code, "IsProcessInJob");
  out.Set("inJob", Napi::Boolean::New(env, in != FALSE));
  return out;
}

}  // namespace

void InitJob(Napi::Env env, Napi::Object exports) {
  exports.Set("jobKillOnClose", Napi::Function::New(env, JobKillOnClose, "jobKillOnClose"));
  exports.Set("jobContains", Napi::Function::New(env, JobContains, "jobContains"));
}

}  // namespace httpsys
