// The addon's N-API imports name NODE.EXE. A renamed host or a single
// executable build (httpsys.exe) is not called that, so the delay-load hook
// answers "node.exe" with the running executable, whatever its name. node-gyp
// adds the same hook to MSVC builds (win_delay_load_hook); this file serves the
// mingw-w64 cross build.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <delayimp.h>
#include <string.h>

static FARPROC WINAPI HttpsysDelayLoadHook(unsigned event, PDelayLoadInfo info) {
  if (event == dliNotePreLoadLibrary && info && info->szDll && _stricmp(info->szDll, "node.exe") == 0) {
    return reinterpret_cast<FARPROC>(GetModuleHandleW(nullptr));
  }
  return nullptr;
}

extern "C" {
PfnDliHook __pfnDliNotifyHook2 = HttpsysDelayLoadHook;
}
