#!/usr/bin/env bash
# The single executables (docs/single-executable.md): npm run build:exe, then
# test/exe/run-tests.js (with `npm pack` and an install from its tarballs, about 3
# minutes): the Linux executable here, the Windows one under Wine when
# test/windows/run.sh has set Wine up (its cache: HTTPSYS_WINE_CACHE, default
# ~/.cache/httpsys-windows). Ends with a plain `N passed, N failed` line. Extra
# arguments filter tests by name.
set -uo pipefail
cd "$(dirname "$0")/../.."

CACHE="${HTTPSYS_WINE_CACHE:-$HOME/.cache/httpsys-windows}"
export WINEPREFIX="$CACHE/prefix"
export WINEDEBUG=-all
export HTTPSYS_WINE_LOGS="${HTTPSYS_WINE_LOGS:-$PWD/build/wine-logs-exe}"

fail_setup () {
  echo "test/exe: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

as_root () {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

# strip takes node's symbol tables out of the Linux executables (about 12 MB each): the
# host's binutils for x64, the cross binutils (or llvm-strip) for arm64
need=()
command -v strip > /dev/null || need+=(binutils)
command -v aarch64-linux-gnu-strip > /dev/null || command -v llvm-strip > /dev/null || need+=(binutils-aarch64-linux-gnu)
# the linux-arm64 executable runs under qemu's user-mode emulator, with arm64 glibc and
# libstdc++ from Debian's cross packages
command -v qemu-aarch64-static > /dev/null || need+=(qemu-user-static)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || need+=(libc6-arm64-cross)
[ -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ] || need+=(libstdc++6-arm64-cross libgcc-s1-arm64-cross)
if [ ${#need[@]} -gt 0 ]; then
  echo "== test/exe: apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { as_root apt-get update -q && as_root apt-get install -y -q --no-install-recommends "${need[@]}"; } > /tmp/httpsys-exe-apt.log 2>&1 ||
    echo "apt-get install failed (log: /tmp/httpsys-exe-apt.log): the executables stay unstripped, and the arm64 one is not run"
fi

if [ ! -d node_modules/esbuild ] || [ ! -d node_modules/postject ] || [ ! -d node_modules/resedit ]; then
  npm install --no-audit --no-fund > /dev/null 2>&1 || fail_setup "npm install failed"
fi
# the Windows executable carries the addon: test/windows/run.sh builds it; on its own,
# this builds it when mingw-w64 is there
if [ ! -f prebuilds/win32-x64/httpsys_native.node ] && command -v x86_64-w64-mingw32-g++-posix > /dev/null; then
  echo "== test/exe: npm run build:win"
  bash scripts/build-win.sh > /dev/null || fail_setup "the mingw-w64 build of the addon failed"
fi
# every executable carries its platform's native router, cross-built with Go (issue 25)
command -v go > /dev/null || fail_setup "\`go\` is not on PATH: the executables carry the native router (Go 1.24 or later, README \"Development\")"
targets=linux-x64,linux-arm64,win-arm64
[ -f prebuilds/win32-x64/httpsys_native.node ] && targets="$targets,win-x64"

echo "== test/exe: npm run build:exe -- --targets $targets"
t0=$(date +%s)
node scripts/build-exe.js --targets "$targets" 2>&1 | grep -v "^warning: " || fail_setup "npm run build:exe failed"
echo "# built in $(( $(date +%s) - t0 )) s"

wine=0
if command -v wine > /dev/null && [ -f "$WINEPREFIX/.httpsys-ready" ]; then
  wine=1
  rm -rf "$HTTPSYS_WINE_LOGS"
  # one wineserver for the run; its output must not hold a pipe open (CI tees this)
  wineserver -p > /dev/null 2>&1
fi
echo "== test/exe: tests"
node test/exe/run-tests.js "$@"
status=$?
[ "$wine" = 1 ] && { wineserver -k > /dev/null 2>&1 || true; }
exit $status
