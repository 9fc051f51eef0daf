#!/usr/bin/env bash
# Device call 2 (2026-12-03, third session), call 1 again after its fix: the RL step with KernelBench-format
# candidates (AMD's own load_inline ModelNew files, 64 x 8, cold caches) through
# kvault serve, now that their load_inline calls are noted and built ahead of the
# lanes (InlinePrebuild). kvault side only: AMD's way on these same files was
# measured in h200-2026-12-02-inline (its files do not depend on the engine).
# Binary: .carry/kvault (portable Release of this tree). Call 1 ran out of its
# time with no result: the ahead builds also took every broken file the full way
# (minutes of nvcc each, repeated by its lane since failures are not cached); now
# they stop after the lite build (BuildRequest::lite_only).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
nproc; uptime
rm -rf /tmp/res
# Every 30 s: compilers and workers running, and the load.
( while sleep 30; do echo "$(date +%T) nvcc $(pgrep -c -f 'nvcc|cicc|cudafe') g++ $(pgrep -c -x 'cc1plus') workers $(pgrep -c -f kvault_worker) load $(cut -d' ' -f1 /proc/loadavg)"; done ) > $O/monitor.txt 2>&1 &
PARTS=kvault KVAULT_LIMIT_S=300 BUDGET_S=320 OUT=/tmp/res timeout 540 \
  bash bench/rl_step/run_step.sh kernelbench > $O/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-kernelbench-s0
rm -f $d/manifest.json; gzip -f $d/kvault_raw.json 2>/dev/null
mkdir -p $O/rl_step-kernelbench-s0 && cp $d/summary.md $d/results.json $d/kvault_raw.json.gz $O/rl_step-kernelbench-s0/ 2>/dev/null
tail -c 20000 $d/serve.log > $O/serve-tail.log 2>/dev/null
grep -c "failed to start" $d/serve.log
sed -n "1,60p" $d/summary.md; kill %1 2>/dev/null; cat $O/monitor.txt | tail -20
