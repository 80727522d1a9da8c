// The supervisor's job object: every process it starts, and every process those start,
// dies with it (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), so nothing an app started outlives
// a supervisor that was killed outright. libuv's own job stops at the supervisor's
// children (it lets their children break away silently); this one lets nothing out.
#pragma once

#include <napi.h>

namespace httpsys {

void InitJob(Napi::Env env, Napi::Object exports);

}  // namespace httpsys
