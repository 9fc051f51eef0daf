#!/usr/bin/env bash
# Device call 2: the kvault side again with 0fcecfb (the lite object made at the
# head of the compile pool's queue), on a fresh machine, against call 1's
# KernelBench harness result on the same files (same seed and tasks; that side does
# not depend on the engine): once with empty caches (-fresh), once after verifying
# one candidate of another task with the same caches (-setup: the machine's
# one-time setup done, the 24 candidates still new).
# Carried: .carry/kvault (portable Release of 0fcecfb, stripped), .carry/lib.
set -u
R=bench/results/h200-2026-12-03d-kernelbench-harness/call1-out/kernelbench-side-by-side/kernelbench.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
PARTS=kvault KB_FROM=$R SUFFIX=-fresh timeout 270 bash bench/kernelbench_side_by_side.sh .carry/kernelbench
echo "fresh exit $?"
PARTS=kvault KB_FROM=$R SUFFIX=-setup KV_SETUP=1 timeout 270 bash bench/kernelbench_side_by_side.sh .carry/kernelbench
echo "setup exit $?"
