# The CLI contract: misuse exits 2, kernel failures exit 0, --json has the fields.
source "$(dirname "$0")/lib.sh"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
"$KVAULT" verify --task /nonexistent.py --candidate x.cpp --backend cpu; [ $? -eq 2 ] || fail "missing task should exit 2"
"$KVAULT" verify --task "$ex/suite/relu.py"; [ $? -eq 2 ] || fail "missing --candidate should exit 2"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate x.cpp --backend tpu; [ $? -eq 2 ] || fail "bad backend should exit 2"
"$KVAULT" eval --suite /nonexistent --candidates /nonexistent --backend cpu; [ $? -eq 2 ] || fail "missing suite should exit 2"
"$KVAULT" doctor --json > "$TMP/doctor.json" || fail "doctor failed"
[ "$(json_get "$TMP/doctor.json" 'j["backends"]["cpu"]["usable"]')" = True ] || fail "doctor: cpu not usable"
[ -n "$(json_get "$TMP/doctor.json" 'j["backends"]["cuda"]["reason"]')" ] || fail "doctor: no reason for cuda"
cat > "$TMP/cand.py" <<'PY'
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return x.abs()
PY
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --json > "$TMP/v.json"
[ $? -eq 0 ] || fail "a mismatching kernel must exit 0"
python3 - "$TMP/v.json" <<'PY' || fail "verify --json lacks fields"
import json, sys
j = json.load(open(sys.argv[1]))
need = ["status", "compiled", "correct", "speedup", "reference_ms", "candidate_ms", "reward", "message"]
missing = [k for k in need if k not in j]
assert not missing, missing
assert j["status"] == "mismatch" and j["correct"] is False and j["reward"] == 0.4, j
assert j["policy"] == "any", j  # the task's (relu names none)
PY
# Loud failures of the setup, before anything is verified: a missing candidate and
# --run without --db are misuse; a --db that cannot be opened fails at once (3); a
# cache folder that cannot be written is an infrastructure failure (3); a GPU backend
# this PyTorch cannot run is "no backend" (2), not a row of infra_error attempts.
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/missing.cpp" --backend cpu 2> "$TMP/e.txt"
[ $? -eq 2 ] && grep -q "cannot read candidate" "$TMP/e.txt" || fail "missing candidate: $(cat "$TMP/e.txt")"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --run r 2> "$TMP/e.txt"
[ $? -eq 2 ] && grep -q -- "--db" "$TMP/e.txt" || fail "--run without --db: $(cat "$TMP/e.txt")"
start=$(date +%s)
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --db "$TMP/nodir/x.db" 2> "$TMP/e.txt"
[ $? -eq 3 ] && grep -q "nothing was verified" "$TMP/e.txt" || fail "unopenable --db: $(cat "$TMP/e.txt")"
[ $(( $(date +%s) - start )) -lt 5 ] || fail "an unopenable --db was found only after verifying"
touch "$TMP/afile"
KVAULT_CACHE_DIR="$TMP/afile/cache" "$KVAULT" eval --suite "$ex/suite" --candidates "$ex/kernelbench" --backend cpu \
  --db "$TMP/c.db" > /dev/null 2> "$TMP/e.txt"
[ $? -eq 3 ] && grep -q "KVAULT_CACHE_DIR" "$TMP/e.txt" || fail "unwritable cache: $(cat "$TMP/e.txt")"
[ ! -e "$TMP/c.db" ] || fail "unwritable cache: attempts were recorded"
if [ "$(json_get "$TMP/doctor.json" 'j["backends"]["cuda"]["usable"]')" != True ]; then
  "$KVAULT" eval --suite "$ex/suite" --candidates "$ex/kernelbench" --backend cuda --db "$TMP/c.db" \
    > /dev/null 2> "$TMP/e.txt"
  [ $? -eq 2 ] && grep -q "backend cuda is not usable" "$TMP/e.txt" || fail "--backend cuda without CUDA: $(cat "$TMP/e.txt")"
  "$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$ex/kernelbench/relu.py" --backend cuda --db "$TMP/v.db" \
    > /dev/null 2> "$TMP/e.txt"
  [ $? -eq 2 ] && grep -q "backend cuda is not usable" "$TMP/e.txt" || fail "verify --backend cuda without CUDA: $(cat "$TMP/e.txt")"
  [ "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from attempts').fetchone()[0])" "$TMP/v.db")" = 0 ] ||
    fail "verify --backend cuda without CUDA recorded an attempt"
