#!/usr/bin/env bash
# Builds the ZooKeeper C client 3.8 with TLS (OpenSSL) and SASL (Cyrus SASL), both flavours, from Debian 12's
# source package. Debian's own libzookeeper-st2/-mt2 are built without either: they lack zookeeper_init_ssl
# and zookeeper_init_sasl. One build carries both, so that CI builds the C client once.
#
#   bash tools/build-zookeeper-tls.sh [PREFIX]      (default: build-tls-client/prefix in the repository)
#
# PREFIX gets include/zookeeper/*.h, lib/libzookeeper_{st,mt}.{a,so} and bin/cli_{st,mt}; the work tree
# (sources, apt state, CMake builds, logs) is PREFIX's sibling directory "work". Consumers define
# HAVE_OPENSSL_H and HAVE_CYRUS_SASL_H (and THREADED for mt), link OpenSSL and libsasl2 beside the .a, and need an rpath to the .so: its soname
# is the same as Debian's non-TLS library (docs/tls.md).
#
# Idempotent: does nothing when PREFIX already holds both libraries exporting zookeeper_init_ssl and
# zookeeper_init_sasl. Needs only
# Debian's mirror; installs its build dependencies with apt-get when missing (run as root or with sudo).
set -euo pipefail

usage() { sed -n '2,13s/^# \{0,1\}//p' "$0"; }
die() {
  echo "build-zookeeper-tls: $*" >&2
  exit 1
}
trap 'echo "build-zookeeper-tls: failed (line $LINENO: $BASH_COMMAND)" >&2' ERR

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  -*) echo "build-zookeeper-tls: unknown option '$1'" >&2; usage >&2; exit 2 ;;
esac
[ $# -le 1 ] || { usage >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$repo/build-tls-client/prefix}
mkdir -p "$prefix" 2> /dev/null || die "cannot create the prefix $prefix"
prefix=$(cd "$prefix" && pwd)
work=$(dirname "$prefix")/work
flavours=(st mt)

exports() { [ -f "$1" ] && nm -D --defined-only "$1" 2> /dev/null | grep -qw "$2"; }
exports_tls() { exports "$1" zookeeper_init_ssl && exports "$1" zookeeper_init_sasl; }

built=1
for f in "${flavours[@]}"; do
  exports_tls "$prefix/lib/libzookeeper_$f.so" && [ -f "$prefix/lib/libzookeeper_$f.a" ] || built=0
done
if [ "$built" = 1 ]; then
  echo "build-zookeeper-tls: $prefix already has libzookeeper_st and libzookeeper_mt with TLS and SASL; nothing to do"
  exit 0
fi

# --- build dependencies (Debian packages only) -------------------------------------------------------------
command -v apt-get > /dev/null || die "apt-get not found: this script supports Debian 12 (bookworm) only"
needed=(
  dpkg-dev                # dpkg-source, for apt-get source
  patch libssl-dev openssl libsasl2-dev cmake make gcc libc6-dev binutils
  libzookeeper-java       # /usr/share/java/zookeeper-jute.jar holds the jute compiler
  default-jre-headless    # runs it
)
missing=()
for p in "${needed[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2> /dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null || die "missing packages (${missing[*]}); run as root or install sudo"
    sudo=(sudo)
  fi
  echo "build-zookeeper-tls: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
    die "apt-get install ${missing[*]} failed"
fi

# --- 1. the source package, through private apt state (the system's sources and lists stay untouched) --------
mkdir -p "$work" || die "cannot create the work directory $work"
cd "$work"
t_start=$(date +%s)
# The system's mirrors, with source indexes added: Debian 12's deb822 file, else a one-line sources.list.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  private_sources=$work/deb-src.sources
  sed -e 's/^Types:.*$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources > "$private_sources"
elif grep -q '^deb ' /etc/apt/sources.list 2> /dev/null; then
  private_sources=$work/deb-src.list
  sed -n -e 's/^deb \(.*\)$/deb \1\ndeb-src \1/p' /etc/apt/sources.list > "$private_sources"
else
  die "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
fi
mkdir -p apt/lists/partial apt/cache/archives/partial
apt_private=(-o "Dir::Etc::sourcelist=$private_sources" -o "Dir::Etc::sourceparts=-"
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache")
rm -rf src && mkdir src
echo "build-zookeeper-tls: fetching Debian's zookeeper source package"
apt-get "${apt_private[@]}" -qq update > apt-update.log 2>&1 || die "apt-get update failed, see $work/apt-update.log"
(cd src && apt-get "${apt_private[@]}" -qq source zookeeper) > apt-source.log 2>&1 ||
  die "apt-get source zookeeper failed, see $work/apt-source.log"
# apt-get source unpacks with dpkg-source -x, which applies debian/patches.
source_dir=$(find src -mindepth 1 -maxdepth 1 -type d -name 'zookeeper-*' | head -1)
[ -n "$source_dir" ] || die "no unpacked source tree in $work/src, see $work/apt-source.log"
source_dir=$work/$source_dir
client=$source_dir/zookeeper-client/zookeeper-client-c
[ -f "$client/CMakeLists.txt" ] || die "$client/CMakeLists.txt not found: unexpected source layout"

# --- 2. jute: the C client's generated/zookeeper.jute.{c,h}, made by Debian's jute compiler -------------------
# (what zookeeper-jute/pom.xml's generate-C-Jute execution runs, from the generated/ directory)
jute_jar=/usr/share/java/zookeeper-jute.jar
[ -f "$jute_jar" ] || die "$jute_jar not found (package libzookeeper-java)"
mkdir -p "$client/generated"
(cd "$client/generated" &&
  java -cp "$jute_jar" org.apache.jute.compiler.generated.Rcc -l c \
    "$source_dir/zookeeper-jute/src/main/resources/zookeeper.jute") > jute.log 2>&1 ||
  die "jute generation failed, see $work/jute.log"
[ -s "$client/generated/zookeeper.jute.c" ] || die "the jute compiler wrote no zookeeper.jute.c, see $work/jute.log"

# --- 3. OpenSSL 3 removed FIPS_mode(), which zookeeper.c calls for one log line: without a replacement the
#        library compiles but nothing links it ("undefined reference to FIPS_mode"). Define it from the
#        OpenSSL 3 call, right after the OpenSSL includes.
zookeeper_c=$client/src/zookeeper.c
if ! grep -q EVP_default_properties_is_fips_enabled "$zookeeper_c"; then
  grep -q '^#include <openssl/err.h>' "$zookeeper_c" || die "$zookeeper_c: OpenSSL include not found, cannot patch"
  sed -i '/^#include <openssl\/err.h>/a\
#if OPENSSL_VERSION_NUMBER >= 0x30000000L\
#include <openssl/evp.h>\
#define FIPS_mode() EVP_default_properties_is_fips_enabled(NULL)\
#endif' "$zookeeper_c"
fi

# --- 4. both flavours with the C client's CMakeLists (static libzookeeper.a + libhashtable.a, no install rule),
#        laid out in PREFIX the way Debian's -dev packages are.
staging=$work/prefix.new
rm -rf "$staging"
mkdir -p "$staging/include/zookeeper" "$staging/lib" "$staging/bin"
cp "$client"/include/*.h "$client/generated/zookeeper.jute.h" "$staging/include/zookeeper/"
for f in "${flavours[@]}"; do
  syncapi=OFF threads=()
  if [ "$f" = mt ]; then syncapi=ON threads=(-lpthread); fi
  b=$work/build-$f
  rm -rf "$b"
  echo "build-zookeeper-tls: configuring and building libzookeeper_$f"
  # CMake reports OpenSSL on stderr: keep both streams in the log.
  cmake -S "$client" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DWANT_SYNCAPI=$syncapi -DWANT_CPPUNIT=OFF -DWITH_CYRUS_SASL=ON -DWITH_OPENSSL=ON \
    > "$b.configure.log" 2>&1 || die "CMake configure ($f) failed, see $b.configure.log"
  grep -q 'will build with SSL support' "$b.configure.log" ||
    die "CMake did not find OpenSSL ($f; is libssl-dev installed?), see $b.configure.log"
  grep -q 'will build with SASL support' "$b.configure.log" ||
    die "CMake did not find Cyrus SASL ($f; is libsasl2-dev installed?), see $b.configure.log"
  cmake --build "$b" -j2 > "$b.build.log" 2>&1 || die "build ($f) failed, see $b.build.log"
  lib=$staging/lib/libzookeeper_$f
  # one archive from the two the build makes
  printf 'CREATE %s\nADDLIB %s\nADDLIB %s\nSAVE\nEND\n' "$lib.a" "$b/libzookeeper.a" "$b/libhashtable.a" |
    ar -M || die "merging the static archives ($f) failed"
  gcc -shared "-Wl,-soname,libzookeeper_$f.so.2" -o "$lib.so.2.0.0" \
    -Wl,--whole-archive "$lib.a" -Wl,--no-whole-archive -lssl -lcrypto -lsasl2 -lm "${threads[@]}" ||
    die "linking libzookeeper_$f.so failed"
  ln -sf "libzookeeper_$f.so.2.0.0" "$lib.so.2"
  ln -sf "libzookeeper_$f.so.2" "$lib.so"
  cp "$b/cli" "$staging/bin/cli_$f"
  exports_tls "$lib.so" || die "libzookeeper_$f.so does not export zookeeper_init_ssl and zookeeper_init_sasl"
done

# Only a complete build replaces PREFIX's contents.
rm -rf "$prefix"
mv "$staging" "$prefix"
echo "build-zookeeper-tls: $prefix: libzookeeper_st and libzookeeper_mt with TLS and SASL ($(($(date +%s) - t_start)) s)"
