#!/usr/bin/env bash
# Device call 3 (2026-12-02): an extension-format RL step, reduced to 4 tasks x 8 cold
# candidates (32; the whole 512 would take about half an hour of nvcc), through kvault
# serve, then AMD's way (per-candidate load_inline subprocesses) on a stratified 16 of
# them, in one run. Run from the repository root with .carry/kvault and .carry/lib
# carried. At most 8 files come back: the step's folder is packed into step.tar.gz.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
TASKS=4 AMD_COUNT=16 KVAULT_LIMIT_S=300 BUDGET_S=470 OUT=/tmp/res timeout 500 \
  bash bench/rl_step/run_step.sh extension > $OUT/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-extension-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT/step.tar.gz rl_step-extension-s0
sed -n '1,140p' $d/summary.md
