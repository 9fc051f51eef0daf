#!/usr/bin/env bash
# Device call 3: the warm extension batch of calls 1-2 (48 candidates, 6 lanes, group
# turns on) with this tree's engine after call 2 showed where its first version lost
# the time it saved: each timed sample's output file is no longer read with the
# candidate's processes stopped at the reply; the worker's digest of what it wrote is
# checked when the file is read, behind the rounds. Two runs after a fill, then the
# adversarial suite on the GPU. Carried: .carry/kvault (this tree, portable), .carry/lib.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib KVAULT_PYTHON=python3
o=$OUT/warm; w=/tmp/kv-warm; mkdir -p "$o" "$w"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$o/env.txt"
python3 bench/make_candidates.py --out "$w/gen" --lang cuda --count extension=210 --distinct 6 > /dev/null
mkdir -p "$w/fill" "$w/batch"
python3 - "$w" <<'PY'
import json, shutil, sys
w = sys.argv[1]
ours = [e for e in json.load(open(w + "/gen/manifest.json")) if e["format"] == "extension"]
for e in ours[:6]:
    shutil.copy(w + "/gen/" + e["file"], w + "/fill")
for e in ours[:48]:   # variant n has content n mod 6: 8 of each content
    shutil.copy(w + "/gen/" + e["file"], w + "/batch")
PY
run() {  # run NAME FOLDER [eval flags]
  local name=$1 folder=$2; shift 2
  local t0=$(date +%s.%N)
  KVAULT_SOURCE_ROOT=$PWD KVAULT_CACHE_DIR=$w/cache timeout 170 .carry/kvault eval --suite examples/suite \
    --candidates "$folder" --backend cuda --jobs 6 --run "$name" --db "$w/kv.db" --json "$@" \
    > "$w/$name.json" 2> "$w/$name.log"
  echo "$name exit $? wall $(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),1))" $t0)" | tee -a "$o/steps.txt"
}
run fill "$w/fill"
run new3 "$w/batch" --force
run new4 "$w/batch" --force
tar czf "$o/runs.tgz" -C "$w" $(cd "$w" && ls *.json *.log *.db)
OUT=$w/adv KVAULT=$PWD/.carry/kvault BUDGET_S=190 timeout 215 bash tests/gpu/adversarial_gpu.sh > "$o/adversarial.txt" 2>&1
echo "adversarial exit $?" | tee -a "$o/steps.txt"
tar czf "$o/adversarial.tgz" -C "$w" adv
grep -E "problem|checked" "$o/adversarial.txt" | head -20
