#!/usr/bin/env bash
# The real-world set: public LLM-written KernelBench solutions (load_inline ModelNew
# files, several models and repositories; not part of this repository, carried), verified
# by `kvault eval` and by KernelBench's own harness (bench/kernelbench_harness.py).
# BENCHMARKS.md, "The real-world set". DEVSET is made by bench/realworld_fetch.py (from
# mirrors of the source repositories; it also writes the KernelBench checkout).
#
#   bash bench/realworld_side_by_side.sh DEVSET KERNELBENCH_CHECKOUT
#
# DEVSET holds tasks/<task>.py (KernelBench's files), cands/<task>.<source>.py,
# manifest.json and subset.txt (the files the KernelBench side also runs; SUBSET names
# another list in DEVSET, e.g. subset12.txt). PARTS picks
# what runs, in this order (default "all-cold all-warm"):
#   all-cold     kvault eval of every file, empty caches (KVAULT_CACHE_DIR and
#                TORCH_EXTENSIONS_DIR fresh), within ALL_LIMIT seconds (default 330)
#   all-warm     the same files again with the caches all-cold left (a fresh store,
#                so every file is verified again), within WARM_LIMIT (default 200)
#   subset-cold  kvault eval of the subset's files, empty caches
#   subset-warm  the subset again on those caches
#   subset-kbtol the subset again on those caches with --tolerance kernelbench (its
#                harness's atol = rtol = 1e-2), for verdicts compared on equal terms
#   kernelbench  KernelBench's harness on the subset: its builds on every core, then
#                one evaluation per file (5 correctness, 100 timed trials)
#   kernelbench-warm  the same again on the build folders kernelbench left (its builds
#                then find their objects; the evaluations run as before)
#   examples     kvault eval of this repository's CUDA files in model habits
#                (examples/kernelbench/*.llm-*.py, *.flag-*.py for cuda); then
#                relu.py alone (one lane, no group turn), which launches on PyTorch's
#                current stream: its timing method says whether graphs capture it
# Environment: KVAULT (default .carry/kvault; .carry/lib goes on LD_LIBRARY_PATH),
# KVAULT_PYTHON (python3), LANES (6), KB_PYTHONPATH (pydantic for the KernelBench side).
# Writes $OUT/realworld.tar.gz (each part's eval JSON, store, log; remade after each
# part) and $OUT/env.txt;
# bench/realworld_summary.py reads them.
set -u
devset=$(cd "${1:?usage: $0 DEVSET KERNELBENCH}" && pwd)
kb=$(cd "${2:?usage: $0 DEVSET KERNELBENCH}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
KVAULT=${KVAULT:-$root/.carry/kvault}
[ -d .carry/lib ] && export LD_LIBRARY_PATH=$root/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
py=${KVAULT_PYTHON:-python3}
export KVAULT_PYTHON=$py KVAULT_SOURCE_ROOT=$root PYTHONUNBUFFERED=1
parts=${PARTS:-all-cold all-warm}
out=${OUT:-$root/bench-out}
res=$out/realworld
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$res" "$work/subset"
while read -r f; do [ -n "$f" ] && ln -s "$devset/cands/$f" "$work/subset/$f"; done < "$devset/${SUBSET:-subset.txt}"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; echo "cores $(nproc)"
  "$py" -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
  nvcc --version 2>/dev/null | tail -1
  echo "kernelbench: $(cat "$kb/COMMIT" 2>/dev/null)"; echo "kvault: $(git rev-parse HEAD 2>/dev/null)"
  echo "files: $(ls "$devset/cands" | wc -l), subset: $(ls "$work/subset" | wc -l), lanes: ${LANES:-6}"; } > "$out/env.txt" 2>&1

