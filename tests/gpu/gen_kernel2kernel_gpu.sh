#!/usr/bin/env bash
# `kvault gen --mode kernel2kernel --lang hip` end to end on an NVIDIA GPU (HIP through
# the HIP-on-NVIDIA headers) against the loopback replay server: the baselines are
# the correct examples/hip translation units; the model answers with one renamed
# `__global__` kernel (tests/support/make_splice_answers.py), which gen must splice
# into the baseline and rename back before verifying. Paths: a wrong kernel then the
# right one; the right one at once; two code blocks then the right one. Also checks
# that each task's baseline was timed (a number in `best_baseline_speedup`) and that
# every verified candidate is the baseline with only the kernel replaced.
#
#   tests/gpu/gen_kernel2kernel_gpu.sh [KVAULT_BINARY]     (default .carry/kvault)
#
# Prints "kernel2kernel: ok ..." and exits 0 when everything matches; logs in $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export KVAULT=$(realpath "${1:-$root/.carry/kvault}") KVAULT_SOURCE_ROOT=$root
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-k2k-cache}
out=${OUT:-$root/gen-gpu-out}
mkdir -p "$out"
TMP=$(mktemp -d)
fail() { echo "kernel2kernel: FAILED: $*"; exit 1; }
python3 "$root/tests/support/make_splice_answers.py" --examples "$root/examples/hip" \
  --answers "$TMP/answers" --baselines "$TMP/baselines" || fail "cannot make the answers"
export GEN_BACKEND=cuda GEN_TIMING_FLAG=  # timed: the baseline's time is part of the mode
source "$root/tests/integration/gen_format_lib.sh"
( gen_format_run k2k "$TMP/answers" .hip broken,correct,two_blocks extension hip \
  "$root/prompts/v1/formats/extension-hip.md" 120 -- --mode kernel2kernel --lang hip --baseline "$TMP/baselines" ) \
  2>&1 | tee "$out/kernel2kernel.log" || fail "see above"
cp "$TMP/k2k/out.jsonl" "$out/kernel2kernel.jsonl"
python3 - "$TMP/kv.db" "$TMP/baselines" "$out/kernel2kernel.jsonl" <<'PY' || fail "spliced candidates or baselines not as expected"
import json, os, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
bad = 0
for j in (json.loads(l) for l in open(sys.argv[3]) if l.strip()):
    if not isinstance(j.get("best_baseline_speedup"), (int, float)):
        print(j.get("task"), "baseline not timed:", j.get("best_baseline_speedup")); bad += 1
rows = db.execute("SELECT g.task, g.candidate_path, a.status FROM generations g JOIN attempts a ON a.id = g.attempt_id "
                  "WHERE g.run = 'k2k' AND g.role = 'generator'").fetchall()
for task, path, status in rows:
    cand, base = open(path).read(), open(os.path.join(sys.argv[2], task + ".hip")).read()
    if "_v2" in cand:
        print(task, "candidate keeps the model's name"); bad += 1
    # Without the kernel definitions (they end with a "}" at the start of a line) and
    # with whitespace folded, the candidate is the baseline.
    strip = lambda s: " ".join(re.sub(r"__global__.*?\n}", "", s, flags=re.S).split())
    if strip(cand) != strip(base):
        print(task, "candidate differs from the baseline outside the kernel"); bad += 1
    print(task, os.path.basename(path), status)
print(len(rows), "verified candidates checked,", bad, "problems")
sys.exit(1 if bad or not rows else 0)
PY
echo "kernel2kernel: ok ($(tail -1 "$out/kernel2kernel.log"))"
