#!/usr/bin/env bash
# Device call 4 (2026-12-03, second session): the extension-format RL step (512 cold
# candidates) with the worker as committed in 167930a (bounded device cache, pooled
# hand-over buffers; no warm-up in hello). Binary: .carry/kvault (043923b).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
rm -rf /tmp/res
PARTS=kvault KVAULT_LIMIT_S=300 BUDGET_S=330 OUT=/tmp/res timeout 380 \
  bash bench/rl_step/run_step.sh extension > $O/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-extension-s0
rm -f $d/manifest.json; gzip -f $d/kvault_raw.json 2>/dev/null
mkdir -p $O/rl_step-extension-s0 && cp $d/kvault_raw.json.gz $d/summary.md $O/rl_step-extension-s0/
grep -E "seconds per step|statuses as|\*\*|exclusive|drain" $O/step.txt
