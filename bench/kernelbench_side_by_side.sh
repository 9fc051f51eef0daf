#!/usr/bin/env bash
# KernelBench-format candidates of our own, verified cold, side by side in one run:
# `kvault eval` against KernelBench's own harness (bench/kernelbench_harness.py: its
# build_compile_cache on every core, then eval_kernel_against_ref with 5 correctness
# and 100 timed trials, one candidate at a time). BENCHMARKS.md, "Side by side with
# KernelBench's own harness".
#
#   bash bench/kernelbench_side_by_side.sh KERNELBENCH_CHECKOUT
#
# The candidates: the RL step's ModelNew files (bench/rl_step/make_step.py --format
# kernelbench: every text new, load_inline CUDA, 5 correct, 2 wrong and 1 broken per
# task), all 8 samples of the tasks in $TASKS. Both sides start with empty caches (a
# fresh KVAULT_CACHE_DIR and TORCH_EXTENSIONS_DIR, fresh KernelBench build folders).
# Environment: KVAULT (default .carry/kvault, else build/kvault; .carry/lib goes on
# LD_LIBRARY_PATH), KVAULT_PYTHON (python3), TASKS (three tasks: elementwise,
# normalisation, matmul), SEED (0), LANES (6), CPU_WORKERS (core count), OUT,
# KB_PYTHONPATH (PYTHONPATH of the KernelBench side only: its pydantic, when carried).
# PARTS (default "kvault kernelbench"): with "kvault" alone, KB_FROM names the
# kernelbench.json of an earlier run on the same files (same SEED and TASKS; its side
# does not depend on the engine) to compare against. KV_SETUP=1: the kvault side first
# verifies one candidate of another task with the same caches (not counted: the
# one-time setup of a machine, e.g. the lite extension build's object), so its
# figure is that of new candidates on a machine that has verified something.
# Writes $OUT/kernelbench-side-by-side<SUFFIX>/{summary.txt,kvault.json,kvault.log,
# kernelbench.json,kernelbench.log}. Exit 1 when a kvault status differs from the
# manifest or a KernelBench evaluation gave no answer.
set -u
kb=${1:?usage: $0 KERNELBENCH_CHECKOUT}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ -z "${KVAULT:-}" ]; then
  if [ -x .carry/kvault ]; then KVAULT=$root/.carry/kvault; else KVAULT=$root/build/kvault; fi
fi
[ -d .carry/lib ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
py=${KVAULT_PYTHON:-python3}
export KVAULT_PYTHON=$py KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1
tasks=${TASKS:-t05_silu t55_layernorm t60_linear_relu}
out=${OUT:-$root/bench-out}/kernelbench-side-by-side${SUFFIX:-}
parts=${PARTS:-kvault kernelbench}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/tasks" "$work/cands"
"$py" bench/rl_step/make_step.py --out "$work/step" --format kernelbench --seed "${SEED:-0}" > /dev/null \
  || { echo "make_step.py failed" >&2; exit 1; }
for t in $tasks; do
  cp "$work/step/tasks/$t.py" "$work/tasks/" && cp "$work/step/amd/$t".s*.py "$work/cands/" || exit 1
done
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; nproc; uptime
  "$py" -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
  echo "kernelbench: $(cat "$kb/COMMIT" 2>/dev/null || git -C "$kb" rev-parse HEAD 2>/dev/null)"
  echo "kvault: $(git rev-parse HEAD 2>/dev/null)"; echo "tasks: $tasks"; } > "$out/env.txt" 2>&1