fi
# --fail-on-reject: exit 1 for a verdict other than passed.
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --no-timing \
  --fail-on-reject > /dev/null
[ $? -eq 1 ] || fail "--fail-on-reject: a mismatch must exit 1"
# Every sample counts, in its numbered order: two identical files are two attempts,
# and the first sample is sample_2 (not sample_10, as alphabetical order would have).
mkdir -p "$TMP/one" "$TMP/samples"
cp "$ex/suite/relu.py" "$TMP/one/"
sed 's/x.abs()/torch.relu(x)/' "$TMP/cand.py" > "$TMP/samples/relu.sample_2.py"
cp "$TMP/cand.py" "$TMP/samples/relu.sample_10.py"
cp "$TMP/cand.py" "$TMP/samples/relu.sample_11.py"
# --tasks: only the tasks its wildcards name (mse_loss's candidate is not verified).
cp "$ex/kernelbench/mse_loss.py" "$TMP/samples/"
"$KVAULT" eval --suite "$ex/suite" --tasks 'rel*' --candidates "$TMP/samples" --backend cpu --no-timing --db "$TMP/s.db" \
  --run samples --json > "$TMP/eval.json" 2> "$TMP/e.txt" || fail "eval of samples: $(cat "$TMP/e.txt")"
[ "$(json_get "$TMP/eval.json" 'sorted({a["task"] for a in j["attempts"]}), len(j["attempts"])')" = "['relu'] 3" ] ||
  fail "--tasks 'rel*': $(head -c 400 "$TMP/eval.json")"
"$KVAULT" eval --suite "$ex/suite" --tasks 'relu,sofmax' --candidates "$TMP/samples" --backend cpu 2> "$TMP/e.txt"
[ $? -eq 2 ] && grep -q -- "--tasks sofmax matches no task" "$TMP/e.txt" || fail "--tasks typo: $(cat "$TMP/e.txt")"
"$KVAULT" eval --suite "$ex/suite" --candidates "$TMP/samples" --backend cpu --jobs 0 2> "$TMP/e.txt"
[ $? -eq 2 ] && grep -q "auto or a whole number" "$TMP/e.txt" || fail "--jobs 0: $(cat "$TMP/e.txt")"
! grep -q "recorded earlier" "$TMP/e.txt" || fail "an identical sample was taken as recorded: $(cat "$TMP/e.txt")"
"$KVAULT" score --suite "$TMP/one" --run samples --db "$TMP/s.db" --k 1 --json > "$TMP/score.json" || fail "score of samples"
[ "$(json_get "$TMP/score.json" 'j["per_task"][0]["samples"], j["corr_at_k"]["1"]')" = "3 1.0" ] ||
  fail "samples: $(cat "$TMP/score.json")"
# pass@5 over 3 samples is no estimate: said on stderr, the score still printed.
"$KVAULT" score --suite "$TMP/one" --run samples --db "$TMP/s.db" --k 1,5 > /dev/null 2> "$TMP/k.txt" ||
  fail "score --k 1,5"
