// The HTTP Server API surface the addon uses: the SDK header, the declarations
// mingw-w64's http.h lacks, and the optional entry points loaded at run time.
#pragma once

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef _WIN32_WINNT
// Windows 8: SetFileCompletionNotificationModes and the v2 API are baseline there.
#define _WIN32_WINNT 0x0602
#endif

#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <http.h>

#include <string>

namespace httpsys {

// Values from the Windows SDK's http.h that mingw-w64 10 does not declare
// (https://learn.microsoft.com/windows/win32/api/http/). Own names, so MSVC
// builds with the full SDK header do not clash.
constexpr ULONG kQueueFlagOpenExisting = 0x1;  // HTTP_CREATE_REQUEST_QUEUE_FLAG_OPEN_EXISTING
constexpr ULONG kQueueFlagController = 0x2;    // HTTP_CREATE_REQUEST_QUEUE_FLAG_CONTROLLER
constexpr ULONG kSendFlagOpaque = 0x40;        // HTTP_SEND_RESPONSE_FLAG_OPAQUE
constexpr ULONG kResponseInfoPreserveOrder = 0x1;  // HTTP_RESPONSE_INFO_FLAGS_PRESERVE_ORDER
constexpr int kRequestInfoTypeSslProtocol = 2;     // HttpRequestInfoTypeSslProtocol
constexpr int kServiceConfigSslSniCertInfo = 5;    // HttpServiceConfigSslSniCertInfo

// HTTP_SSL_PROTOCOL_INFO (ALG_ID is an unsigned int).
struct SslProtocolInfo {
  ULONG Protocol;
  ULONG CipherType;
  ULONG CipherStrength;
  ULONG HashType;
  ULONG HashStrength;
  ULONG KeyExchangeType;
  ULONG KeyExchangeStrength;
};

// HTTP_SERVICE_CONFIG_SSL_SNI_KEY / _SET / _QUERY (Windows 8+).
struct SslSniKey {
  SOCKADDR_STORAGE IpPort;
  PWSTR Host;
};
struct SslSniSet {
  SslSniKey KeyDesc;
  HTTP_SERVICE_CONFIG_SSL_PARAM ParamDesc;
};
struct SslSniQuery {
  HTTP_SERVICE_CONFIG_QUERY_TYPE QueryDesc;
  SslSniKey KeyDesc;
  DWORD dwToken;
};

using CancelHttpRequestFn = ULONG(WINAPI*)(HANDLE, HTTP_REQUEST_ID, LPOVERLAPPED);
using WaitForDisconnectFn = ULONG(WINAPI*)(HANDLE, HTTP_CONNECTION_ID, LPOVERLAPPED);
using WaitForDisconnectExFn = ULONG(WINAPI*)(HANDLE, HTTP_CONNECTION_ID, ULONG, LPOVERLAPPED);
using UpdateServiceConfigurationFn =
    ULONG(WINAPI*)(HANDLE, HTTP_SERVICE_CONFIG_ID, PVOID, ULONG, LPOVERLAPPED);
using FindUrlGroupIdFn = ULONG(WINAPI*)(PCWSTR, HANDLE, PHTTP_URL_GROUP_ID);
using IsFeatureSupportedFn = BOOL(WINAPI*)(int);

// What this process may call. Everything newer than the Windows 8 baseline is
// resolved with GetProcAddress so the addon loads on every supported Windows;
// under Wine the entry points that are stubs (they abort the process when
// called) are left null even when the DLL exports them.
struct Api {
  const char* wineVersion = nullptr;  // non-null when running under Wine
  CancelHttpRequestFn cancelHttpRequest = nullptr;
  WaitForDisconnectFn waitForDisconnect = nullptr;
  WaitForDisconnectExFn waitForDisconnectEx = nullptr;
  UpdateServiceConfigurationFn updateServiceConfiguration = nullptr;
  FindUrlGroupIdFn findUrlGroupId = nullptr;
  IsFeatureSupportedFn isFeatureSupported = nullptr;
  bool delegateRequestEx = false;
  bool queryRequestProperty = false;
  // HttpSendResponseEntityBody is a stub in Wine 8: streaming goes through the
  // JS side's one-send fallback there.
  bool sendEntityBody = true;
  // Wine 8 implements neither queue properties nor URL group timeouts.
  bool queueProperties = true;
};

const Api& GetApi();

// HttpInitialize once per process and per role. Wine 8 starts its http service
// only for HTTP_INITIALIZE_SERVER alone, so the two roles are initialised apart.
ULONG InitServer();
ULONG InitConfig();

std::wstring Widen(const std::string& utf8);
std::string Narrow(const wchar_t* text, int length = -1);

}  // namespace httpsys
