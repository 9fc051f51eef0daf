#!/usr/bin/env bash
# What the fast extension build's split would save with nvcc (docs/toolchains.md,
# "Fast extension builds": built for g++ only so far). For each correct CUDA example
# (examples/cuda/<task>.cu), on a CUDA machine with a CUDA PyTorch:
#   full   nvcc with PyTorch's full <torch/extension.h> (today's command, flags.cc)
#   light  the same with -I include_ext first (the light header in the host and device
#          passes) and include_ext/kvault_ext/binding.cc, compiled once by g++ with the
#          full headers, linked in
# Prints the wall time of each build (nvcc --time per pass in $OUT/<task>.<way>.time.csv)
# and checks in Python that both modules give equal outputs on the task's inputs.
#
#   OUT=$OUT bash bench/h200_light_nvcc.sh [sm_90]        (about 5 minutes on the H200)
#
# Exits 1 when a build fails or the outputs differ.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-sm_90}; v=${arch#sm_}
py=${KVAULT_PYTHON:-python3}
out=${OUT:-$root/light-nvcc-out}
mkdir -p "$out"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
eval "$("$py" - "$root/python" <<'PY'
import sys, sysconfig, torch
sys.path.insert(0, sys.argv[1])
from torch.utils import cpp_extension as c
from kvault_worker.build_info import _paths  # fn(cuda=True) or fn(device_type="cuda"), by version
inc = " ".join("-isystem " + p for p in _paths(c.include_paths, True) + [sysconfig.get_paths()["include"]])
libs = " ".join("-L%s -Xlinker -rpath,%s" % (p, p) for p in _paths(c.library_paths, True))
print("TORCH_INC='%s'" % inc)
print("TORCH_LIB='%s -lc10 -ltorch -ltorch_cpu -ltorch_python -lc10_cuda -ltorch_cuda'" % libs)
print("ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
PY
)"
defs="-D_GLIBCXX_USE_CXX11_ABI=$ABI -DTORCH_API_INCLUDE_EXTENSION_H"
nv="nvcc -O3 -std=c++17 -Xcompiler -fPIC --expt-relaxed-constexpr -gencode arch=compute_$v,code=[sm_$v,compute_$v]
    -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__
    -D__CUDA_NO_HALF2_OPERATORS__"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; g++ --version | head -1
  "$py" -c 'import torch; print("torch", torch.__version__)'; nproc; uptime; git -C "$root" rev-parse HEAD; } > "$out/env.txt" 2>&1

t0=$(date +%s.%N)
# shellcheck disable=SC2086
g++ -O2 -std=c++17 -fPIC $defs $TORCH_INC -c "$root/include_ext/kvault_ext/binding.cc" -o "$work/binding.o" \
  > "$out/binding.log" 2>&1 || { echo "binding: FAIL (see $out/binding.log)"; exit 1; }
echo "binding.o (once): $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" | tee "$out/summary.txt"

status=0
for src in "$root"/examples/cuda/*.cu; do
  case "$src" in *.wrong-*|*.bad-*) continue;; esac
  task=$(basename "$src" .cu)
  for way in full light; do
    extra=""; obj=""
    [ "$way" = light ] && { extra="-I $root/include_ext"; obj="$work/binding.o"; }
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    $nv $extra $defs -DTORCH_EXTENSION_NAME=kv_${task}_$way $TORCH_INC "$src" $obj -shared -o "$work/kv_${task}_$way.so" \
      -cudart shared $TORCH_LIB --time "$out/$task.$way.time.csv" > "$out/$task.$way.log" 2>&1
    rc=$?
    secs=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
    echo "$task $way: ${secs} s (exit $rc)" | tee -a "$out/summary.txt"
    [ $rc -eq 0 ] || status=1
  done
  "$py" - "$root/examples/suite/$task.py" "$work" "$task" <<'PY' 2>&1 | tee -a "$out/summary.txt" || status=1
import importlib.machinery, importlib.util, sys, torch
task_path, work, task = sys.argv[1:]
def load(name, path):
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    m = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(m)
    return m
spec = importlib.util.spec_from_file_location("task", task_path); t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
full = load("kv_%s_full" % task, "%s/kv_%s_full.so" % (work, task))
light = load("kv_%s_light" % task, "%s/kv_%s_light.so" % (work, task))
torch.manual_seed(1)
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in t.get_inputs()]
model = t.Model(*getattr(t, "get_init_inputs", lambda: [])()).cuda()
params = [p.detach() for p in model.parameters()]
try:
    a, b = full.forward(*inputs), light.forward(*inputs)
except TypeError:  # tasks whose forward takes the weights too (a functional twin)
    a, b = full.forward(*inputs, *params), light.forward(*inputs, *params)
same = torch.equal(a, b) if isinstance(a, torch.Tensor) else all(torch.equal(x, y) for x, y in zip(a, b))
print("%s outputs: %s" % (task, "equal" if same else "DIFFERENT"))
sys.exit(0 if same else 1)
PY
done
exit $status
