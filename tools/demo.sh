#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (tools/bootstrap.sh), builds what the demo runs into build/ and runs it.
#
#   bash tools/demo.sh [demo arguments...]
#
# Only the demo's targets are built: zkr_demo, with what it links (the zkrecipes libraries, zkrecipes::testing,
# which starts the local ZooKeeper) and the zkr tool it runs (a dependency of zkr_demo). The test suite is
# configured but not built (tools/test.sh builds it in the same build/).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/bootstrap.sh

generator=()
[ -f build/CMakeCache.txt ] || generator=(-G Ninja)  # keep the generator of an existing build/
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2 --target zkr_demo

exec build/tools/zkr_demo "$@"
