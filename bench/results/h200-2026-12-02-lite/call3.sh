#!/usr/bin/env bash
# Device call 3 (2026-12-02, afternoon): the adversarial suite (tests/gpu/adversarial_gpu.sh)
# with the binary of c86ec4c: the integrity check of worker members and functions' code
# (e0de533) and the lite extension build, neither run on the H200 before. Run from the
# repository root with .carry/kvault and .carry/lib carried; results under $OUT.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
KVAULT=$PWD/.carry/kvault BUDGET_S=220 timeout 250 bash tests/gpu/adversarial_gpu.sh > $OUT/adversarial.txt 2>&1
echo "adversarial exit $?" | tee -a $OUT/adversarial.txt
grep -E "problem|checked|exit|policy|lite" $OUT/adversarial.txt | head -30
(cd $OUT && tar czf adversarial.tar.gz adversarial 2>/dev/null && rm -rf adversarial)
