#!/usr/bin/env bash
# Cold nvcc builds of extension candidates, two ways (docs/toolchains.md). For each
# correct CUDA example (examples/cuda/<task>.cu), on a CUDA machine with a CUDA PyTorch:
#   full   nvcc with PyTorch's full <torch/extension.h> (flags.cc's command)
#   lite   the same with -I include_lite first (the lite extension build; -DKVAULT_LITE_HALF=1
#          for sources that name half or bfloat16) and include_lite/kvault_lite/lite.cc,
#          compiled once by g++ with the full headers and -DKVAULT_LITE_CUDA=1, linked in
# WAYS picks them (default "full lite"). The full builds of all tasks run at once first
# (PARALLEL_FULL=1, the default, to save time; their times are then those of builds side
# by side), every other build alone. Prints each build's wall time (nvcc --time per pass
# in $OUT/<task>.<way>.time.csv) and checks in Python that every way's module gives
# outputs equal to the first way's on the task's inputs, and close to the reference's.
#
#   OUT=$OUT WAYS="full lite" bash bench/h200_ext_nvcc.sh [sm_90]     (about 3 minutes on the H200)
#
# Exits 1 when a build fails or the outputs differ.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-sm_90}; v=${arch#sm_}
py=${KVAULT_PYTHON:-python3}
out=${OUT:-$root/ext-nvcc-out}
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

ways=${WAYS:-full lite}
secs_since() { python3 -c "print(round($(date +%s.%N) - $1, 1))"; }
: > "$out/summary.txt"
case " $ways " in *" lite "*)
  cuda_inc=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")/include
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  g++ -O2 -std=c++17 -fPIC $defs $TORCH_INC -DKVAULT_LITE_CUDA=1 -isystem "$cuda_inc" \
    -c "$root/include_lite/kvault_lite/lite.cc" -o "$work/lite.o" > "$out/lite.log" 2>&1 ||
    { echo "lite.o: FAIL (see $out/lite.log)"; cat "$out/lite.log" | head -30; exit 1; }
  echo "lite.o (once): $(secs_since "$t0") s" | tee -a "$out/summary.txt";;
esac

build() {  # task way: one build, its wall time to the summary
  local task=$1 way=$2 src="$root/examples/cuda/$1.cu" extra="" obj="" t0 rc
  case "$way" in
    lite) extra="-I $root/include_lite"; obj="$work/lite.o"
          grep -qi 'half\|bfloat' "$src" && extra="$extra -DKVAULT_LITE_HALF=1";;
  esac
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  $nv $extra $defs -DTORCH_EXTENSION_NAME=kv_${task}_$way $TORCH_INC "$src" $obj -shared -o "$work/kv_${task}_$way.so" \
    -cudart shared $TORCH_LIB --time "$out/$task.$way.time.csv" > "$out/$task.$way.log" 2>&1
  rc=$?
  echo "$task $way: $(secs_since "$t0") s (exit $rc)" | tee -a "$out/summary.txt"
  return $rc
}

tasks=()
for src in "$root"/examples/cuda/*.cu; do
  case "$src" in *.wrong-*|*.bad-*) continue;; esac
  tasks+=("$(basename "$src" .cu)")
done
status=0
if [ "${PARALLEL_FULL:-1}" = 1 ] && [[ " $ways " == *" full "* ]]; then
  t0=$(date +%s.%N)
  for task in "${tasks[@]}"; do build "$task" full & done
  wait
  echo "full builds of ${#tasks[@]} tasks at once: $(secs_since "$t0") s" | tee -a "$out/summary.txt"
fi
for task in "${tasks[@]}"; do
  for way in $ways; do
    [ "$way" = full ] && [ "${PARALLEL_FULL:-1}" = 1 ] && continue
    build "$task" "$way" || status=1
  done
done
for task in "${tasks[@]}"; do
  "$py" - "$root/examples/suite/$task.py" "$work" "$task" $ways <<'PY' 2>&1 | tee -a "$out/summary.txt" || status=1
import importlib.machinery, importlib.util, sys, torch
task_path, work, task = sys.argv[1:4]
ways = sys.argv[4:]
def load(name, path):
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    m = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(m)
    return m
spec = importlib.util.spec_from_file_location("task", task_path); t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
mods = [load("kv_%s_%s" % (task, w), "%s/kv_%s_%s.so" % (work, task, w)) for w in ways]
torch.manual_seed(1)
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in t.get_inputs()]
model = t.Model(*getattr(t, "get_init_inputs", lambda: [])()).cuda()
params = [p.detach() for p in model.parameters()]
want = model(*inputs)
def run(m):
    try:
        return m.forward(*inputs)
    except TypeError:  # tasks whose forward takes the weights too (a functional twin)
        return m.forward(*inputs, *params)
outs = [run(m) for m in mods]
same = all(torch.equal(outs[0], o) for o in outs[1:])
err = (outs[0].float() - want.float()).abs().max().item()
print("%s outputs of %s: %s; max |first - reference| %.3g" % (task, "/".join(ways), "equal" if same else "DIFFERENT", err))
sys.exit(0 if same else 1)
PY
done
exit $status
