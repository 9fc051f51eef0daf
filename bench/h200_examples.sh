#!/usr/bin/env bash
# Runs the example suite's GPU candidates on an NVIDIA GPU (the H200 of the device
# machine) and leaves results.tgz in $OUT (or ./bench-out):
#   HIP solutions through the HIP-on-NVIDIA path, CUDA extension-format and
#   KernelBench-format candidates; then the passing HIP solutions again, one lane,
#   for timings undisturbed by parallel lanes (their builds come from the cache).
# Expects the kvault binary at $KVAULT (default .carry/kvault, built here with
# -DKVAULT_PORTABLE_BINARY=ON) and a python3 with a CUDA PyTorch.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/bench-out}
K=${KVAULT:-$root/.carry/kvault}
res=/tmp/kv-results
rm -rf "$res"; mkdir -p "$res" "$out"
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_CACHE_DIR=/tmp/kv-cache KVAULT_SOURCE_ROOT=$root
db=$res/h200.db
budget=${BUDGET_S:-380}

{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; nvcc --version | tail -2;
  "$KVAULT_PYTHON" -c "import torch,sys; print('python', sys.version.split()[0], 'torch', torch.__version__)"; } > "$res/env.txt" 2>&1
"$K" doctor --json > "$res/doctor.json" 2>&1

n=$(nproc); jobs=$(( n > 3 ? n - 2 : 1 ))
run_eval() {  # name dir lanes
  timeout "$budget" "$K" eval --suite examples/suite --candidates "$2" --backend "${BACKEND:-cuda}" --jobs "$3" \
    --run "h200-$1" --db "$db" --json > "$res/$1.json" 2> "$res/$1.log"
  echo "$1: exit $?" >> "$res/exit.txt"
}
run_eval hip examples/hip "$jobs" &
run_eval cuda examples/cuda 3 &
run_eval kernelbench examples/kernelbench 2 &
wait

# Timings with one lane: the HIP solutions that passed, builds cached.
mkdir -p "$res/hip-ok"
python3 - "$res/hip.json" "$res/hip-ok" <<'PY'
import json, os, shutil, sys
try:
    attempts = json.load(open(sys.argv[1]))["attempts"]
except Exception as e:
    print("no hip results:", e); sys.exit(0)
for a in attempts:
    if a["status"] == "passed":
        shutil.copy(a["candidate"], sys.argv[2])
PY
timeout 150 "$K" eval --suite examples/suite --candidates "$res/hip-ok" --backend "${BACKEND:-cuda}" --jobs 1 \
  --run h200-hip-timing --db "$db" --json > "$res/hip-timing.json" 2> "$res/hip-timing.log"
echo "hip-timing: exit $?" >> "$res/exit.txt"

python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.execute('PRAGMA journal_mode=DELETE'); c.close()" "$db"
cat "$res/exit.txt"
tar czf "$out/results.tgz" -C /tmp kv-results
ls -la "$out"
