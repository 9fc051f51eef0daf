#!/usr/bin/env bash
# Device call 4 (2026-12-02, evening): the kvault side of call 3's step again with 12
# lanes instead of 6. Call 3 was lane-bound: a KernelBench candidate's load_inline calls
# are known only once a worker ran the file, so the lane builds them itself (51% of lane
# time), six at a time on a 16-core host. AMD's side of call 3 is the comparison
# (same files; merge with run_step.py --merge).
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
OUT_DIR=$OUT
PARTS=kvault KVAULT_LIMIT_S=330 BUDGET_S=370 OUT=/tmp/res timeout 400 \
  bash bench/rl_step/run_step.sh kernelbench --lanes 12 > $OUT_DIR/step.txt 2>&1
echo "step exit $?"
d=/tmp/res/rl_step-kernelbench-s0
rm -f $d/manifest.json
tar -C /tmp/res -czf $OUT_DIR/step.tar.gz rl_step-kernelbench-s0
grep -c "failed to start" $d/serve.log
sed -n '1,40p' $d/summary.md
