#!/usr/bin/env bash
# End-to-end throughput of `kvault eval` against the load_inline baseline
# (bench/load_inline_baseline.py), cold and warm caches, side by side in one run
# (BENCHMARKS.md, "Throughput"). Parts, so that each device call stays under 9 min:
#
#   bash bench/h200_throughput.sh part1   # examples (native, extension); native batch; KernelBench-sized task
#   bash bench/h200_throughput.sh part2   # extension batch; load_inline batch; KernelBench-format examples
#   bash bench/h200_throughput.sh core    # the native batch and a small load_inline batch, in one call
#   bash bench/h200_throughput.sh native  # the native batch alone
#   bash bench/h200_throughput.sh lanes   # the native batch, then warm again with $KVAULT_B (another
#                                         # engine, its tree at $KVAULT_B_ROOT) and with $FEW_JOBS
#                                         # lanes (default 1)
#   bash bench/h200_throughput.sh big     # the KernelBench-sized task alone (BIG_BASELINE=1: and the baseline)
#   bash bench/h200_throughput.sh ext     # a small extension batch and a small load_inline batch, in one call
#   bash bench/h200_throughput.sh wide    # batches of 210 extension and 210 load_inline candidates with
#                                         # warm caches (few distinct sources, built first), and the native batch
#   bash bench/h200_throughput.sh ext200  # the extension batch of `wide` alone
#   bash bench/h200_throughput.sh smoke   # the same steps, tiny, on the CPU backend (any machine)
#
# The native batch makes one in 4 variants of each correct example wrong ($POKE; 0: off;
# bench/make_candidates.py --poke), so that a batch stopped by its time limit still
# mixes passing and failing candidates across tasks.
#
# Every step writes its results under $OUT/throughput/ as soon as it ends (eval JSON,
# logs, wall times in steps.tsv), then bench/summarize_throughput.py makes
# summary.json from whatever is there. Expects the kvault binary at $KVAULT
# (default .carry/kvault) and a python3 with PyTorch (CUDA build on the H200).
set -u
part=${1:-part1}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-$root/bench-out}/throughput
mkdir -p "$out"
K=${KVAULT:-$root/.carry/kvault}
PY=${KVAULT_PYTHON:-python3}
export KVAULT_PYTHON=$PY KVAULT_SOURCE_ROOT=$root
work=${WORK:-/tmp/kv-throughput}
mkdir -p "$work"
if [ "$part" = smoke ] || [ "${SMOKE:-0}" = 1 ]; then  # SMOKE=1: any part on the CPU backend
  backend=cpu; lang=cpu; dev=cpu
  counts=(--count native=6 --count extension=2 --count load_inline=2)
  jobs=2; trials=5
else
  backend=cuda; lang=cuda; dev=cuda
  # Lanes (kvault and the baseline alike): 6 unless $JOBS says otherwise. On the H200
  # machine (16 cores) 6 lanes verified more native candidates per minute than 14,
  # which waited on each other's device turns (BENCHMARKS.md, "Lanes").
  few=$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))
  jobs=${JOBS:-$(( few < 6 ? few : 6 ))}
  trials=100
fi

{ date -u; echo "part $part backend $backend jobs $jobs"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tail -2
  nvcc --version 2>&1 | tail -1; "$PY" -c "import torch,sys; print('python', sys.version.split()[0], 'torch', torch.__version__)"
  nproc; } > "$out/env-$part.txt" 2>&1

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# step NAME SECONDS_LIMIT COMMAND...: runs it, appends "name exit wall_s" to steps.tsv.
step() {
  local name=$1 limit=$2; shift 2
  local t0 t1
  t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$out/$name.json" 2> "$out/$name.log"
  local rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(elapsed "$t0" "$t1")" >> "$out/steps.tsv"
  echo "$name: exit $rc, $(elapsed "$t0" "$t1") s"
}

# eval_step NAME STEP CANDIDATES LIMIT SUITE store|log [EVAL ARGS...]: kvault eval over
# CANDIDATES with the compile cache of NAME, as step NAME-STEP (run NAME-STEP in the store
# NAME.db). A step stopped by its limit printed no JSON: its attempts are then taken from
# the store, or, for a run that re-verifies repeated contents (--force; the store keeps
# one record per content and run), from its progress lines.
eval_step() {
  local name=$1 temp=$2 cands=$3 limit=$4 suite=$5 from=$6
  shift 6
  KVAULT_CACHE_DIR=$work/cache-$name step "$name-$temp" "$limit" "$K" eval --suite "$suite" \
    --candidates "$cands" --backend "$backend" --jobs "$jobs" --run "$name-$temp" --db "$work/$name.db" \
    --json "$@"
  local source=$work/$name.db; [ "$from" = log ] && source=$out/$name-$temp.log
  [ -s "$out/$name-$temp.json" ] || "$PY" bench/summarize_throughput.py "--from-$from" "$source" \
    "$name-$temp" > "$out/$name-$temp.json"
}

