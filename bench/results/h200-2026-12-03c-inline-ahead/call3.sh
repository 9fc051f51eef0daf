#!/usr/bin/env bash
# Device call 3 (2026-12-03, third session): the adversarial suite on the GPU with this
# tree (the inputs' check compares bits in one pass when they are equal; KernelBench
# files' load_inline calls noted and built ahead). Binary: .carry/kvault (2a8fef2).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
KVAULT=$PWD/.carry/kvault BUDGET_S=190 timeout 215 bash tests/gpu/adversarial_gpu.sh > $O/adversarial.txt 2>&1
echo "adversarial exit $?"
grep -E "problem|checked|exit" $O/adversarial.txt | head -20