now() { date +%s.%N; }
kv_eval() {  # SUITE CANDIDATES RUN LOG: kvault eval with the side's caches, JSON on stdout
  KVAULT_CACHE_DIR=$work/kv-cache TORCH_EXTENSIONS_DIR=$work/kv-torch-ext \
    "$KVAULT" eval --suite "$1" --candidates "$2" --backend cuda --jobs "${LANES:-6}" \
    --db "$work/kv.db" --run "$3" --json 2> "$4"
}
kv_s=""; kb_json=${KB_FROM:-$out/kernelbench.json}; kb_rc=0
if [[ " $parts " == *" kvault "* ]]; then
  if [ "${KV_SETUP:-0}" = 1 ]; then
    mkdir -p "$work/setup/tasks" "$work/setup/cands"
    cp "$work/step/tasks/t00_relu.py" "$work/setup/tasks/" && cp "$work/step/amd/t00_relu.s1.py" "$work/setup/cands/"
    s0=$(now); kv_eval "$work/setup/tasks" "$work/setup/cands" setup "$out/kvault-setup.log" > "$out/kvault-setup.json"
    echo "setup (not counted): $(python3 -c "print(round($(now) - $s0, 1))") s" > "$out/setup.txt"
  fi
  t0=$(now)
  kv_eval "$work/tasks" "$work/cands" side "$out/kvault.log" > "$out/kvault.json"
  echo "kvault eval exit $?" >> "$out/kvault.log"
  kv_s=$(python3 -c "print($(now) - $t0)")
fi
if [[ " $parts " == *" kernelbench "* ]]; then
  PYTHONPATH=${KB_PYTHONPATH:-${PYTHONPATH:-}} TORCH_EXTENSIONS_DIR=$work/kb-torch-ext \
    "$py" bench/kernelbench_harness.py --kernelbench "$kb" \
    --tasks "$work/tasks" --candidates "$work/cands" --build-root "$work/kb-build" \
    --cpu-workers "${CPU_WORKERS:-$(nproc)}" --out "$out/kernelbench.json" > "$out/kernelbench.log" 2>&1
  kb_rc=$?
fi
[ -n "$kv_s" ] || { echo "no kvault part: nothing to compare" >&2; exit 1; }
cat "$out/setup.txt" 2>/dev/null

"$py" - "$work/step/manifest.json" "$out" "$kb_json" "$kv_s" "$kb_rc" <<'PY' | tee "$out/summary.txt"
import json, sys
manifest, out, kb_json, kv_s, kb_rc = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
expected = {c["id"] + ".py": c["expected"] for c in json.load(open(manifest))["candidates"]}
kv = {a["candidate"].rsplit("/", 1)[-1]: a["status"] for a in json.load(open(f"{out}/kvault.json"))["attempts"]}
kb = json.load(open(kb_json))
kb_by = {r["candidate"]: r for r in kb["results"]}
kb_s = kb["summary"]["wall_s"]
print(f"candidates: {len(kv)} kvault, {len(kb_by)} KernelBench ({kb_json})")
print(f"kvault eval (cold, wall): {kv_s:.1f} s")
print(f"KernelBench harness (cold, wall): {kb_s:.1f} s "
      f"(builds {kb['summary']['build_wall_s']} s on {kb['summary']['cpu_workers']} processes, "
      f"evaluations {kb['summary']['eval_wall_s']} s)")
print(f"ratio: {kb_s / kv_s:.2f}x (goal: at least 5x)")
bad = []
print(f"{'candidate':28} {'expected':14} {'kvault':14} KernelBench")
for name in sorted(kv):
    r = kb_by.get(name, {})
    verdict = ("no answer" if not r.get("answered") else "correct" if r.get("correct")
               else "compiled, wrong" if r.get("compiled") else "not compiled")
    print(f"{name:28} {expected.get(name, '?'):14} {kv[name]:14} {verdict}")
    if kv[name] != expected.get(name):
        bad.append(f"kvault: {name} is {kv[name]}, the manifest says {expected.get(name)}")
if kb["summary"]["unanswered"] or kb_rc:
    bad.append(f"KernelBench: no answer for {kb['summary']['unanswered']} (exit {kb_rc})")
print("verdict: " + ("ok" if not bad else "; ".join(bad)))
sys.exit(1 if bad else 0)
PY
