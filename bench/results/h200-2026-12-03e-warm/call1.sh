#!/usr/bin/env bash
# Device call 1 (b681538): why the warm same-task extension batch gave its results six at a time.
# 48 extension candidates (8 of each of the 6 contents of `h200_throughput.sh wide`'s
# batch, 5 tasks, jobs in task order as a GRPO step's), caches filled first, then
# verified warm with --force, with group turns (on), without (off), and on again;
# each step runs to its end, so eval's JSON has every attempt's phases; the stores
# (timing records) come back too. 6 lanes. Carried: .carry/kvault, .carry/lib.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib KVAULT_PYTHON=python3 KVAULT_SOURCE_ROOT=$PWD
K=$PWD/.carry/kvault; o=$OUT/warm; w=/tmp/kv-warm; mkdir -p "$o" "$w"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$o/env.txt"
python3 bench/make_candidates.py --out "$w/gen" --lang cuda --count extension=210 --distinct 6 > "$o/generated.txt"
mkdir -p "$w/fill" "$w/batch"
python3 - "$w" <<'PY'
import json, shutil, sys
w = sys.argv[1]
ours = [e for e in json.load(open(w + "/gen/manifest.json")) if e["format"] == "extension"]
for e in ours[:6]:
    shutil.copy(w + "/gen/" + e["file"], w + "/fill")
for e in ours[:48]:   # variant n has content n mod 6: 8 of each content
    shutil.copy(w + "/gen/" + e["file"], w + "/batch")
json.dump([e for e in ours[:48]], open(w + "/batch-manifest.json", "w"))
PY
cp "$w/batch-manifest.json" "$o/"
export KVAULT_CACHE_DIR=$w/cache
run() {  # run NAME FOLDER [eval flags]
  local name=$1 folder=$2; shift 2
  local t0=$(date +%s.%N)
  timeout 170 "$K" eval --suite examples/suite --candidates "$folder" --backend cuda --jobs 6 \
    --run "$name" --db "$w/kv.db" --json "$@" > "$o/$name.json" 2> "$o/$name.log"
  echo "$name exit $? wall $(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),1))" $t0)" | tee -a "$o/steps.txt"
}
run fill "$w/fill"
run on1 "$w/batch" --force
KVAULT_GROUP_TURNS=off run off "$w/batch" --force
run on2 "$w/batch" --force
cp "$w/kv.db" "$o/kv.db"
for r in on1 off on2; do python3 bench/summarize_throughput.py --timing "$w/kv.db" $r > "$o/timing-$r.json"; done
