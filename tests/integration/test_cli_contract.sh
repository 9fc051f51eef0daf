# The CLI contract: misuse exits 2, kernel failures exit 0, --json has the fields.
source "$(dirname "$0")/lib.sh"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
"$KVAULT" verify --task /nonexistent.py --candidate x.cpp --backend cpu; [ $? -eq 2 ] || fail "missing task should exit 2"
"$KVAULT" verify --task "$ex/suite/relu.py"; [ $? -eq 2 ] || fail "missing --candidate should exit 2"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate x.cpp --backend tpu; [ $? -eq 2 ] || fail "bad backend should exit 2"
"$KVAULT" eval --suite /nonexistent --candidates /nonexistent --backend cpu; [ $? -eq 2 ] || fail "missing suite should exit 2"
"$KVAULT" doctor --json > "$TMP/doctor.json" || fail "doctor failed"
[ "$(json_get "$TMP/doctor.json" 'j["backends"]["cpu"]["usable"]')" = True ] || fail "doctor: cpu not usable"
[ -n "$(json_get "$TMP/doctor.json" 'j["backends"]["cuda"]["reason"]')" ] || fail "doctor: no reason for cuda"
cat > "$TMP/cand.py" <<'PY'
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return x.abs()
PY
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --json > "$TMP/v.json"
[ $? -eq 0 ] || fail "a mismatching kernel must exit 0"
python3 - "$TMP/v.json" <<'PY' || fail "verify --json lacks fields"
import json, sys
j = json.load(open(sys.argv[1]))
need = ["status", "compiled", "correct", "speedup", "reference_ms", "candidate_ms", "reward", "message"]
missing = [k for k in need if k not in j]
assert not missing, missing
assert j["status"] == "mismatch" and j["correct"] is False and j["reward"] == 0.4, j
assert j["policy"] == "any", j  # the task's (relu names none)
PY
# --policy: the engine's choice over the task's; a value outside the list is misuse.
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --policy custom_kernel \
  --json > "$TMP/vp.json" || fail "verify --policy custom_kernel failed"
[ "$(json_get "$TMP/vp.json" 'j["status"] + " " + j["policy"]')" = "policy_violation custom_kernel" ] ||
  fail "abs under --policy custom_kernel: $(cat "$TMP/vp.json")"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --policy kernels \
  > /dev/null 2>&1
[ $? -eq 2 ] || fail "--policy kernels must exit 2"
echo "ok"
