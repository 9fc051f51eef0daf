#!/usr/bin/env bash
# Device call 1 (2026-12-03, fourth session): KernelBench's own harness against
# kvault eval, cold, on 24 KernelBench-format ModelNew files of our own (the RL
# step's load_inline files of three tasks, all 8 samples each).
# Carried: .carry/kvault (portable Release of this tree, stripped) and .carry/lib;
# .carry/kernelbench (ScalingIntelligence/KernelBench at the commit in its COMMIT
# file: src/, pyproject.toml, LICENSE; not part of this repository); .whl (pydantic
# and its needs, python-dotenv: KernelBench imports them, the machine lacks them).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
( while sleep 30; do echo "$(date +%T) nvcc $(pgrep -c -f 'nvcc|cicc|cudafe') workers $(pgrep -c -f kvault_worker) py $(pgrep -c python3) load $(cut -d' ' -f1 /proc/loadavg)"; done ) > $OUT/monitor.txt 2>&1 &
KB_PYTHONPATH=/tmp/site timeout 560 bash bench/kernelbench_side_by_side.sh .carry/kernelbench
echo "side by side exit $?"
kill %1 2>/dev/null
tail -5 $OUT/kernelbench-side-by-side/kernelbench.log
