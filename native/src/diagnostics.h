// What `httpsys doctor` asks the machine: the state of a Windows service (the
// HTTP service is HTTP.SYS), whether this process is elevated, which processes
// listen on which TCP ports, a process's image name, and HTTP.SYS's machine-wide
// timers. Synchronous setup calls;
// OS failures come back as { code }, only unusable JS arguments throw.
#pragma once

#include <napi.h>

namespace httpsys {

void InitDiagnostics(Napi::Env env, Napi::Object exports);

}  // namespace httpsys
