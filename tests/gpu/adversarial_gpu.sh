#!/usr/bin/env bash
# The adversarial suite on an NVIDIA GPU (the H200 of the device machine):
# examples/adversarial/kernelbench (CPU and GPU cheats in KernelBench format) and
# examples/adversarial/cuda (GPU-only: side stream, deferred work, uninitialised
# allocator blocks, a launch that never happens, a race, cuBLAS where a kernel of
# its own is required) and examples/adversarial/policy_cuda (tasks without a
# policy, under --policy custom_kernel) and examples/adversarial/memory (a cheat
# that fills the device's memory, beside one honest lane), each checked against
# adversarial.json with tests/integration/check_manifest.py.
# Prints one line per problem and "N candidates checked, 0 problems" per folder;
# exits 0 only when every status matches. Results (JSON, logs) go to $OUT/adversarial.
# Expects the kvault binary at $KVAULT (default .carry/kvault) and a python3 with a
# CUDA PyTorch.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
K=${KVAULT:-$root/.carry/kvault}
res=${OUT:-$root/bench-out}/adversarial
mkdir -p "$res"
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3} KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-cache}
export KVAULT_SOURCE_ROOT=$root
adv=examples/adversarial
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$res/env.txt" 2>&1
run_eval() {  # folder lanes [policy]
  timeout "${BUDGET_S:-500}" "$K" eval --suite "$adv/tasks" --candidates "$adv/$1" --backend cuda --jobs "$2" \
    --policy "${3:-task}" \
    --run "adv-gpu-$1" --db "$res/adversarial.db" --json > "$res/$1.json" 2> "$res/$1.log"
  echo "$1: eval exit $?" | tee -a "$res/exit.txt"
}
run_eval kernelbench 4 &
run_eval cuda 4 &
run_eval policy_cuda 2 custom_kernel &  # tasks without a policy, under gen's default
wait
run_eval isolated 1  # cheats that disturb other lanes (spinners), alone
run_eval memory 2    # a cheat that fills the device, beside one honest lane
status=0
for folder in kernelbench cuda policy_cuda isolated memory; do
  echo "== $folder"
  python3 tests/integration/check_manifest.py --backend cuda "$adv/adversarial.json" "$folder=$res/$folder.json" \
    | tee "$res/$folder.check.txt" || status=1
done
exit $status
