# Shared helpers for the integration tests (sourced, not a test itself).
set -uo pipefail
: "${KVAULT:?KVAULT must name the kvault binary}"
: "${KVAULT_SOURCE_ROOT:?}"
source "$KVAULT_SOURCE_ROOT/scripts/env.sh"
export KVAULT_CACHE_DIR="${KVAULT_CACHE_DIR:-$KVAULT_SOURCE_ROOT/build/test-cache}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need_torch() {
  "${KVAULT_PYTHON:-python3}" -c "import torch" >/dev/null 2>&1 ||
    skip "no PyTorch for the worker (KVAULT_PYTHON=${KVAULT_PYTHON:-python3})"
}
# json_get FILE EXPR: evaluates a Python expression over the JSON object `j`.
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" "${@:3}"; }
