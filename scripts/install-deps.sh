#!/usr/bin/env bash
# Installs ferrite's build and test dependencies from Debian's packages, only those missing.
# Safe to run repeatedly; needs root (or sudo) only when something is missing. llvm-15-dev
# (LLVM 15's headers and CMake package, opt) builds ferrite-flow, the static checker (flow/).
set -euo pipefail
packages=(g++ clang-15 llvm-15-dev cmake ninja-build pkg-config git python3
          libpmem2-dev libpmemobj-dev libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev python3-matplotlib
          libevent-dev memcached libmemcached-tools python3-pymemcache nutcracker)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
