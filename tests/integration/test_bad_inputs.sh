# Every kind of bad input gets its status and a clear message, and the run goes on.
# Python candidates keep this fast; compiled bad candidates live in
# examples/cpu/*.bad-*.cpp and are checked by test_example_suite_cpu.sh.
source "$(dirname "$0")/lib.sh"
need_torch
S="$TMP/suite"; C="$TMP/cands"; mkdir -p "$S" "$C"

good_task='import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(64, 33)]
def get_init_inputs():
    return []
'
printf '%s' "$good_task" > "$S/good.py"
printf 'import torch\nthis is not python\n' > "$S/noimport.py"
printf 'import torch\ndef get_inputs():\n    return [torch.randn(4)]\n' > "$S/nomodel.py"
printf 'import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n' > "$S/noinputs.py"
printf 'import torch, torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\ndef get_inputs():\n    return ["a string"]\n' > "$S/badinputs.py"

cand() { printf 'import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n%s\n' "$2" > "$C/$1.py"; }
for t in noimport nomodel noinputs badinputs; do cand "$t" "        return torch.relu(x)"; done
cand good.ok            "        return torch.relu(x)"
cand good.shape         "        return torch.relu(x).reshape(-1)"
cand good.dtype         "        return torch.relu(x).double()"
cand good.values        "        return x.abs()"
cand good.mutates       "        x.clamp_(min=0)
        return x.clone()"
cand good.raises        "        raise ValueError('boom')"
cand good.segfault      "        import ctypes; return ctypes.string_at(0)"
cand good.hang          "        while True: pass"
cand good.oom           "        return torch.empty(1 << 50)"
cand good.exits         "        import sys; sys.exit(3)"
cand good.nan           "        return torch.relu(x) * float('nan')"
printf 'import torch\nclass ModelNew(:\n' > "$C/good.syntax.py"
printf 'import torch\nclass ModelNew:\n    def __init__(self): raise RuntimeError("ctor")\n' > "$C/good.ctor.py"
printf 'import torch\nprint("no model here")\n' > "$C/good.nomodel.py"
printf '' > "$C/good.empty.cpp"

"$KVAULT" eval --suite "$S" --candidates "$C" --backend cpu --run-timeout 8 --db "$TMP/kv.db" \
  --json > "$TMP/out.json" 2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval exited $?"; }
python3 - "$TMP/out.json" <<'PY' || fail "wrong statuses"
import json, os, sys
want = {
 "noimport.py": "task_error", "nomodel.py": "task_error", "noinputs.py": "task_error",
 "badinputs.py": "task_error", "good.ok.py": "passed", "good.shape.py": "mismatch",
 "good.dtype.py": "mismatch", "good.values.py": "mismatch", "good.mutates.py": "mismatch",
 "good.raises.py": "runtime_error", "good.segfault.py": "crash", "good.hang.py": "timeout",
 "good.oom.py": "oom", "good.exits.py": "runtime_error", "good.nan.py": "mismatch",
 "good.syntax.py": "load_error", "good.ctor.py": "load_error", "good.nomodel.py": "parse_error",
 "good.empty.cpp": "parse_error",
}
got = {os.path.basename(a["candidate"]): a for a in json.load(open(sys.argv[1]))["attempts"]}
bad = 0
for name, status in want.items():
    a = got.get(name)
    if a is None:
        print("missing attempt", name); bad += 1; continue
    ok = a["status"] == status and a["message"].strip() != ""
    print(("ok  " if ok else "BAD ") + f"{name}: {a['status']} (want {status}): {a['message'][:150]}")
    bad += not ok
sys.exit(1 if bad else 0)
PY
echo "ok"
