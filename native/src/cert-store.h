// The LocalMachine certificate stores HTTP.SYS binds from, for `httpsys cert`:
// import a certificate with its private key (a PFX, or PEM files), add one without a
// key (a chain's intermediates, into CA), look one up by thumbprint. Synchronous setup calls, never on a request path. OS failures come
// back as { code } (a Win32 code or a CryptoAPI/CNG HRESULT); only unusable JS
// arguments throw.
#pragma once

#include <napi.h>

namespace httpsys {

void InitCertStore(Napi::Env env, Napi::Object exports);

}  // namespace httpsys
