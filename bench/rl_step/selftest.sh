#!/usr/bin/env bash
# Checks of the RL-step benchmark that need no GPU (any machine with python3):
#
#   bash bench/rl_step/selftest.sh           # harness: run_step.py against fake_serve.py: one
#                                            # valid run (exit 0), then runs that must fail
#                                            # (exit 1): a wrong status, a result from the store,
#                                            # a server that dies, a step past its limit
#   bash bench/rl_step/selftest.sh compile   # + nvcc: every native CUDA candidate of a step
#                                            # builds, except the broken ones (2 cores: ~12 min)
#   bash bench/rl_step/selftest.sh cpu       # + kvault eval --backend cpu --no-timing of the C++
#                                            # native step (same math, small sizes): every status
#                                            # as in the manifest (needs build/kvault and a worker
#                                            # Python with PyTorch; 2 cores: ~15 min)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
PY=${PYTHON:-python3}

expect() {  # expect RC NAME ENV... : run_step.py against the fake with ENV, exit status must be RC
  local want=$1 name=$2
  shift 2
  env "$@" FAKE_SERVE_MANIFEST="$work/step/manifest.json" "$PY" bench/rl_step/run_step.py --step "$work/step" \
    --out "$work/out-$name" --kvault bench/rl_step/fake_serve.py --parts kvault --python "$PY" \
    --kvault-limit-s "${LIMIT:-120}" > "$work/$name.log" 2>&1
  local rc=$?
  if [ "$rc" = "$want" ]; then echo "ok   $name (exit $rc)"; else
    echo "FAIL $name: exit $rc, expected $want"; tail -20 "$work/$name.log"; fails=$((fails + 1)); fi
}

"$PY" bench/rl_step/make_step.py --out "$work/step" --format native --seed 7 > /dev/null || exit 1
expect 0 valid
expect 1 wrong-status FAKE_SERVE_FLIP=21
expect 1 from-store FAKE_SERVE_STORE=5
expect 1 server-dies FAKE_SERVE_DIE_AFTER=200
LIMIT=5 expect 1 past-limit FAKE_SERVE_DELAY=0.3
# a second seed gives other text for every candidate
"$PY" bench/rl_step/make_step.py --out "$work/step2" --format native --seed 8 > /dev/null || exit 1
"$PY" - "$work/step/manifest.json" "$work/step2/manifest.json" <<'EOF' || fails=$((fails + 1))
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
shared = {c["sha256"] for c in a["candidates"]} & {c["sha256"] for c in b["candidates"]}
assert len({c["sha256"] for c in a["candidates"]}) == 512 and not shared, "seeds share candidate text"
print("ok   seeds 7 and 8: 1024 distinct candidates")
EOF

if [ "${1:-}" = compile ] || [ "${1:-}" = all ]; then
  "$PY" bench/rl_step/make_step.py --out "$work/cuda" --format native > /dev/null || exit 1
  ls "$work"/cuda/native/*.cu | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -O3 -std=c++17 -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 -I include -c {} -o {}.o \
       > {}.log 2>&1; echo "$(basename {}) $?"' > "$work/compiled.txt"
  "$PY" - "$work/cuda/manifest.json" "$work/compiled.txt" <<'EOF' || fails=$((fails + 1))
import json, sys
m = json.load(open(sys.argv[1]))
rc = dict(line.split() for line in open(sys.argv[2]))
bad = [c["id"] for c in m["candidates"] if (rc[c["file"].split("/")[-1]] == "0") != (c["expected"] != "compile_error")]
print(("ok  " if not bad else "FAIL") + " nvcc: %d candidates, %d not as the manifest says %s" % (len(rc), len(bad), bad[:5]))
sys.exit(1 if bad else 0)
EOF
fi

if [ "${1:-}" = cpu ] || [ "${1:-}" = all ]; then
  [ -f scripts/env.sh ] && source scripts/env.sh
  "$PY" bench/rl_step/make_step.py --out "$work/cpu" --format native --lang cpu > /dev/null || exit 1
  KVAULT_CACHE_DIR=$work/cache "${KVAULT:-build/kvault}" eval --suite "$work/cpu/tasks" \
    --candidates "$work/cpu/native" --backend cpu --jobs "$(nproc)" --no-timing --db "$work/cpu.db" --json \
    > "$work/cpu.json" 2> "$work/cpu.log"
  "$PY" - "$work/cpu/manifest.json" "$work/cpu.json" <<'EOF' || fails=$((fails + 1))
import json, sys
m = json.load(open(sys.argv[1]))
want = {c["file"].split("/")[-1]: c["expected"] for c in m["candidates"]}
got = {a["candidate"].split("/")[-1]: a["status"] for a in json.load(open(sys.argv[2]))["attempts"]}
bad = ["%s: %s, expected %s" % (f, got.get(f), w) for f, w in want.items() if got.get(f) != w]
print(("ok  " if not bad else "FAIL") + " kvault eval (cpu): %d candidates, %d not as the manifest says %s"
      % (len(got), len(bad), bad[:5]))
sys.exit(1 if bad else 0)
EOF
fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
