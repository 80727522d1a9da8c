#!/usr/bin/env bash
# Cross-compiles the HTTP.SYS addon for win32-x64 on Linux with mingw-w64:
#   npm run build:win   ->   prebuilds/win32-x64/httpsys_native.node
# Needs g++-mingw-w64-x86-64 (the -posix variant: node-addon-api uses std::mutex)
# and the devDependencies node-api-headers + node-addon-api. On Windows use
# node-gyp (binding.gyp) instead.
set -euo pipefail
cd "$(dirname "$0")/.."

CXX="${HTTPSYS_MINGW_CXX:-x86_64-w64-mingw32-g++-posix}"
DLLTOOL="${HTTPSYS_MINGW_DLLTOOL:-x86_64-w64-mingw32-dlltool}"
STRIP="${HTTPSYS_MINGW_STRIP:-x86_64-w64-mingw32-strip}"
for tool in "$CXX" "$DLLTOOL" "$STRIP"; do
  if ! command -v "$tool" > /dev/null; then
    echo "build-win: $tool not found; install it with: apt-get install g++-mingw-w64-x86-64 mingw-w64-tools" >&2
    exit 1
  fi
done

HEADERS="$(node -p "require('node-api-headers').include_dir")"
DEFS="$(dirname "$HEADERS")/def"
ADDON_API="$(node -p "require('node-addon-api').include_dir")"
OUT=build/win-cross
DEST=prebuilds/win32-x64
mkdir -p "$OUT" "$DEST"

# One import library for every N-API symbol NODE.EXE exports, as a delay-import
# library (-y): the hook in delay-load-hook.cc resolves "node.exe" to the
# running executable, so a renamed host or a single executable build works.
# js_native_api.def lacks a trailing newline, hence the echo.
{ cat "$DEFS/js_native_api.def"; echo; tail -n +3 "$DEFS/node_api.def"; } | grep -v '^\s*$' > "$OUT/node_api_all.def"
"$DLLTOOL" -d "$OUT/node_api_all.def" -y "$OUT/libnode_api_delay.a" -m i386:x86-64

SOURCES=(native/src/*.cc)
"$CXX" -std=c++17 -O2 -shared -Wall -Wno-unknown-pragmas -Wno-cast-function-type \
  -DNAPI_VERSION=8 -DNAPI_DISABLE_CPP_EXCEPTIONS -DBUILDING_NODE_EXTENSION -DUNICODE -D_UNICODE \
  -I"$HEADERS" -I"$ADDON_API" \
  -o "$OUT/httpsys_native.node" "${SOURCES[@]}" \
  "$OUT/libnode_api_delay.a" -ldelayimp -lhttpapi -lws2_32 -ladvapi32 -lcrypt32 -lncrypt -liphlpapi \
  -static -static-libgcc -static-libstdc++ -Wl,--no-undefined
"$STRIP" "$OUT/httpsys_native.node"
cp "$OUT/httpsys_native.node" "$DEST/httpsys_native.node"
echo "build-win: $DEST/httpsys_native.node ($(stat -c %s "$DEST/httpsys_native.node") bytes)" >&2
