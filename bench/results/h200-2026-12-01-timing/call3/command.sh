#!/usr/bin/env bash
# Device call C: verifications per minute, this engine against the one before the timing
# defences (.carry/kvault-b with its tree .carry/old), same machine, same batch: 48
# KernelBench-format candidates (12 copies of 4 correct examples), 6 lanes, fresh caches,
# each run cut at 62 s. Progress lines are time-stamped ($OUT/<run>.log).
set -u
root=$PWD
export LD_LIBRARY_PATH=$root/.carry/lib KVAULT_PYTHON=python3 PYTHONUNBUFFERED=1
c=/tmp/kb; mkdir -p $c
for t in layer_norm mse_loss relu softmax; do for i in $(seq -w 1 12); do cp examples/kernelbench/$t.py $c/$t.v$i.py; done; done
run() {  # NAME BINARY TREE
  KVAULT_SOURCE_ROOT=$3 KVAULT_CACHE_DIR=/tmp/c-$1 timeout 62 $2 eval --suite examples/suite --candidates $c \
    --backend cuda --jobs 6 --run $1 --db /tmp/$1.db 2>&1 >/dev/null | while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > $OUT/$1.log
  echo "$1: $(grep -c ': passed' $OUT/$1.log) passed, $(grep -c '\] ' $OUT/$1.log) verified"
}
date -u > $OUT/env.txt; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $OUT/env.txt
run old $root/.carry/kvault-b $root/.carry/old
run new $root/.carry/kvault $root
