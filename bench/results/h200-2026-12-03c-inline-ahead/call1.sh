#!/usr/bin/env bash
# Device call 1 (2026-12-03, third session): the RL step with KernelBench-format
# candidates (AMD's own load_inline ModelNew files, 64 x 8, cold caches) through
# kvault serve, now that their load_inline calls are noted and built ahead of the
# lanes (InlinePrebuild). kvault side only: AMD's way on these same files was
# measured in h200-2026-12-02-inline (its files do not depend on the engine).
# Binary: .carry/kvault (portable Release of this tree).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nproc; uptime
rm -rf /tmp/res
PARTS=kvault KVAULT_LIMIT_S=480 BUDGET_S=500 OUT=/tmp/res timeout 540 \
  bash bench/rl_step/run_step.sh kernelbench > $O/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-kernelbench-s0
rm -f $d/manifest.json; gzip -f $d/kvault_raw.json 2>/dev/null
mkdir -p $O/rl_step-kernelbench-s0 && cp $d/summary.md $d/results.json $d/kvault_raw.json.gz $O/rl_step-kernelbench-s0/ 2>/dev/null
tail -c 20000 $d/serve.log > $O/serve-tail.log 2>/dev/null
grep -c "failed to start" $d/serve.log
sed -n '1,60p' $d/summary.md