# eval_pair NAME CANDIDATES [SUITE]: cold (empty caches) then warm (same caches); each
# stops at $LIMIT s (the warm one at $WARM_LIMIT when set).
eval_pair() {
  local name=$1 cands=$2 suite=${3:-examples/suite}
  # A store left by an earlier call on the same machine would hold runs of these names.
  rm -rf "$work/cache-$name" "$work/$name.db"*
  eval_step "$name" cold "$cands" "${LIMIT:-240}" "$suite" store
  eval_step "$name" warm "$cands" "${WARM_LIMIT:-${LIMIT:-240}}" "$suite" store
}

# baseline_step STEP CANDIDATES LIMIT EXTDIR [SUITE]: the load_inline harness over
# CANDIDATES with PyTorch's extension folder EXTDIR (kept between steps), as step STEP.
baseline_step() {
  local name=$1 cands=$2 limit=$3 ext=$4 suite=${5:-examples/suite}
  local t0 t1
  # A step stopped by its limit leaves the lock files of the builds it killed; the next
  # step's load_inline would wait on them for ever (PyTorch's FileBaton).
  find "$ext" -name lock -type f -delete 2>/dev/null
  t0=$(date +%s.%N)
  TORCH_EXTENSIONS_DIR=$ext timeout "$limit" "$PY" bench/load_inline_baseline.py --suite "$suite" \
    --candidates "$cands" --jobs "$jobs" --device "$dev" --trials "$trials" --out "$out/$name.json" \
    > "$out/$name.log" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(elapsed "$t0" "$t1")" >> "$out/steps.tsv"
  echo "$name: exit $rc, $(elapsed "$t0" "$t1") s"
}

# baseline_pair NAME CANDIDATES [SUITE]: load_inline harness, cold (empty torch extension
# cache) then warm; each stops at $LIMIT s (the warm one at $WARM_LIMIT when set).
baseline_pair() {
  local name=$1 cands=$2 suite=${3:-examples/suite}
  local ext=$work/torch-ext-$name
  rm -rf "$ext"
  baseline_step "$name-cold" "$cands" "${LIMIT:-240}" "$ext" "$suite"
  baseline_step "$name-warm" "$cands" "${WARM_LIMIT:-${LIMIT:-240}}" "$ext" "$suite"
}

# fill_then_warm kvault|baseline NAME BATCH FORMAT D: the first D variants of the batch
# (its distinct contents, make_candidates.py --distinct D) verified with empty caches
# (step NAME-fill, $FILL_LIMIT s), then every candidate of the batch with the caches
# they filled (NAME-warm, $WARM_LIMIT s).
fill_then_warm() {
  local how=$1 name=$2 batch=$3 fmt=$4 d=$5
  local fill=$work/$name-fill
  rm -rf "$fill"; mkdir -p "$fill"
  "$PY" -c 'import json, shutil, sys
ours = [e for e in json.load(open(sys.argv[1] + "/manifest.json")) if e["format"] == sys.argv[2]]
for e in ours[:int(sys.argv[3])]:  # variant n has content n mod D: the first D are distinct
    shutil.copy(sys.argv[1] + "/" + e["file"], sys.argv[4])' "$batch" "$fmt" "$d" "$fill"
  if [ "$how" = kvault ]; then
    rm -rf "$work/cache-$name" "$work/$name.db"*
    eval_step "$name" fill "$fill" "${FILL_LIMIT:-120}" examples/suite store
    # --force: the batch repeats contents, which eval would otherwise take from the store.
    eval_step "$name" warm "$batch/$fmt" "${WARM_LIMIT:-150}" examples/suite log --force
  else
    local ext=$work/torch-ext-$name
    rm -rf "$ext"
    baseline_step "$name-fill" "$fill" "${FILL_LIMIT:-120}" "$ext"
    baseline_step "$name-warm" "$batch/$fmt" "${WARM_LIMIT:-150}" "$ext"
  fi
}

wide_extension() {
  gen batch-ext200 --count extension=${WIDE_COUNT:-210} --distinct ${EXT_DISTINCT:-6}
  fill_then_warm kvault batch-extension200 "$work/batch-ext200" extension "${EXT_DISTINCT:-6}"
}

gen() {  # gen FOLDER COUNTS...: the generated batch
  rm -rf "$work/$1"
  "$PY" bench/make_candidates.py --out "$work/$1" --lang "$lang" "${@:2}" > "$out/generated-$1.txt" 2>&1
  cp "$work/$1/manifest.json" "$out/manifest-$1.json" 2>/dev/null
}

summarize() { "$PY" bench/summarize_throughput.py "$out" > "$out/summary.txt" 2>&1; cat "$out/summary.txt"; }

# big_task [kvault] [baseline]: the KernelBench-sized task (3.2 GB input, 5 correctness
# seeds), one lane: kvault with the native candidate and/or the load_inline baseline.
big_task() {
  mkdir -p "$work/big-suite" "$work/big-native" "$work/big-li"
  cp bench/kernelbench_sized/big_relu.py "$work/big-suite/"
  cp bench/kernelbench_sized/big_relu.cu "$work/big-native/"
  cp bench/kernelbench_sized/big_relu_load_inline.py "$work/big-li/big_relu.py"
  local jobs_saved=$jobs
  jobs=1
  for side in "$@"; do
    case "$side" in
      kvault) LIMIT=${BIG_LIMIT:-180} eval_pair big-native "$work/big-native" "$work/big-suite" ;;
      baseline) LIMIT=${BIG_LIMIT:-180} baseline_pair big-load_inline "$work/big-li" "$work/big-suite" ;;
    esac
  done
  jobs=$jobs_saved
}

