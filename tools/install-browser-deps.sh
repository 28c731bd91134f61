#!/usr/bin/env bash
# Installs what the browser tests (tests/browser/) need, when it is missing: Debian's chromium,
# node and npm (install-deps.sh browser), then playwright-core at the version
# tests/browser/package-lock.json pins (`npm ci`; no browser is downloaded: the tests drive
# Debian's chromium). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh browser
lock=tests/browser/package-lock.json
stamp=tests/browser/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  echo "install-browser-deps: npm ci in tests/browser" >&2
  (cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund >&2)
fi
