#include "win32-errors.h"

namespace httpsys {

namespace {

// Codes the HTTP Server API, the security calls and the IO completion path
// return (https://learn.microsoft.com/windows/win32/debug/system-error-codes).
const Win32Name kTable[] = {
    {0, "ERROR_SUCCESS"},
    {1, "ERROR_INVALID_FUNCTION"},
    {2, "ERROR_FILE_NOT_FOUND"},
    {3, "ERROR_PATH_NOT_FOUND"},
    {5, "ERROR_ACCESS_DENIED"},
    {6, "ERROR_INVALID_HANDLE"},
    {8, "ERROR_NOT_ENOUGH_MEMORY"},
    {14, "ERROR_OUTOFMEMORY"},
    {32, "ERROR_SHARING_VIOLATION"},
    {38, "ERROR_HANDLE_EOF"},
    {50, "ERROR_NOT_SUPPORTED"},
    {64, "ERROR_NETNAME_DELETED"},
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
