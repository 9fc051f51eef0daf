#!/usr/bin/env bash
# Security round 4 on the GPU machine: the whole adversarial suite
# (tests/gpu/adversarial_gpu.sh: kernelbench, cuda, policy_cuda, isolated, each
# checked against examples/adversarial/adversarial.json), the worker's GPU tests (the
# flush's persisting-L2 reset, the policies' observation on a GPU) and the cost of
# the timing path's guards on the GPU (bench/timing_guard_cost.py).
# Expects the kvault binary at $KVAULT (default .carry/kvault) and a python3 with a
# CUDA PyTorch. Results go to $OUT/round4 (and $OUT/adversarial from the suite).
# Exits non-zero when any part fails.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
res=${OUT:-$root/bench-out}/round4
mkdir -p "$res"
status=0
(cd python && python3 -m pytest -q tests/test_gpu.py tests/test_fused.py tests/test_op_policy.py \
  tests/test_integrity.py) > "$res/pytest.txt" 2>&1 || status=1
tail -3 "$res/pytest.txt"
python3 bench/timing_guard_cost.py > "$res/guard_cost.txt" 2>&1 || status=1
cat "$res/guard_cost.txt"
bash tests/gpu/adversarial_gpu.sh > "$res/suite.txt" 2>&1 || status=1
tail -20 "$res/suite.txt"
exit $status
