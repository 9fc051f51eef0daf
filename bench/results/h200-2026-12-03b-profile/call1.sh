#!/usr/bin/env bash
# Device call 1 (2026-12-03, second session): where a correctness run's time goes.
# The first 8 tasks of the native RL step (64 cold candidates) through kvault serve,
# once with every worker request profiled (KVAULT_SANDBOX=off, KVAULT_WORKER_PROFILE),
# once as usual (sandbox on, no profile) to compare the phases. Binary: .carry/kvault
# (043923b); the worker is the tree's Python. Run from the repository root.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
rm -rf /tmp/prof /tmp/res
KVAULT_SANDBOX=off KVAULT_WORKER_PROFILE=/tmp/prof TASKS=8 PARTS=kvault KVAULT_LIMIT_S=150 BUDGET_S=170 \
  OUT=/tmp/res timeout 200 bash bench/rl_step/run_step.sh native > $O/step-profile.txt 2>&1
echo "profiled step exit $?"
cp /tmp/res/rl_step-native-s0/summary.md $O/summary-profile.md
python3 bench/worker_profile.py /tmp/prof --top 30 \
  --kinds run#1,run#2+,reference#1,reference#2+,handoff_compare,write_outputs,load#1,hello > $O/profile.txt 2>&1
mkdir -p /tmp/profj && cp /tmp/prof/*.jsonl /tmp/profj/ && tar -C /tmp -czf $O/requests.tar.gz profj
rm -rf /tmp/res
TASKS=8 PARTS=kvault KVAULT_LIMIT_S=150 BUDGET_S=170 OUT=/tmp/res timeout 200 \
  bash bench/rl_step/run_step.sh native > $O/step-plain.txt 2>&1
echo "plain step exit $?"
cp /tmp/res/rl_step-native-s0/summary.md $O/summary-plain.md
head -40 $O/profile.txt
grep -E "seconds per step|correctness|gate" $O/summary-profile.md $O/summary-plain.md
