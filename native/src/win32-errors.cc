#include "win32-errors.h"

namespace httpsys {

namespace {

// Codes the HTTP Server API, the security, service, certificate and key calls
// and the IO completion path return
// (https://learn.microsoft.com/windows/win32/debug/system-error-codes; the
// HRESULTs of CryptoAPI and CNG are in winerror.h). Exported to JS twice from
// this one table: errors() (code -> name) and `win32` (name -> code).
const Win32Name kTable[] = {
    {0, "ERROR_SUCCESS"},
    {1, "ERROR_INVALID_FUNCTION"},
    {2, "ERROR_FILE_NOT_FOUND"},
    {3, "ERROR_PATH_NOT_FOUND"},
    {5, "ERROR_ACCESS_DENIED"},
    {6, "ERROR_INVALID_HANDLE"},
    {8, "ERROR_NOT_ENOUGH_MEMORY"},
    {13, "ERROR_INVALID_DATA"},
    {14, "ERROR_OUTOFMEMORY"},
    {32, "ERROR_SHARING_VIOLATION"},
    {38, "ERROR_HANDLE_EOF"},
    {50, "ERROR_NOT_SUPPORTED"},
    {64, "ERROR_NETNAME_DELETED"},
    {86, "ERROR_INVALID_PASSWORD"},
    {87, "ERROR_INVALID_PARAMETER"},
    {120, "ERROR_CALL_NOT_IMPLEMENTED"},
    {122, "ERROR_INSUFFICIENT_BUFFER"},
    {123, "ERROR_INVALID_NAME"},
    {126, "ERROR_MOD_NOT_FOUND"},
    {127, "ERROR_PROC_NOT_FOUND"},
    {183, "ERROR_ALREADY_EXISTS"},
    {234, "ERROR_MORE_DATA"},
    {259, "ERROR_NO_MORE_ITEMS"},
    {995, "ERROR_OPERATION_ABORTED"},
    {997, "ERROR_IO_PENDING"},
    {1004, "ERROR_INVALID_FLAGS"},
    {1058, "ERROR_SERVICE_DISABLED"},
    {1060, "ERROR_SERVICE_DOES_NOT_EXIST"},
    {1062, "ERROR_SERVICE_NOT_ACTIVE"},
    {1168, "ERROR_NOT_FOUND"},
    {1214, "ERROR_INVALID_NETNAME"},
    {1229, "ERROR_CONNECTION_INVALID"},
    {1232, "ERROR_HOST_UNREACHABLE"},
    {1236, "ERROR_CONNECTION_ABORTED"},
    {1312, "ERROR_NO_SUCH_LOGON_SESSION"},
    {1314, "ERROR_PRIVILEGE_NOT_HELD"},
    {1332, "ERROR_NONE_MAPPED"},
    {1336, "ERROR_INVALID_ACL"},
    {1337, "ERROR_INVALID_SID"},
    {1338, "ERROR_INVALID_SECURITY_DESCR"},
    {1355, "ERROR_NO_SUCH_DOMAIN"},
    {1450, "ERROR_NO_SYSTEM_RESOURCES"},
    {1460, "ERROR_TIMEOUT"},
    {4317, "ERROR_INVALID_OPERATION"},
    {10048, "WSAEADDRINUSE"},
    {10049, "WSAEADDRNOTAVAIL"},
    {0x80070005, "E_ACCESSDENIED"},
    {0x80090003, "NTE_BAD_KEY"},
    {0x80090005, "NTE_BAD_DATA"},
    {0x80090009, "NTE_BAD_FLAGS"},
    {0x8009000D, "NTE_NO_KEY"},
    {0x8009000F, "NTE_EXISTS"},
    {0x80090010, "NTE_PERM"},
    {0x80090011, "NTE_NOT_FOUND"},
    {0x80090015, "NTE_BAD_PUBLIC_KEY"},
    {0x80090016, "NTE_BAD_KEYSET"},
    {0x80090026, "NTE_INVALID_HANDLE"},
    {0x80090027, "NTE_INVALID_PARAMETER"},
    {0x80090029, "NTE_NOT_SUPPORTED"},
    {0x80092002, "CRYPT_E_BAD_ENCODE"},
    {0x80092004, "CRYPT_E_NOT_FOUND"},
    {0x8009200B, "CRYPT_E_NO_KEY_PROPERTY"},
    {0x80093100, "CRYPT_E_ASN1_ERROR"},
    {0x80093102, "CRYPT_E_ASN1_EOD"},
    {0x8009310B, "CRYPT_E_ASN1_BADTAG"},
    {0x800B0101, "CERT_E_EXPIRED"},
    {0x800B0109, "CERT_E_UNTRUSTEDROOT"},
    {0x800B010A, "CERT_E_CHAINING"},
    {0x800B010C, "CERT_E_REVOKED"},
    {0x800B010F, "CERT_E_CN_NO_MATCH"},
    {0x800B0110, "CERT_E_WRONG_USAGE"},
    {0x800B0112, "CERT_E_UNTRUSTEDCA"},
};

}  // namespace

const char* Win32ErrorName(uint32_t code) {
  for (const auto& entry : kTable) {
    if (entry.code == code) return entry.name;
  }
  return nullptr;
}

const Win32Name* Win32ErrorTable(size_t* count) {
  *count = sizeof(kTable) / sizeof(kTable[0]);
  return kTable;
}

}  // namespace httpsys
