#!/usr/bin/env bash
# New code on the CPU: N distinct extension-format candidates of one task (relu), none
# built before, verified side by side in one run four ways (BENCHMARKS.md, "New
# extension candidates on the CPU"):
#   full     kvault eval with KVAULT_LITE_EXT=0, the full build (precompiled torch/extension.h)
#   lite     kvault eval, the lite extension build (the default: include_lite/, one object)
#   kernelbench  kvault eval of the inline way's ModelNew files themselves: their
#            load_inline calls built by the engine (docs/toolchains.md, "load_inline
#            candidates"), the lite way
#   inline   bench/load_inline_baseline.py: each candidate as a KernelBench ModelNew
#            that builds the same C++ with torch.utils.cpp_extension.load_inline, checked
#            and timed as KernelBench does (CPU: no cache flush)
#
#   bench/cpu_new_candidates.sh [N=8] [JOBS=2]
#
# The one-time setup (the precompiled header, the lite object, the task's reference
# outputs) is done first on another candidate and not counted: the figure is the cost
# of new candidates on a machine that has verified something. Every way's compile
# caches start empty for the N candidates. Prints one line per way and the ratios;
# writes runs and env.txt to $OUT (default bench/results/cpu-<date>-new-candidates).
# Exits 1 when a candidate does not pass. Expects $KVAULT (default build/kvault).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-8}; jobs=${2:-2}
K=${KVAULT:-$root/build/kvault}
[ -f "$root/scripts/env.sh" ] && source "$root/scripts/env.sh"
py=${KVAULT_PYTHON:-python3}
out=${OUT:-$root/bench/results/cpu-$(date -u +%Y-%m-%d)-new-candidates}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/suite" "$work/setup" "$work/ext" "$work/inline"
export KVAULT_SOURCE_ROOT=$root KVAULT_CACHE_DIR=$work/cache TORCH_EXTENSIONS_DIR=$work/torch-ext
cp "$root/examples/suite/relu.py" "$work/suite/relu.py"

# relu_v: the same kernel, a different constant per variant, so every source is new.
body() {
  cat <<SRC
torch::Tensor forward(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu: float32 expected");
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  const float* p = xc.data_ptr<float>();
  float* q = out.data_ptr<float>();
  const float floor_v$1 = 0.0f * $1;
  for (int64_t i = 0; i < xc.numel(); ++i) q[i] = p[i] > floor_v$1 ? p[i] : floor_v$1;
  return out;
}
SRC
}
extension() {  # variant -> an extension-format source
  printf '// variant %s\n#include <torch/extension.h>\n\n' "$1"
  body "$1"
  printf '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "relu"); }\n'
}
extension setup > "$work/setup/relu.setup.cpp"
for i in $(seq 1 "$n"); do
  extension "$i" > "$work/ext/relu.v$i.cpp"
  cat > "$work/inline/relu.v$i.py" <<SRC
# variant $i
import torch, torch.nn as nn
from torch.utils.cpp_extension import load_inline
_SRC = r'''
#include <torch/extension.h>
$(body "$i")
'''
_mod = load_inline(name="kv_bench_cpu_relu_v$i", cpp_sources=_SRC, functions=["forward"], verbose=False)
class ModelNew(nn.Module):
    def forward(self, x):
        return _mod.forward(x)
SRC
done

eval_run() {  # name candidates-dir [env...] -> wall seconds on stdout
  local name=$1 dir=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  env "$@" "$K" eval --suite "$work/suite" --candidates "$dir" --backend cpu --jobs "$jobs" \
    --db "$work/kv.db" --run "$name" --json > "$out/$name.json" 2> "$out/$name.log"
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 2))"
}

{ uname -a; nproc; uptime; g++ --version | head -1; "$py" -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
  echo "command: bench/cpu_new_candidates.sh $n $jobs"; git -C "$root" rev-parse HEAD; } > "$out/env.txt" 2>&1

setup_s=$(eval_run setup "$work/setup" KVAULT_LITE_EXT=0)
setup_lite_s=$(eval_run setup-lite "$work/setup" KVAULT_LITE_EXT=1)
echo "setup (not counted): full ${setup_s} s, lite ${setup_lite_s} s" | tee "$out/summary.txt"
echo "load average before the timed runs: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/summary.txt"
full_s=$(eval_run full "$work/ext" KVAULT_LITE_EXT=0)
lite_s=$(eval_run lite "$work/ext" KVAULT_LITE_EXT=1)
kernelbench_s=$(eval_run kernelbench "$work/inline" KVAULT_LITE_EXT=1)
t0=$(date +%s.%N)
"$py" "$root/bench/load_inline_baseline.py" --suite "$work/suite" --candidates "$work/inline" --jobs "$jobs" \
  --device cpu --out "$out/inline.json" > "$out/inline.log" 2>&1
inline_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/summary.txt"

cp "$work/kv.db" "$out/kv.db"
python3 - "$out" "$n" "$full_s" "$lite_s" "$inline_s" "$kernelbench_s" <<'PY' | tee -a "$out/summary.txt"
import json, sqlite3, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
# The build record of each attempt (environment.build in the store: seconds, lite_ext).
db = sqlite3.connect(f"{out}/kv.db")
builds = {(run, cand): (json.loads(env).get("build") or {})
          for run, cand, env in db.execute("SELECT run, candidate_path, environment FROM attempts")}
wall = {"full": float(sys.argv[3]), "lite": float(sys.argv[4]), "inline": float(sys.argv[5]),
        "kernelbench": float(sys.argv[6])}
bad = []
build = {}
for way in ("full", "lite", "kernelbench"):
    attempts = json.load(open(f"{out}/{way}.json"))["attempts"]
    if len(attempts) != n or any(a["status"] != "passed" for a in attempts):
        bad.append(f"{way}: " + ", ".join(a["status"] for a in attempts))
    records = [builds.get((way, a["candidate"]), {}) for a in attempts]
    build[way] = [b["seconds"] for b in records if "seconds" in b]
    if way != "full":
        not_lite = [a["candidate"] for a, b in zip(attempts, records) if not b.get("lite_ext")]
        if not_lite: bad.append(way + ": built the full way: " + ", ".join(not_lite))
    if way == "kernelbench":
        by_pytorch = [a["candidate"] for a, b in zip(attempts, records)
                      if not all(c.get("built") for c in b.get("inline", [{}]))]
        if by_pytorch: bad.append("kernelbench: load_inline left to PyTorch: " + ", ".join(by_pytorch))
inline = json.load(open(f"{out}/inline.json"))["attempts"]
if len(inline) != n or any(a["status"] != "passed" for a in inline):
    bad.append("inline: " + ", ".join(a["status"] for a in inline))
build["inline"] = [a["load_seconds"] for a in inline if "load_seconds" in a]
for way in ("full", "lite", "kernelbench", "inline"):
    b = build[way]
    med = statistics.median(b) if b else float("nan")
    print(f"{way:11s} {n} candidates in {wall[way]:7.2f} s wall ({60 * n / wall[way]:5.1f} per minute); "
          f"build per candidate median {med:.2f} s (min {min(b, default=float('nan')):.2f}, max {max(b, default=float('nan')):.2f})")
print(f"ratio vs load_inline (wall): full {wall['inline'] / wall['full']:.2f}x, lite {wall['inline'] / wall['lite']:.2f}x, "
      f"kernelbench (the same files) {wall['inline'] / wall['kernelbench']:.2f}x")
for b in bad: print("NOT PASSED", b)
sys.exit(1 if bad else 0)
PY
