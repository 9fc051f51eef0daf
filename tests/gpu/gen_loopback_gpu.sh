#!/usr/bin/env bash
# `kvault gen` against the loopback replay server on an NVIDIA GPU: the CI test
# tests/integration/test_gen_loopback.sh with HIP answers (examples/hip, run through
# the HIP-on-NVIDIA headers) and with CUDA answers (examples/cuda, fewer tasks, so
# fewer answer paths), on the cuda backend, with timing on; then
# tests/integration/test_gen_loopback_triton.sh (`--lang triton`, compiled by Triton)
# and test_gen_loopback_native.sh with `--format native --lang cuda` (examples/native/cuda).
#
#   tests/gpu/gen_loopback_gpu.sh [KVAULT_BINARY]     (default .carry/kvault)
#
# Prints "hip: ok ...", "cuda: ok ...", "triton: ok" and "native-cuda: ok" and exits 0
# when all pass; logs in $OUT.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export KVAULT=$(realpath "${1:-$root/.carry/kvault}")
export KVAULT_SOURCE_ROOT=$root KVAULT_PYTHON=${KVAULT_PYTHON:-python3}
export KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-gen-cache}
# More lanes than CI's two: each HIP/CUDA extension build is about a minute of nvcc there.
export GEN_JOBS=${GEN_JOBS:-8} GEN_CONCURRENCY=${GEN_CONCURRENCY:-8}
out=${OUT:-$root/gen-gpu-out}
mkdir -p "$out"
status=0
for lang in hip cuda; do
  ext=.hip; [ "$lang" = cuda ] && ext=.cu
  GEN_LANG=$lang GEN_LANG_EXT=$ext GEN_BACKEND=cuda GEN_EXAMPLES=$root/examples/$lang GEN_TIMING_FLAG= \
    bash tests/integration/test_gen_loopback.sh > "$out/$lang.log" 2>&1
  rc=$?
  echo "$lang: $(tail -1 "$out/$lang.log") (exit $rc)"
  [ $rc = 0 ] || { status=1; tail -30 "$out/$lang.log"; }
done
GEN_BACKEND=cuda GEN_TIMING_FLAG= bash tests/integration/test_gen_loopback_triton.sh > "$out/triton.log" 2>&1
rc=$?
echo "triton: $(tail -1 "$out/triton.log") (exit $rc)"
[ $rc = 0 ] || { status=1; tail -30 "$out/triton.log"; }
GEN_BACKEND=cuda GEN_TIMING_FLAG= GEN_LANG=cuda GEN_EXAMPLES=$root/examples/native/cuda \
  bash tests/integration/test_gen_loopback_native.sh > "$out/native-cuda.log" 2>&1
rc=$?
echo "native-cuda: $(tail -1 "$out/native-cuda.log") (exit $rc)"
[ $rc = 0 ] || { status=1; tail -30 "$out/native-cuda.log"; }
exit $status
