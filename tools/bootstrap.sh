#!/usr/bin/env bash
# Installs everything zkrecipes needs to build, test and run its demo on Debian 12 (bookworm).
# Idempotent: when every package is present it changes nothing and does not touch the network.
#
#   bash tools/bootstrap.sh [--force]
#
# Run as root, or as a user with sudo. --force removes packages that conflict with ours (the Boost 1.74
# development packages, the multi-threaded ZooKeeper C client headers); without it their presence is an error.
set -euo pipefail

usage() { sed -n '2,9s/^# \{0,1\}//p' "$0"; }

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bootstrap: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config
  libboost1.81-dev libzookeeper-st-dev libzookeeper-mt2 libspdlog-dev catch2 libcli11-dev doxygen
  zookeeper default-jre-headless default-jdk-headless libcurator-recipes-java
  python3-kazoo python3 procps iproute2 gnuplot-nox
  openssl libssl-dev dpkg-dev clang-format
  libsasl2-dev libsasl2-modules libsasl2-modules-gssapi-mit krb5-kdc krb5-admin-server krb5-user libkrb5-dev
)
# libsasl2-dev and libsasl2-modules: Cyrus SASL, which the native transport's SASL is built on (docs/sasl.md);
# libsasl2-modules-gssapi-mit and libkrb5-dev: its Kerberos (GSSAPI), with per-client credentials from MIT
# krb5's GSS-API; krb5-kdc, krb5-admin-server and krb5-user: the test KDC (zkr::testing::TestKdc) and kinit.
# openssl, libssl-dev and dpkg-dev: the TLS test servers' certificates, and the TLS-capable C client the tests
# build from Debian's source package (tools/build-zookeeper-tls.sh).
#
# The ZooKeeper C client in both flavours: the single-threaded development package and the multi-threaded
# runtime library, which installs beside it (both flavours share one zookeeper.h; the build defines THREADED
# for the multi-threaded one). The suite runs on both (tools/test.sh).
#
# libboost1.81-dev cannot be installed with Debian's default Boost (1.74); the -st and -mt ZooKeeper C client
# development packages conflict with each other.
conflicts=(libboost-dev libboost1.74-dev libzookeeper-mt-dev)

if ! command -v dpkg-query > /dev/null || ! command -v apt-get > /dev/null; then
  echo "bootstrap: dpkg-query/apt-get not found: this script supports Debian 12 (bookworm) only." >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo > /dev/null; then
    sudo=(sudo)
  else
    echo "bootstrap: run as root, or install sudo, to install packages." >&2
    exit 1
  fi
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)

is_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2> /dev/null)" = "install ok installed" ]
}

present=()
for p in "${conflicts[@]}"; do
  if is_installed "$p"; then present+=("$p"); fi
done
if [ "${#present[@]}" -gt 0 ]; then
  echo "bootstrap: installed package(s) conflict with zkrecipes' dependencies: ${present[*]}" >&2
  echo "  (libboost-dev/libboost1.74-dev conflict with libboost1.81-dev; libzookeeper-mt-dev conflicts with" >&2
  echo "   libzookeeper-st-dev, which the test suite needs beside the multi-threaded runtime libzookeeper-mt2;" >&2
  echo "   to only build zkrecipes on the multi-threaded client, no script is needed: cmake finds it)" >&2
  if [ "$force" -eq 1 ]; then
    echo "bootstrap: --force: removing ${present[*]}" >&2
    "${apt[@]}" remove -y "${present[@]}"
  else
    echo "bootstrap: re-run with --force to remove them (apt-get remove ${present[*]})." >&2
    exit 1
  fi
fi

missing=()
for p in "${packages[@]}"; do
  if ! is_installed "$p"; then missing+=("$p"); fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages are installed."
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${missing[@]}"

still=()
for p in "${missing[@]}"; do
  if ! is_installed "$p"; then still+=("$p"); fi
done
if [ "${#still[@]}" -gt 0 ]; then
  echo "bootstrap: still missing after apt-get install: ${still[*]}" >&2
  exit 1
fi
echo "bootstrap: done."
