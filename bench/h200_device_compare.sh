#!/usr/bin/env bash
# Outputs compared on the device (docs/device-compare.md), on the H200, in one call:
#   1. bench/probe_devmem.py: a process in other user, PID and mount namespaces maps
#      device memory exported as a file descriptor (what the sandboxed worker does);
#   2. the KernelBench-sized task (bench/kernelbench_sized, 3.2 GB input and output),
#      cold and warm caches, one lane (bench/h200_throughput.sh big);
#   3. the adversarial suite with every case compared on the device
#      (KVAULT_DEVICE_COMPARE_MIN_BYTES=0): statuses must stay as labelled.
# Results under $OUT/device-compare/. Expects .carry/kvault and a CUDA PyTorch.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
res=${OUT:-$root/bench-out}/device-compare
mkdir -p "$res"
export KVAULT_PYTHON=${KVAULT_PYTHON:-python3}
timeout 120 "$KVAULT_PYTHON" bench/probe_devmem.py --gb 3.2 > "$res/probe.txt" 2>&1
echo "probe: exit $?" | tee -a "$res/probe.txt"
cat "$res/probe.txt"
WORK=${WORK:-/dev/shm/kv-device-compare} OUT=$res BIG_LIMIT=${BIG_LIMIT:-120} bash bench/h200_throughput.sh big \
  > "$res/big.txt" 2>&1
head -4 "$res/big.txt"
if [ "${ADVERSARIAL:-1}" = 1 ]; then
  KVAULT_DEVICE_COMPARE_MIN_BYTES=0 KVAULT_CACHE_DIR=/tmp/kv-cache-dc OUT=$res BUDGET_S=${ADV_BUDGET_S:-200} \
    bash tests/gpu/adversarial_gpu.sh > "$res/adversarial.txt" 2>&1
  tail -6 "$res/adversarial.txt"
fi
