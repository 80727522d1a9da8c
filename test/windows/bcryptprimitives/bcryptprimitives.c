/*
 * A stand-in bcryptprimitives.dll for the Wine test prefix ONLY (docs/wine.md 2.12).
 * Never shipped, never built for a user: test/windows/run.sh builds it with mingw-w64
 * and copies it into the prefix's system32.
 *
 * Why: Go 1.22+'s runtime loads bcryptprimitives.dll from system32 at start and takes
 * ProcessPrng from it for its random numbers (runtime/os_windows.go
 * loadOptionalSyscalls, crypto/internal/sysrand); Wine 8 has no such DLL, so every Go
 * program, the native router (router/) among them, dies with "bcryptprimitives.dll
 * not found" before main. Go needs nothing else from this DLL.
 *
 * ProcessPrng (Windows 10+): fills the buffer with random bytes and always returns
 * TRUE. Here the bytes come from RtlGenRandom (advapi32 SystemFunction036), which Wine
 * implements over the host's random source; it takes a ULONG, so large buffers go in
 * pieces. Should it ever fail, the process ends: Go treats a failing ProcessPrng as
 * fatal too, and returning FALSE would only move that to a less clear place.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG n = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!SystemFunction036(data, n)) ExitProcess(0xC000000D);
        data += n;
        size -= n;
    }
    return TRUE;
}
