# A Triton candidate on a worker Python without triton is `unsupported` (the machine's
# limit, no reward), said from the worker's hello before any candidate code ran, not
# the candidate's crash (docs/candidate-formats.md, "Backends"). Needs a Python with
# PyTorch and without triton: Debian's /usr/bin/python3 (python3-torch) on CI.
source "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
"$py" -c "import torch" >/dev/null 2>&1 || skip "$py has no PyTorch"
"$py" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('triton') is not None)" ||
  skip "$py has triton"
KVAULT_PYTHON=$py "$KVAULT" verify --task "$KVAULT_SOURCE_ROOT/examples/suite/relu.py" \
  --candidate "$KVAULT_SOURCE_ROOT/examples/triton/relu.py" --backend cpu --no-timing --json \
  > "$TMP/v.json" 2> "$TMP/e.txt" || fail "verify exited $?: $(cat "$TMP/e.txt")"
[ "$(json_get "$TMP/v.json" 'j["status"], j["reward"]')" = "unsupported None" ] ||
  fail "not unsupported without a reward: $(cat "$TMP/v.json")"
json_get "$TMP/v.json" 'j["message"]' | grep -q "triton package in the worker's Python ($py)" ||
  fail "the message does not say what is missing: $(cat "$TMP/v.json")"
exit 0
