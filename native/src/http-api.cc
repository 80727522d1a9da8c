#include "http-api.h"

#include <mutex>

namespace httpsys {

namespace {

const HTTPAPI_VERSION kVersion2 = HTTPAPI_VERSION_2;

template <typename Fn>
Fn Lookup(HMODULE module, const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(GetProcAddress(module, name)));
}

Api LoadApi() {
  Api api;
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  using WineVersionFn = const char*(CDECL*)();
  auto wineVersion = ntdll ? Lookup<WineVersionFn>(ntdll, "wine_get_version") : nullptr;
  if (wineVersion) api.wineVersion = wineVersion();

  HMODULE httpapi = GetModuleHandleW(L"httpapi.dll");
  if (!httpapi) httpapi = LoadLibraryW(L"httpapi.dll");
  if (!httpapi) return api;

  api.delegateRequestEx = Lookup<void*>(httpapi, "HttpDelegateRequestEx") != nullptr;

  if (api.wineVersion) {
    // Exported by Wine 8 but unimplemented (stubs, or calls that kill the
    // process): never called there. The same goes for the optional calls below.
    api.sendEntityBody = false;
    api.queueProperties = false;
    return api;
  }
  api.isFeatureSupported = Lookup<IsFeatureSupportedFn>(httpapi, "HttpIsFeatureSupported");
  api.queryRequestProperty = Lookup<QueryRequestPropertyFn>(httpapi, "HttpQueryRequestProperty");
  api.findUrlGroupId = Lookup<FindUrlGroupIdFn>(httpapi, "HttpFindUrlGroupId");
  api.updateServiceConfiguration =
      Lookup<UpdateServiceConfigurationFn>(httpapi, "HttpUpdateServiceConfiguration");
  api.cancelHttpRequest = Lookup<CancelHttpRequestFn>(httpapi, "HttpCancelHttpRequest");
  api.waitForDisconnect = Lookup<WaitForDisconnectFn>(httpapi, "HttpWaitForDisconnect");
  api.waitForDisconnectEx = Lookup<WaitForDisconnectExFn>(httpapi, "HttpWaitForDisconnectEx");
  api.flushResponseCache = Lookup<FlushResponseCacheFn>(httpapi, "HttpFlushResponseCache");
  return api;
}

}  // namespace

const Api& GetApi() {
  static const Api api = LoadApi();
  return api;
}

ULONG InitServer() {
  static std::once_flag once;
  static ULONG rc = 0;
  std::call_once(once, [] { rc = HttpInitialize(kVersion2, HTTP_INITIALIZE_SERVER, nullptr); });
  return rc;
}

ULONG InitConfig() {
  static std::once_flag once;
  static ULONG rc = 0;
  std::call_once(once, [] { rc = HttpInitialize(kVersion2, HTTP_INITIALIZE_CONFIG, nullptr); });
  return rc;
}

std::wstring Widen(const std::string& utf8) {
  if (utf8.empty()) return std::wstring();
  int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring out(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), &out[0], n);
  return out;
}

std::string Narrow(const wchar_t* text, int length) {
  if (!text || length == 0) return std::string();
  int n = WideCharToMultiByte(CP_UTF8, 0, text, length, nullptr, 0, nullptr, nullptr);
  if (n <= 0) return std::string();
  std::string out(static_cast<size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text, length, &out[0], n, nullptr, nullptr);
  if (length < 0 && !out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

}  // namespace httpsys
