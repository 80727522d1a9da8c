// Windows services for `httpsys service`: creating, configuring, querying,
// controling and deleting a service through the service control manager, and
// hosting one (the process the SCM starts: `httpsys service run`). Thin calls:
// which account, which recovery actions, what a stop means and what exit code
// to report are src/service/'s policy. OS failures come back as
// { code, syscall }, only unusable JS arguments throw.
#pragma once

#include <napi.h>

namespace httpsys {

void InitServiceHost(Napi::Env env, Napi::Object exports);

}  // namespace httpsys
