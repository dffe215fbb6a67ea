#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (tools/bootstrap.sh), builds zkrecipes into build/ and runs the demo.
#
#   bash tools/demo.sh [demo arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/bootstrap.sh

generator=()
[ -f build/CMakeCache.txt ] || generator=(-G Ninja)  # keep the generator of an existing build/
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2

exec build/tools/zkr_demo "$@"
