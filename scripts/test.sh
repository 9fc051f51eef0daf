#!/usr/bin/env bash
# Sets everything up, then runs every test: C++ unit and integration tests (ctest)
# and the Python tests (pytest), then the Python package's tests again against a wheel
# installed in a fresh venv (scripts/test-installed.sh). Tests that need a GPU or a
# missing tool are reported as skipped with the reason.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" || exit 1
source "$root/scripts/env.sh"
cd "$root"
export KVAULT_CACHE_DIR="$root/build/test-cache"
status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 1200 || status=1
# ctest does not show why a test skipped: print each skipped test with its reason.
awk '/^\[ RUN +\]/ {name=$NF} / Skipped$/ {getline why; while (why ~ /^(Traceback|  )/) getline why; print "skipped: " name ": " why}
     /^SKIP: / {print "skipped: " $0}' build/Testing/Temporary/LastTest.log 2>/dev/null
"${KVAULT_PYTHON:-python3}" -m pytest python/tests -q -rs || status=1
# The package as users install it: a wheel in a fresh venv, its tests run against it.
if "$root/scripts/test-installed.sh"; then
  echo "installed package: ok"
else
  echo "installed package: FAILED (scripts/test-installed.sh: the wheel of python/, installed in build/wheel-venv)"
  status=1
fi
exit $status
