#!/usr/bin/env bash
# Where a large task's verification spends its time, request by request, on the GPU
# machine (BENCHMARKS.md, "The whole adversarial suite and the vault again on an
# H100": a 6.4 GB elementwise task took 68 s of correctness for 20 runs whose kernels
# take milliseconds, and its signed/heavy-tailed runs were compared from files).
#
#   OUT=DIR bash bench/gpu_large_case_profile.sh TASK.py CANDIDATE.py
#
# One `kvault verify --backend cuda` with a fresh cache and every worker request under
# cProfile (KVAULT_WORKER_PROFILE; the sandbox off so the profiles land in one folder),
# then bench/worker_profile.py's summary. Writes $OUT/verify.json, $OUT/verify.err
# (the workers' stderr: a "no hand-over on the device" line says why a run went to
# files) and $OUT/profile.txt. Environment: KVAULT (default .carry/kvault; .carry/lib
# goes on LD_LIBRARY_PATH), KVAULT_PYTHON (python3), LIMIT_S (verify's limit, 300).
set -u
task=${1:?usage: $0 TASK.py CANDIDATE.py}
cand=${2:?usage: $0 TASK.py CANDIDATE.py}
root=$(cd "$(dirname "$0")/.." && pwd)
K=${KVAULT:-$root/.carry/kvault}
[ -d "$root/.carry/lib" ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-$root/bench-out}
mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1
KVAULT_CACHE_DIR=$work/cache KVAULT_SANDBOX=off KVAULT_WORKER_PROFILE=$work/prof \
  timeout "${LIMIT_S:-300}" "$K" verify --task "$task" --candidate "$cand" --backend cuda --json \
  >"$out/verify.json" 2>"$out/verify.err"
echo "verify: exit $?"
"$KVAULT_PYTHON" - "$out/verify.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit("no verdict: %s" % e)
phases = next((c["seconds"] for c in d.get("cases", []) if c.get("kind") == "phases"), {})
print(d.get("status"), d.get("speedup"), {k: round(v, 2) for k, v in phases.items() if v >= 0.05})
on = [c.get("compared_on") for c in d.get("cases", []) if "compared_on" in c]
print("runs compared on the device / from files:", on.count("device"), "/", on.count("host"))
PY
"$KVAULT_PYTHON" "$root/bench/worker_profile.py" "$work/prof" --top 40 >"$out/profile.txt" 2>&1
head -40 "$out/profile.txt"
