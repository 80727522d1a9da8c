// The one table that turns Win32 codes into stable strings. JS builds the
// error objects (src/httpsys/errors.js); C++ only reports codes.
#pragma once

#include <cstdint>

namespace httpsys {

struct Win32Name {
  uint32_t code;
  const char* name;
};

// nullptr for a code the table does not know.
const char* Win32ErrorName(uint32_t code);

// The whole table, for JS to export it once.
const Win32Name* Win32ErrorTable(size_t* count);

}  // namespace httpsys
