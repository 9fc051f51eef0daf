#!/usr/bin/env bash
# End-to-end `kvault verify` of one extension-format CPU candidate with a cold and a
# warm cache (the compile cache target: warm at least 3x faster than cold).
#   cold       empty cache folder: builds the precompiled PyTorch header, compiles the
#              candidate, computes the reference outputs
#   cold-pch   build and refs entries removed, the precompiled header kept (the usual
#              "new candidate" case once a machine has verified anything)
#   warm       nothing removed: the build and reference outputs come from the cache
# Each run is timed as a whole process (worker start, describe, build, correctness,
# timing). Results: bench/results/cpu-<date>-cache/{results.json,env.txt,runs.log}.
# Usage: bench/cpu_cache_warm_cold.sh [REPEATS]   (Default: 3; KVAULT=build/kvault)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/env.sh
K=${KVAULT:-$root/build/kvault}
reps=${1:-3}
task=examples/suite/relu.py
cand=examples/cpu/relu.cpp
out=bench/results/cpu-$(date -u +%F)-cache
mkdir -p "$out"
cache=$(mktemp -d /tmp/kv-cache-bench-XXXXXX)
trap 'rm -rf "$cache"' EXIT
export KVAULT_CACHE_DIR=$cache

{ date -u; uname -srm; nproc; uptime; g++ --version | head -1
  "${KVAULT_PYTHON:-python3}" -c "import torch,sys; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  "$K" --version; } > "$out/env.txt" 2>&1

run() {  # label -> appends one JSON line to $out/runs.jsonl
  local t0 t1
  t0=$(date +%s.%N)
  "$K" verify --task "$task" --candidate "$cand" --backend cpu --json > "$cache/last.json" 2>> "$out/runs.log"
  local rc=$?
  t1=$(date +%s.%N)
  python3 - "$1" "$t0" "$t1" "$rc" "$cache/last.json" >> "$out/runs.jsonl" <<'PY'
import json, sys
label, t0, t1, rc, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
try:
    v = json.load(open(path))
except Exception:
    v = {}
b = v.get("build") or {}
print(json.dumps({"label": label, "seconds": round(t1 - t0, 3), "exit": rc, "status": v.get("status"),
                  "cache_hit": b.get("cache_hit"), "build_seconds": b.get("seconds"), "pch": b.get("pch")}))
PY
  tail -1 "$out/runs.jsonl"
}

: > "$out/runs.jsonl"; : > "$out/runs.log"
for i in $(seq "$reps"); do
  rm -rf "${cache:?}"/*
  run cold
  run warm
  rm -rf "$cache/build" "$cache/refs"
  run cold-pch
  run warm
done
"$K" cache stats --json > "$out/cache_stats.json" 2>&1

python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
runs = [json.loads(l) for l in open(out + "/runs.jsonl") if l.strip()]
by = {}
for r in runs:
    by.setdefault(r["label"], []).append(r["seconds"])
med = {k: statistics.median(v) for k, v in by.items()}
res = {"candidate": "examples/cpu/relu.cpp", "task": "examples/suite/relu.py", "runs": runs,
       "median_seconds": med,
       "speedup_warm_vs_cold": round(med["cold"] / med["warm"], 2),
       "speedup_warm_vs_cold_pch": round(med["cold-pch"] / med["warm"], 2),
       "all_passed": all(r["status"] == "passed" for r in runs)}
json.dump(res, open(out + "/results.json", "w"), indent=2)
print(json.dumps({k: res[k] for k in ("median_seconds", "speedup_warm_vs_cold", "speedup_warm_vs_cold_pch", "all_passed")}))
PY
