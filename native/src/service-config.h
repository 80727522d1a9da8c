// Machine-wide HTTP.SYS configuration for the setup commands: URL ACLs, TLS
// certificate bindings (IP:port and SNI host:port), account <-> SID lookup.
// Synchronous: these are short local calls made by CLI commands, never on a
// request path. Every function reports Win32 codes; JS words the errors.
#pragma once

#include <napi.h>

namespace httpsys {

void InitServiceConfig(Napi::Env env, Napi::Object exports);

}  // namespace httpsys
