#!/usr/bin/env bash
# Installs the Debian packages vramfit builds with, when they are missing. Idempotent:
# a machine that has them all runs no apt-get at all.
set -euo pipefail
# Usage: install-deps.sh [fuzz|browser]   ("fuzz" adds clang and its sanitizer/libFuzzer runtime;
# "browser" adds chromium, node and npm where their commands are missing)
packages=(cmake ninja-build ccache g++ libsimdjson-dev nlohmann-json3-dev libcli11-dev
          libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
          libcurl4-openssl-dev libcpp-httplib-dev pkg-config
          python3 python3-venv python3-pip python3-setuptools python3-pytest)
[ "${1:-}" = fuzz ] && packages+=(clang libclang-rt-14-dev)
if [ "${1:-}" = browser ]; then
  command -v chromium >/dev/null 2>&1 || packages+=(chromium)
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
