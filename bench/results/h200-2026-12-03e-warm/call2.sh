#!/usr/bin/env bash
# Device call 2: the same warm extension batch as call 1 (48 candidates, 8 of each of
# 6 contents, 6 lanes, group turns on), verified by this tree's engine (timed samples'
# outputs taken at the reply, their digests checked, compared behind the rounds) and by
# the engine of call 1 (b681538, with its own worker tree), each with a cache it filled
# itself first; then the adversarial suite on the GPU with this tree's engine.
# Carried: .carry/kvault (this tree, portable), .carry/kvault-old and .carry/old
# (b681538's binary and its python/, include/, include_hip/), .carry/lib.
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
run() {  # run ENGINE ROOT NAME FOLDER [eval flags]
  local k=$1 root=$2 name=$3 folder=$4; shift 4
  local t0=$(date +%s.%N)
  KVAULT_SOURCE_ROOT=$root KVAULT_CACHE_DIR=$w/cache-$(basename "$k") timeout 170 "$k" eval --suite examples/suite \
    --candidates "$folder" --backend cuda --jobs 6 --run "$name" --db "$w/kv-$(basename "$k").db" --json "$@" \
    > "$w/$name.json" 2> "$w/$name.log"
  echo "$name exit $? wall $(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),1))" $t0)" | tee -a "$o/steps.txt"
}
run .carry/kvault "$PWD" new-fill "$w/fill"
run .carry/kvault "$PWD" new "$w/batch" --force
run .carry/kvault-old "$PWD/.carry/old" old-fill "$w/fill"
run .carry/kvault-old "$PWD/.carry/old" old "$w/batch" --force
run .carry/kvault "$PWD" new2 "$w/batch" --force
tar czf "$o/runs.tgz" -C "$w" $(cd "$w" && ls *.json *.log *.db)
OUT=$w/adv KVAULT=$PWD/.carry/kvault BUDGET_S=190 timeout 215 bash tests/gpu/adversarial_gpu.sh > "$o/adversarial.txt" 2>&1
echo "adversarial exit $?" | tee -a "$o/steps.txt"
tar czf "$o/adversarial.tgz" -C "$w" adv
grep -E "problem|checked" "$o/adversarial.txt" | head -20
