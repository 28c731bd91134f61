#!/usr/bin/env bash
# The Python package's tests (ctest `python_package`): installs a copy of python/ into a
# fresh venv of Debian's python3 (system site packages: setuptools, pytest), offline, and runs
# python/tests with pytest against this build's vramfit command.
# Usage: run.sh SOURCE_DIR VRAMFIT_BINARY WORK_DIR
set -euo pipefail
src=$1 bin=$2 work=$3
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
if ! "$py" -c "import pytest, setuptools" 2>/dev/null; then
  echo "python_package: $py lacks pytest or setuptools: run tools/install-deps.sh" >&2
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
cp -r "$src/python" "$work/src"  # pip builds in the tree: keep the checkout clean
"$py" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-index --no-deps \
  --disable-pip-version-check "$work/src"
cd "$work"
PYTHONDONTWRITEBYTECODE=1 VRAMFIT_BIN=$bin VRAMFIT_SOURCE_DIR=$src \
  "$work/venv/bin/python" -m pytest -q \
  -p no:cacheprovider "$src/python/tests"
