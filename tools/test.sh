#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (tools/bootstrap.sh), checks the formatting (tools/check_format.sh, a
# failing step), builds the TLS-capable C client the TLS tests use (tools/build-zookeeper-tls.sh) and runs the
# whole zkrecipes test suite:
#   1. build/       RelWithDebInfo, warnings as errors (ZKR_WERROR=ON), on the single-threaded ZooKeeper C
#                   client built with TLS (tools/build-zookeeper-tls.sh), carrying the native transport too;
#                   ctest -j3: every test over the C client, and every integration test again over the native
#                   transport (`native.*`, ZKR_ZOOKEEPER_TRANSPORT=native) from the same test programs
#   2. build-asan/  Debug with AddressSanitizer + UndefinedBehaviorSanitizer (ZKR_SANITIZE=ON), a native-only
#                   build (ZKR_ZOOKEEPER_CLIENT=native: it links no ZooKeeper C client); the unit tests, with
#                   leak detection
#   Every build here compiles the libraries as unity sources (ZKR_UNITY_LIBRARIES, as the test programs always
#   are: about half the compile time); a developer's build checks each source on its own.
#   The integration tests start real ZooKeeper JVMs on a 2-core machine. No test is re-run: a test that fails
#   on a loaded machine is a bug in the library or in the test's bounds, and fails the run.
#   3. build-mt/    the demo on Debian's multi-threaded C client alone (unoptimized, no native transport: the
#                   C-client-only configuration): it builds, and takes locks
#   4. build-fuzz/  clang with -DZKR_FUZZ=ON: only the libFuzzer targets, 20 s each (ctest -L fuzz); skipped
#                   when clang++ or its libFuzzer runtime is missing
# Exits non-zero if any step fails, after running every step it can; the last line is a one-line summary.
#
#   bash tools/test.sh [--quick]      --quick skips the sanitizer and multi-threaded builds
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -h | --help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

start=$(date +%s)
start_marker=$(mktemp)  # ctest logs older than this run are not reported
trap 'rm -f "$start_marker"' EXIT
passed=()
failed=()
skipped=()

# step <name> <command...>: runs the command, records the outcome, returns its status.
step() {
  local name=$1
  shift
  echo
  echo "==> [$name] $*"
  if "$@"; then
    passed+=("$name")
    return 0
  fi
  failed+=("$name")
  echo "==> [$name] FAILED" >&2
  return 1
}

# failed_tests_report <build dir>: the tests that failed in that build's last ctest run and the end of each one's
# output, repeated here at the end of the log so that a reader of only its last lines sees which test failed and
# how (ctest prints them where they failed, before the later steps' output).
failed_tests_report() {
  local dir=$1/Testing/Temporary
  [ -s "$dir/LastTestsFailed.log" ] && [ "$dir/LastTestsFailed.log" -nt "$start_marker" ] || return 0
  echo
  echo "==> failed in $1:"
  sed 's/^[0-9]*://' "$dir/LastTestsFailed.log" | head -n 8 | while IFS= read -r name; do
    echo "--- $name (the end of its output)"
    awk -v name="$name" '
      $0 ~ /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); inside = ($0 == name); next }
      inside && /^<end of output>$/ { inside = 0 }
      inside { print }' "$dir/LastTest.log" | tail -n 40
  done
}

summary() {
  local elapsed=$(($(date +%s) - start))
  echo
  if [ "${#failed[@]}" -eq 0 ]; then
    echo "test.sh: PASSED in ${elapsed}s: ${passed[*]}${skipped:+ (skipped: ${skipped[*]})}"
    exit 0
  fi
  for build_dir in build build-asan build-fuzz; do failed_tests_report "$build_dir"; done
  echo
  echo "test.sh: FAILED in ${elapsed}s: ${failed[*]}${passed:+ (passed: ${passed[*]})}${skipped:+ (skipped: ${skipped[*]})}"
  exit 1
}

generator_for() { [ -f "$1/CMakeCache.txt" ] || echo "-G Ninja"; }  # keep an existing build's generator

if ! step bootstrap bash tools/bootstrap.sh; then
  summary
fi

# The sources follow .clang-format (a failing step: bash tools/check_format.sh --fix mends it).
step format bash tools/check_format.sh

# The TLS-capable ZooKeeper C client the TLS tests use (Debian's own is built without OpenSSL): built from
# Debian's source package into build-tls-client/prefix, where the test build finds it (ZKR_TLS_CLIENT_PREFIX).
step tls-client bash tools/build-zookeeper-tls.sh

# The interop tests fail, instead of skipping, when the Java Curator peer cannot run (test/integration/curator_peer.hpp).
export ZKR_REQUIRE_CURATOR_PEER=1

