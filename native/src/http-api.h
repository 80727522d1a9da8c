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
constexpr int kServiceConfigTimeout = 3;           // HttpServiceConfigTimeout
constexpr int kServiceConfigSslSniCertInfo = 5;    // HttpServiceConfigSslSniCertInfo
constexpr ULONG kRequestFlagHttp2 = 0x4;           // HTTP_REQUEST_FLAG_HTTP2
constexpr ULONG kRequestFlagHttp3 = 0x8;           // HTTP_REQUEST_FLAG_HTTP3
constexpr ULONG kSendFlagGoAway = 0x100;           // HTTP_SEND_RESPONSE_FLAG_GOAWAY
constexpr ULONG kLimitInfinite = 0xFFFFFFFF;       // HTTP_LIMIT_INFINITE
// HTTP_REQUEST_PROPERTY values
// (https://learn.microsoft.com/windows/win32/api/http/ne-http-http_request_property).
constexpr int kRequestPropertySni = 4;             // HttpRequestPropertySni
constexpr int kRequestPropertyTlsCipherInfo = 14;  // HttpRequestPropertyTlsCipherInfo
constexpr ULONG kSniFlagNoSni = 0x2;               // HTTP_REQUEST_PROPERTY_SNI_FLAG_NO_SNI

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

// HTTP_REQUEST_PROPERTY_SNI.
struct RequestPropertySni {
  WCHAR Hostname[256];  // HTTP_REQUEST_PROPERTY_SNI_HOST_MAX_LENGTH + 1
  ULONG Flags;
};

// SecPkgContext_CipherInfo (schannel.h), the answer to HttpRequestPropertyTlsCipherInfo.
struct TlsCipherInfo {
  DWORD dwVersion;
  DWORD dwProtocol;
  DWORD dwCipherSuite;
  DWORD dwBaseCipherSuite;
  WCHAR szCipherSuite[64];
  WCHAR szCipher[64];
  DWORD dwCipherLen;
  DWORD dwCipherBlockLen;
  WCHAR szHash[64];
  DWORD dwHashLen;
  WCHAR szExchange[64];
  DWORD dwMinExchangeLen;
  DWORD dwMaxExchangeLen;
  WCHAR szCertificate[64];
  DWORD dwKeyType;
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
using FlushResponseCacheFn = ULONG(WINAPI*)(HANDLE, PCWSTR, ULONG, LPOVERLAPPED);
using QueryRequestPropertyFn = ULONG(WINAPI*)(HANDLE, HTTP_OPAQUE_ID, int, PVOID, ULONG, PVOID, ULONG, PULONG,
                                              LPOVERLAPPED);

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
  QueryRequestPropertyFn queryRequestProperty = nullptr;
  // Wine 8 keeps no response cache (its cache policy is ignored): nothing to flush.
  FlushResponseCacheFn flushResponseCache = nullptr;
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