grep -q "1 of 1 scored task(s) have fewer samples than k = 5" "$TMP/k.txt" || fail "no warning for k > samples: $(cat "$TMP/k.txt")"
# export: the same rows as JSON Lines, CSV and Parquet (pyarrow, else a clear exit 2).
"$KVAULT" export --run samples --db "$TMP/s.db" > "$TMP/x.jsonl" || fail "export jsonl"
[ "$(python3 -c "import json,sys; print(sorted(json.loads(l)['sample'] for l in open(sys.argv[1])))" "$TMP/x.jsonl")" = \
  "['relu.sample_10.py', 'relu.sample_11.py', 'relu.sample_2.py']" ] || fail "export jsonl: $(head -c 300 "$TMP/x.jsonl")"
"$KVAULT" export --run samples --db "$TMP/s.db" --format csv -o "$TMP/x.csv" 2> /dev/null || fail "export csv"
python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1], newline=''))); assert len(r)==3 and r[0]['run']=='samples', r" \
  "$TMP/x.csv" || fail "export csv: $(head -c 300 "$TMP/x.csv")"
"$KVAULT" export --run samples --db "$TMP/s.db" --format parquet -o "$TMP/x.parquet" 2> "$TMP/e.txt"
rc=$?
if "$KVAULT_PYTHON" -c "import pyarrow" 2>/dev/null; then
  [ $rc = 0 ] && "$KVAULT_PYTHON" -c "import pyarrow.parquet as pq,sys; assert pq.read_table(sys.argv[1]).num_rows == 3" "$TMP/x.parquet" ||
    fail "export parquet: $(cat "$TMP/e.txt")"
else
  [ $rc = 2 ] && grep -q "pip install pyarrow" "$TMP/e.txt" || fail "export parquet without pyarrow: exit $rc: $(cat "$TMP/e.txt")"
fi
"$KVAULT" export --run nope --db "$TMP/s.db" > /dev/null 2>&1; [ $? = 2 ] || fail "export of an unknown run must exit 2"
# --candidate and --since select rows: one candidate's; none from the future; all from the past.
h=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readline())['candidate_hash'])" "$TMP/x.jsonl")
n=$(grep -c "\"$h\"" "$TMP/x.jsonl")
[ "$n" -ge 1 ] && [ "$n" -lt 3 ] || fail "samples: $n of 3 rows have candidate $h"
[ "$("$KVAULT" export --db "$TMP/s.db" --candidate "$h" | wc -l)" = "$n" ] || fail "export --candidate $h: not its $n row(s)"
[ "$("$KVAULT" export --db "$TMP/s.db" --candidate "$h" --candidate nope | wc -l)" = "$n" ] || fail "export --candidate twice"
[ "$("$KVAULT" export --db "$TMP/s.db" --since 2999-01-01T00:00:00Z | wc -l)" = 0 ] || fail "export --since the future"
[ "$("$KVAULT" export --db "$TMP/s.db" --run samples --since 2000-01-01T00:00:00Z | wc -l)" = 3 ] || fail "export --since the past"
now=$(python3 -c "import json,sys; print(max(json.loads(l)['created_at'] for l in open(sys.argv[1]))[:19])" "$TMP/x.jsonl")
[ "$("$KVAULT" export --db "$TMP/s.db" --since "${now}Z" | wc -l)" -ge 1 ] || fail "export --since ${now}Z: the rows of that second"
"$KVAULT" export --db "$TMP/s.db" --since yesterday > /dev/null 2>&1; [ $? = 2 ] || fail "export --since yesterday must exit 2"
# Consistent flags: --json and -o/--output for report and import-geak; one --run default.
"$KVAULT" report --run samples --db "$TMP/s.db" --output "$TMP/r.html" --json > "$TMP/r.json" || fail "report --json"
[ "$(json_get "$TMP/r.json" 'j["output"] == sys.argv[2] and j["runs"] == ["samples"]' "$TMP/r.html")" = True ] ||
  fail "report --json: $(cat "$TMP/r.json")"
"$KVAULT" import-geak --format rocmbench --tasks "$KVAULT_SOURCE_ROOT/tests/fixtures/rocmbench/tasks" \
  --output "$TMP/geak" --json > "$TMP/g.json" || fail "import-geak --json"
