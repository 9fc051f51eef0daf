#!/usr/bin/env bash
# End-to-end throughput of native-format candidates against KernelBench candidates that
# build with torch.utils.cpp_extension.load_inline, with warm caches (docs/native-format.md).
#
#   bench/native_throughput.sh cpu  [N]   # C++ on the CPU backend (runs on the CI machine)
#   bench/native_throughput.sh cuda [N]   # CUDA on an NVIDIA GPU
#
# Makes N distinct relu candidates of each kind (the sources differ, so each is its own
# build), verifies them all once to fill the compile cache, the torch extension cache
# and the reference cache, then times a second `kvault eval --no-timing --jobs 1` of
# each kind. Prints one line per kind and the ratio; exits 1 when a warm-pass candidate
# does not pass. Expects $KVAULT (default build/kvault, or .carry/kvault when present).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
backend=${1:-cpu}; n=${2:-6}
K=${KVAULT:-$([ -x "$root/.carry/kvault" ] && echo "$root/.carry/kvault" || echo "$root/build/kvault")}
[ -f "$root/scripts/env.sh" ] && source "$root/scripts/env.sh"
export KVAULT_SOURCE_ROOT=$root KVAULT_CACHE_DIR=${KVAULT_CACHE_DIR:-/tmp/kv-native-bench-cache}
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/kv-native-bench-torch-ext}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/suite" "$work/native" "$work/inline"
cp "$root/examples/suite/relu.py" "$work/suite/relu.py"

for i in $(seq 1 "$n"); do
  if [ "$backend" = cpu ]; then
    cat > "$work/native/relu.v$i.cpp" <<SRC
// variant $i
#include <kvault/native.h>
extern "C" int kvault_forward(const kv_tensor* in, int, const kv_scalar*, int, kv_tensor* out, int, void*) {
  const float* x = (const float*)in[0].data; float* y = (float*)out[0].data;
  for (int64_t i = 0; i < in[0].numel; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
  return 0;
}
SRC
    body='torch::Tensor relu_v(torch::Tensor x) { auto xc = x.contiguous(); auto y = torch::empty_like(xc);
  const float* p = xc.data_ptr<float>(); float* q = y.data_ptr<float>();
  for (int64_t i = 0; i < xc.numel(); ++i) q[i] = p[i] > 0.f ? p[i] : 0.f; return y; }'
    inline_args="cpp_sources=_SRC, functions=['relu_v']"
  else
    cat > "$work/native/relu.v$i.cu" <<SRC
// variant $i
#include <cuda_runtime.h>
#include <kvault/native.h>
__global__ void k(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f; }
extern "C" int kvault_forward(const kv_tensor* in, int, const kv_scalar*, int, kv_tensor* out, int, void* s) {
  int64_t n = in[0].numel; if (n == 0) return 0;
  k<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)s>>>((const float*)in[0].data, (float*)out[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
SRC
    body='#include <ATen/cuda/CUDAContext.h>
__global__ void k(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f; }
torch::Tensor relu_v(torch::Tensor x) { auto xc = x.contiguous(); auto y = torch::empty_like(xc); int64_t n = xc.numel();
  if (n) k<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
  return y; }'
    inline_args="cpp_sources='torch::Tensor relu_v(torch::Tensor x);', cuda_sources=_SRC, functions=['relu_v']"
  fi
  cat > "$work/inline/relu.v$i.py" <<SRC
# variant $i
import torch, torch.nn as nn
from torch.utils.cpp_extension import load_inline
_SRC = r'''
#include <torch/extension.h>
$body
'''
_mod = load_inline(name="kv_bench_relu_v$i", $inline_args, verbose=False)
class ModelNew(nn.Module):
    def forward(self, x):
        return _mod.relu_v(x)
SRC
done

run() {  # kind run-name -> seconds on stdout
  local t0 t1
  t0=$(date +%s.%N)
  "$K" eval --suite "$work/suite" --candidates "$work/$1" --backend "$backend" --jobs 1 --no-timing \
    --db "$work/kv.db" --run "$2" --json > "$work/$2.json" 2> "$work/$2.log" || { cat "$work/$2.log" >&2; }
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 2))"
}
for kind in native inline; do run "$kind" "cold-$kind" > /dev/null; done
native_s=$(run native warm-native)
inline_s=$(run inline warm-inline)
python3 - "$work" "$n" "$native_s" "$inline_s" <<'PY'
import json, sys
work, n, native_s, inline_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
bad = 0
median = {}
for run in ("warm-native", "warm-inline"):
    attempts = json.load(open(f"{work}/{run}.json"))["attempts"]
    statuses = [a["status"] for a in attempts]
    if len(attempts) != n or any(s != "passed" for s in statuses):
        bad += 1; print(run, "did not pass:", statuses, [a["message"] for a in attempts][:2])
    seconds = sorted(a.get("seconds") or 0 for a in attempts) or [0]
    median[run] = seconds[len(seconds) // 2]
# Wall time includes one worker start per eval (importing torch); the per-attempt
# median is the verification of one candidate once the worker is up.
print(f"native:      {n} candidates in {native_s:.2f} s wall, median {median['warm-native']:.3f} s per candidate")
print(f"load_inline: {n} candidates in {inline_s:.2f} s wall, median {median['warm-inline']:.3f} s per candidate")
print(f"throughput ratio (wall): {inline_s / native_s:.1f}x")
if median["warm-native"] > 0:
    print(f"throughput ratio (per candidate): {median['warm-inline'] / median['warm-native']:.1f}x")
sys.exit(1 if bad else 0)
PY