now() { date +%s.%N; }
# PART CANDIDATES CACHE LIMIT: one kvault eval, its wall time in PART.wall
kv_eval() {
  local part=$1 cands=$2 cache=$3 limit=$4 t0
  shift 4
  t0=$(now)
  KVAULT_CACHE_DIR=$work/$cache/kv TORCH_EXTENSIONS_DIR=$work/$cache/torch-ext timeout "$limit" \
    "$KVAULT" eval --suite "$devset/tasks" --candidates "$cands" --backend cuda --jobs "${LANES:-6}" \
    --db "$res/$part.db" --run "$part" --json "$@" > "$res/$part.json" 2> "$res/$part.log"
  echo "exit $? wall $("$py" -c "print(round($(now) - $t0, 2))")" > "$res/$part.wall"
  cat "$res/$part.wall"
}
for part in $parts; do
  echo "== $part $(date +%T)"
  case $part in
    all-cold) kv_eval all-cold "$devset/cands" all "${ALL_LIMIT:-330}" ;;
    all-warm) kv_eval all-warm "$devset/cands" all "${WARM_LIMIT:-200}" ;;
    subset-cold) kv_eval subset-cold "$work/subset" subset-cache "${SUBSET_LIMIT:-200}" ;;
    subset-warm) kv_eval subset-warm "$work/subset" subset-cache "${SUBSET_LIMIT:-200}" ;;
    subset-kbtol) kv_eval subset-kbtol "$work/subset" subset-cache "${SUBSET_LIMIT:-200}" --tolerance kernelbench ;;
    kernelbench|kernelbench-warm)
      t0=$(now)
      PYTHONPATH=${KB_PYTHONPATH:-${PYTHONPATH:-}} TORCH_EXTENSIONS_DIR=$work/kb-torch-ext \
        timeout "${KB_LIMIT:-480}" "$py" bench/kernelbench_harness.py --kernelbench "$kb" \
        --tasks "$devset/tasks" --candidates "$work/subset" --build-root "$work/kb-build" \
        --cpu-workers "$(nproc)" --out "$res/$part.json" > "$res/$part.log" 2>&1
      echo "exit $? wall $("$py" -c "print(round($(now) - $t0, 2))")" > "$res/$part.wall"
      cat "$res/$part.wall" ;;
    examples)
      mkdir -p "$work/examples"
      for f in relu.llm-habits softmax.llm-habits matmul.llm-cuda-pybind vector_add.flag-ccbin relu; do
        ln -s "$root/examples/kernelbench/$f.py" "$work/examples/$f.py"
      done
      KVAULT_CACHE_DIR=$work/examples-cache timeout 150 "$KVAULT" eval --suite "$root/examples/suite" \
        --candidates "$work/examples" --backend cuda --jobs 4 --db "$res/examples.db" --run examples --json \
        > "$res/examples.json" 2> "$res/examples.log"
      "$py" -c 'import json, sys
for a in json.load(open(sys.argv[1]))["attempts"]:
    print(a["candidate"].rsplit("/", 1)[-1], a["status"], a["speedup"], a["message"][:160])' "$res/examples.json"
      mkdir -p "$work/alone" && ln -s "$root/examples/kernelbench/relu.py" "$work/alone/relu.py"
      KVAULT_CACHE_DIR=$work/examples-cache timeout 90 "$KVAULT" eval --suite "$root/examples/suite" \
        --candidates "$work/alone" --backend cuda --jobs 1 --db "$res/examples.db" --run relu-alone --json \
        > "$res/relu-alone.json" 2> "$res/relu-alone.log"
      "$py" -c 'import json, sys
for a in json.load(open(sys.argv[1]))["attempts"]:
    methods = [(c.get("method"), c.get("graph_fallback")) for c in a.get("cases", []) if c.get("kind") == "timing"]
    print("alone:", a["status"], a["speedup"], methods)' "$res/relu-alone.json" ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
  # After every part: a call cut short at its limit still brings back what was done
  # (a device call returns 8 files at most).
  tar -czf "$out/realworld.tar.gz" -C "$out" realworld
done
