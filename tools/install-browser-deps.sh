#!/usr/bin/env bash
# Installs what the browser tests (tests/browser/) need, when it is missing: Debian's chromium,
# node and npm, then playwright-core at the version tests/browser/package-lock.json pins
# (`npm ci`; no browser is downloaded: the tests drive Debian's chromium). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-browser-deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >&2
fi
lock=tests/browser/package-lock.json
stamp=tests/browser/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  echo "install-browser-deps: npm ci in tests/browser" >&2
  (cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund >&2)
fi