case "$part" in
  part1)
    # The example suite: native (CUDA and HIP on NVIDIA), CUDA extension, KernelBench.
    mkdir -p "$work/examples-native"; cp examples/native/cuda/* examples/native/hip/* "$work/examples-native/"
    eval_pair examples-native "$work/examples-native"
    LIMIT=200 eval_pair examples-extension examples/cuda
    gen batch-native --count native=208 --poke "${POKE:-4}"
    eval_pair batch-native "$work/batch-native/native"
    big_task kvault baseline
    ;;
  big)
    # The KernelBench-sized task alone: kvault (native), then the baseline if asked.
    big_task kvault ${BIG_BASELINE:+baseline}
    ;;
  part2)
    gen batch-ext --count extension=28 --count load_inline=28
    LIMIT=250 eval_pair batch-extension "$work/batch-ext/extension"
    LIMIT=250 baseline_pair batch-load_inline "$work/batch-ext/load_inline"
    LIMIT=120 eval_pair examples-kernelbench examples/kernelbench
    ;;
  core)
    # What one device call of under 10 min holds: the >= 200 native batch (cold,
    # warm) and a small load_inline batch (cold, warm) made by the same generator.
    gen batch-native --count native=208 --poke "${POKE:-4}"
    LIMIT=${BATCH_LIMIT:-140} eval_pair batch-native "$work/batch-native/native"
    gen batch-li --count load_inline=${LI_COUNT:-14}
    LIMIT=${LI_LIMIT:-90} baseline_pair batch-load_inline "$work/batch-li/load_inline"
    ;;
  native)
    # The native batch alone (cold, warm): to see a change in the engine's cost.
    gen batch-native --count native=208 --poke "${POKE:-4}"
    LIMIT=${BATCH_LIMIT:-140} eval_pair batch-native "$work/batch-native/native"
    ;;
  lanes)
    # The native batch (cold, warm) with $KVAULT; then warm again, as runs of their own,
    # with the engine $KVAULT_B when set (`-warm-b`) and with $FEW_JOBS lanes
    # (`-warm-few`): what an engine change and the lane count do to the same batch.
    gen batch-native --count native=208 --poke "${POKE:-4}"
    LIMIT=${BATCH_LIMIT:-70} eval_pair batch-native "$work/batch-native/native"
    if [ -n "${KVAULT_B:-}" ]; then
      # $KVAULT_B_ROOT: the tree of that engine (its worker speaks its protocol version).
      K_A=$K; K=$KVAULT_B
      KVAULT_SOURCE_ROOT=${KVAULT_B_ROOT:-$root} \
        eval_step batch-native warm-b "$work/batch-native/native" "${BATCH_LIMIT:-70}" examples/suite store
      K=$K_A
    fi
    jobs_all=$jobs; jobs=${FEW_JOBS:-1}
    eval_step batch-native warm-few "$work/batch-native/native" "${FEW_LIMIT:-40}" examples/suite store
    jobs=$jobs_all
    ;;
  ext)
    # The extension format against the load_inline path, one small batch of each from
    # the same generator, in one device call.
    gen batch-ext --count extension=${EXT_COUNT:-14} --count load_inline=${EXT_COUNT:-14}
    LIMIT=${EXT_LIMIT:-200} eval_pair batch-extension "$work/batch-ext/extension"
    LIMIT=${LI_LIMIT:-100} baseline_pair batch-load_inline "$work/batch-ext/load_inline"
    ;;
  ext200)
    wide_extension  # the extension batch of `wide` alone
    ;;
  wide)
    # Batches of 200+ with warm caches, in one device call: each format's batch repeats
    # D distinct contents (make_candidates.py --distinct); a fill step builds those D
    # cold (`-fill`), then all 210 are verified with the caches warm (`-warm`). Also
    # the native batch (cold, warm) for the same call's ratio.
    gen batch-native --count native=208 --poke "${POKE:-4}"
    LIMIT=${BATCH_LIMIT:-40} WARM_LIMIT=${BATCH_LIMIT:-40} eval_pair batch-native "$work/batch-native/native"
    wide_extension
    gen batch-li200 --count load_inline=${WIDE_COUNT:-210} --distinct ${LI_DISTINCT:-5}
    fill_then_warm baseline batch-load_inline200 "$work/batch-li200" load_inline "${LI_DISTINCT:-5}"
    ;;
  smoke)
    gen batch-smoke "${counts[@]}"
    eval_pair batch-native "$work/batch-smoke/native"
    eval_pair batch-extension "$work/batch-smoke/extension"
    baseline_pair batch-load_inline "$work/batch-smoke/load_inline"
    ;;
  *) echo "usage: $0 part1|part2|core|native|lanes|big|ext|ext200|wide|smoke" >&2; exit 2 ;;
esac
summarize