[ "$(json_get "$TMP/g.json" 'len(j["tasks"]) > 0 and j["not_imported"] == []')" = True ] || fail "import-geak --json: $(cat "$TMP/g.json")"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/samples/relu.sample_2.py" --backend cpu --no-timing \
  --arch sm_90 --db "$TMP/s.db" > /dev/null 2> "$TMP/e.txt" || fail "verify --arch on the cpu"
grep -q "does not apply to the cpu backend" "$TMP/e.txt" || fail "--arch on the cpu: no word: $(cat "$TMP/e.txt")"
grep -q "^kvault verify: correctness ([0-9.]* s elapsed)" "$TMP/e.txt" || fail "verify names no stage: $(cat "$TMP/e.txt")"
python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(\"SELECT run, arch FROM attempts WHERE sample LIKE '%relu.sample_2.py' AND run != 'samples'\").fetchall(); assert r and r[0][0] == 'default' and r[0][1] != 'sm_90', r" \
  "$TMP/s.db" || fail "verify --db: not recorded under the default run, or with the ignored arch"
# KernelBench as it is: tasks in level folders, samples named as its scripts name
# them; a file that matches no task is named on stderr, not skipped in silence.
mkdir -p "$TMP/kb/level1" "$TMP/kbruns"
cp "$ex/suite/relu.py" "$TMP/kb/level1/19_ReLU.py"
cp "$TMP/samples/relu.sample_2.py" "$TMP/kbruns/level_1_problem_19_sample_0_kernel.py"
cp "$TMP/cand.py" "$TMP/kbruns/level_1_problem_19_sample_1_kernel.py"
cp "$TMP/cand.py" "$TMP/kbruns/level_1_problem_20_sample_0_kernel.py"
echo "notes" > "$TMP/kbruns/notes.txt"
# --list: the same match, nothing verified, no store opened.
"$KVAULT" eval --suite "$TMP/kb" --candidates "$TMP/kbruns" --db "$TMP/list.db" --list --json > "$TMP/kbl.json" \
  2> "$TMP/e.txt" || fail "eval --list: $(cat "$TMP/e.txt")"
[ "$(json_get "$TMP/kbl.json" '[(u["task"], u["sample"], u["format"]) for u in j["units"]]')" = \
  "[('level1/19_ReLU', 'level_1_problem_19_sample_0_kernel.py', 'kernelbench'), ('level1/19_ReLU', 'level_1_problem_19_sample_1_kernel.py', 'kernelbench')]" ] &&
  [ ! -e "$TMP/list.db" ] && grep -q "notes.txt (not a candidate" "$TMP/e.txt" || fail "eval --list: $(cat "$TMP/kbl.json")"
# gen --list: the suite's tasks as gen names them, no endpoint asked for, no store opened.
[ "$("$KVAULT" gen --suite "$TMP/kb" --db "$TMP/list.db" --list)" = "level1/19_ReLU	$TMP/kb/level1/19_ReLU.py" ] &&
  [ ! -e "$TMP/list.db" ] || fail "gen --list"
"$KVAULT" gen --suite "$TMP/kb" --tasks nosuch --list > /dev/null 2> "$TMP/e.txt"
[ $? = 2 ] && grep -q "nosuch matches no task" "$TMP/e.txt" || fail "gen --list --tasks nosuch: $(cat "$TMP/e.txt")"
"$KVAULT" gen --suite "$TMP/kb" --model m --lang cpp 2> "$TMP/e.txt"
[ $? = 2 ] && grep -q -- "--endpoint is required" "$TMP/e.txt" || fail "gen without --endpoint: $(cat "$TMP/e.txt")"
"$KVAULT" eval --suite "$TMP/kb" --candidates "$TMP/kbruns" --backend cpu --no-timing --db "$TMP/s.db" \
  --run kb --json > "$TMP/kb.json" 2> "$TMP/e.txt" || fail "eval of KernelBench's layout: $(cat "$TMP/e.txt")"
[ "$(json_get "$TMP/kb.json" '[(a["task"], a["status"]) for a in j["attempts"]]')" = \
  "[('level1/19_ReLU', 'passed'), ('level1/19_ReLU', 'mismatch')]" ] || fail "KernelBench layout: $(cat "$TMP/kb.json")"
grep -q "problem_20_sample_0_kernel.py (no task level1/20_" "$TMP/e.txt" && grep -q "notes.txt (not a candidate" "$TMP/e.txt" ||
  fail "unmatched files not named: $(cat "$TMP/e.txt")"
# Ctrl-C: the compiler is stopped with kvault, which says what was kept and exits 130.
printf '#!/bin/sh\necho $$ >> "%s/cxx.pids"\nexec sleep 60\n' "$TMP" > "$TMP/slowcxx"
chmod +x "$TMP/slowcxx"
mkdir -p "$TMP/cpp"
cp "$ex/cpu/relu.cpp" "$TMP/cpp/"
KVAULT_CXX="$TMP/slowcxx" KVAULT_CACHE_DIR="$TMP/cache-int" "$KVAULT" eval --suite "$TMP/one" \
  --candidates "$TMP/cpp" --backend cpu --no-timing --db "$TMP/int.db" > /dev/null 2> "$TMP/int.txt" &
pid=$!
for _ in $(seq 300); do [ -s "$TMP/cxx.pids" ] && break; sleep 0.1; done
[ -s "$TMP/cxx.pids" ] || fail "the fake compiler never started: $(cat "$TMP/int.txt")"
kill -INT $pid
wait $pid
rc=$?
[ $rc = 130 ] && grep -q "0 of 1 recorded; run the same command again to continue" "$TMP/int.txt" ||
  fail "Ctrl-C: exit $rc: $(cat "$TMP/int.txt")"
for p in $(cat "$TMP/cxx.pids"); do ! kill -0 "$p" 2>/dev/null || fail "the compiler $p outlived kvault"; done
# --policy: the engine's choice over the task's; a value outside the list is misuse.
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --policy custom_kernel \
  --json > "$TMP/vp.json" || fail "verify --policy custom_kernel failed"
[ "$(json_get "$TMP/vp.json" 'j["status"] + " " + j["policy"]')" = "policy_violation custom_kernel" ] ||
  fail "abs under --policy custom_kernel: $(cat "$TMP/vp.json")"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$TMP/cand.py" --backend cpu --policy kernels \
  > /dev/null 2>&1
[ $? -eq 2 ] || fail "--policy kernels must exit 2"
# --tolerance kernelbench: KernelBench's harness's 1e-2 for every task; --atol/--rtol
# set one; a value outside the list is misuse.
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$ex/cpu/relu.wrong-abs.cpp" --backend cpu --no-timing \
  --tolerance kernelbench --json > "$TMP/tk.json" || fail "verify --tolerance kernelbench failed"
json_get "$TMP/tk.json" 'j["message"]' | grep -q "beyond rtol=0.01 atol=0.01" || fail "kernelbench tolerance: $(cat "$TMP/tk.json")"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$ex/cpu/relu.wrong-abs.cpp" --backend cpu --no-timing \
  --tolerance kernelbench --atol 0.5 --json > "$TMP/ta.json" || fail "verify --atol failed"
json_get "$TMP/ta.json" 'j["message"]' | grep -q "beyond rtol=0.01 atol=0.5" || fail "--atol: $(cat "$TMP/ta.json")"
"$KVAULT" verify --task "$ex/suite/relu.py" --candidate "$ex/cpu/relu.cpp" --backend cpu --tolerance loose \
  > /dev/null 2>&1
[ $? -eq 2 ] || fail "--tolerance loose must exit 2"
echo "ok"
