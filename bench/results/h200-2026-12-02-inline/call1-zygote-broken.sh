#!/usr/bin/env bash
# Device call 1 (2026-12-02, evening; its zygote could not fork GPU workers, see README): the RL step with KernelBench-format candidates:
# AMD's own load_inline ModelNew files (64 tasks x 8 samples, cold caches) through
# kvault serve, whose engine now builds their load_inline calls itself, then AMD's way
# on a stratified 32 of the same files, side by side in one call. Run from the
# repository root with .carry/kvault (portable build) and .carry/lib carried.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
OUT_DIR=$OUT
OUT=/tmp/res timeout 585 bash bench/rl_step/run_step.sh kernelbench > $OUT_DIR/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-kernelbench-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT_DIR/step.tar.gz rl_step-kernelbench-s0
sed -n '1,40p' $d/summary.md