# 1. The release-ish build, warnings as errors.
# shellcheck disable=SC2046
# On the single-threaded client with TLS: the one tools/build-zookeeper-tls.sh built from Debian's source
# package (the same 3.8 client as Debian's, plus OpenSSL), so that the TLS tests run here; the sanitizer build
# below links Debian's own multi-threaded client, without TLS (its TLS tests check the typed refusal). The
# library paths are given, not only the prefix: a build directory configured before (tools/demo.sh) has
# Debian's cached.
tls_prefix=$PWD/build-tls-client/prefix
if step configure cmake -S . -B build $(generator_for build) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZKR_WERROR=ON \
  -DZKR_ZOOKEEPER_CLIENT=st -DZKR_ZOOKEEPER_TLS=ON -DZKR_UNITY_LIBRARIES=ON "-DCMAKE_PREFIX_PATH=$tls_prefix" \
  "-DZooKeeper_INCLUDE_DIR=$tls_prefix/include" "-DZooKeeper_ST_LIBRARY=$tls_prefix/lib/libzookeeper_st.a" &&
  step build cmake --build build -j2; then
  step ctest ctest --test-dir build --output-on-failure --no-tests=error -j3
else
  skipped+=("ctest")
fi

# 2. The sanitizer build.
if [ "$quick" -eq 1 ]; then
  skipped+=("asan (--quick)")
else
  # shellcheck disable=SC2046
  if step asan-configure cmake -S . -B build-asan $(generator_for build-asan) -DCMAKE_BUILD_TYPE=Debug \
    -DZKR_SANITIZE=ON -DZKR_BUILD_BENCH=OFF -DZKR_WERROR=ON -DZKR_ZOOKEEPER_CLIENT=native -DZKR_UNITY_LIBRARIES=ON &&
    step asan-build cmake --build build-asan -j2 --target zkr_unit_tests; then
    step asan-ctest env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
      LSAN_OPTIONS="suppressions=$PWD/test/lsan.supp" \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure --no-tests=error -j2 -R '^unit\.'
  else
    skipped+=("asan-ctest")
  fi
fi

# 3. The multi-threaded C client (Debian's libzookeeper_mt, the flavour Conan Center ships): the demo's targets
#    (the libraries, zkrecipes::testing and the zkr tool), unoptimized, and the demo run on them: a local
#    ZooKeeper, several `zkr lock` processes taking one lock in turn. Built with ZKR_ZOOKEEPER_TLS=OFF, the
#    one build here whose native transport is the plain-socket one (framework/src/native/stream.hpp).
if [ "$quick" -eq 1 ]; then
  skipped+=("mt (--quick)")
else
  # shellcheck disable=SC2046
  if step mt-configure cmake -S . -B build-mt $(generator_for build-mt) -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DZKR_WERROR=ON -DZKR_ZOOKEEPER_CLIENT=mt -DZKR_ZOOKEEPER_TLS=OFF \
    -DZKR_NATIVE_TRANSPORT=OFF -DZKR_BUILD_TESTS=OFF -DZKR_BUILD_BENCH=OFF -DZKR_UNITY_LIBRARIES=ON &&
    step mt-build cmake --build build-mt -j2 --target zkr_demo; then
    step mt-demo build-mt/tools/zkr_demo
  else
    skipped+=("mt-demo")
  fi
fi

# 4. A short fuzzing run (clang + libFuzzer): only the fuzz targets are built.
# libFuzzer needs clang and its runtime: probe both with a one-line fuzz target.
fuzz_available() {
  command -v clang++ > /dev/null 2>&1 || return 1
  local probe
  probe=$(mktemp -d) || return 1
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
  clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" > /dev/null 2>&1
  local rc=$?
  rm -rf "$probe"
  return $rc
}
if ! fuzz_available; then
  skipped+=("fuzz (no clang++ with libFuzzer)")
else
  # shellcheck disable=SC2046
  if step fuzz-configure env CC=clang CXX=clang++ cmake -S . -B build-fuzz $(generator_for build-fuzz) \
    -DCMAKE_BUILD_TYPE=Debug -DZKR_FUZZ=ON -DZKR_BUILD_BENCH=OFF -DZKR_WERROR=ON &&
    step fuzz-build cmake --build build-fuzz -j2 --target zkr_fuzz_paths zkr_fuzz_lock_names zkr_fuzz_native_decoder; then
    step fuzz-ctest ctest --test-dir build-fuzz --output-on-failure --no-tests=error -L fuzz
  else
    skipped+=("fuzz-ctest")
  fi
fi

summary
