#!/bin/sh
# Build NGINX Unit 1.35.0 with its node module for the bench matrix's "unit" column
# (bench/README.md). Machine-local: everything goes under PREFIX, nothing into the repo.
#
#   bench/unit/build.sh SRC [PREFIX]
#
# SRC is a checkout of github.com/nginx/unit at tag 1.35.0 (git clone --branch 1.35.0
# https://github.com/nginx/unit, or `git archive 1.35.0` of a mirror). PREFIX defaults to
# ${XDG_CACHE_HOME:-$HOME/.cache}/httpsys-bench/unit-1.35.0, where bench/lib/unit.js looks.
# Needs a C compiler, make, libssl-dev and libpcre2-dev (apt-get install build-essential
# libssl-dev libpcre2-dev), node's headers (/usr/include/node, or npm_config_nodedir), and
# npm's bundled node-gyp.
set -eu

SRC=${1:?usage: bench/unit/build.sh SRC [PREFIX]}
PREFIX=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/httpsys-bench/unit-1.35.0}
# the module's make targets are named after --node ("node-local-install"), so the name, not a path
NODE=node
command -v node >/dev/null || { echo "node is not on PATH" >&2; exit 1; }
NPM=$(command -v npm)
# npm ships node-gyp; a global one is used when there is one
NODE_GYP=$(command -v node-gyp || true)
if [ -z "$NODE_GYP" ]; then
  NODE_GYP="$(dirname "$(readlink -f "$NPM")")/../node_modules/node-gyp/bin/node-gyp.js"
fi
# node's headers: Debian's nodejs puts them in /usr/include/node, so node-gyp needs no download
export npm_config_nodedir=${npm_config_nodedir:-/usr}

mkdir -p "$PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
cd "$SRC"
grep -q '^NXT_VERSION=1.35.0' version || { echo "$SRC is not Unit 1.35.0 (see its file 'version')" >&2; exit 1; }

# a private prefix: the state, the control socket, the log and the pid file are the
# harness's to choose on its command line (bench/lib/unit.js), these are only defaults
./configure --prefix="$PREFIX" --openssl --user="$(id -un)" --group="$(id -gn)" \
  --statedir="$PREFIX/state" --runstatedir="$PREFIX/run" --logdir="$PREFIX/log" \
  --tmpdir="${TMPDIR:-/tmp}"
./configure nodejs --node="$NODE" --npm="$NPM" --node-gyp="$NODE_GYP" --local="$PREFIX/node"
make -j"$(nproc)"
# also installs unit-http into $PREFIX/node/node_modules (--local), node-gyp building its
# addon against this node (npm 11 warns that the install script is not in an allowScripts
# list, and runs it)
make install
test -f "$PREFIX/node/node_modules/unit-http/build/Release/unit-http.node" \
  || { echo "unit-http's addon was not built (see node-gyp's output above)" >&2; exit 1; }
echo "Unit built: $PREFIX/sbin/unitd, its node module in $PREFIX/node/node_modules/unit-http"
