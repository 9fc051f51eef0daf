# `kvault gen --format native --lang cpp` end to end against the loopback replay server
# on the CPU backend, answers from examples/native/cpu: correct; wrong then correct;
# the same wrong answer twice then correct (three samples for `kvault score`); two code
# blocks then correct. Candidates are native sources (.cpp with
# kvault_forward), verified as format native. Also: format/lang combinations no
# pipeline can verify are refused before any call. tests/gpu/gen_loopback_gpu.sh runs it
# with GEN_LANG=cuda, GEN_EXAMPLES=examples/native/cuda, GEN_BACKEND=cuda.
source "$(dirname "$0")/lib.sh"
need_torch
source "$(dirname "$0")/gen_format_lib.sh"

misuse() {  # expected-text flags...
  local want=$1; shift
  "$KVAULT" gen --model m --backend cpu --db "$TMP/misuse.db" --suite "$KVAULT_SOURCE_ROOT/examples/suite" \
    --endpoint http://127.0.0.1:9/v1 "$@" > /dev/null 2> "$TMP/misuse.txt"
  local rc=$?
  [ $rc = 2 ] && grep -q -- "$want" "$TMP/misuse.txt" || { cat "$TMP/misuse.txt"; fail "gen $* exited $rc without '$want'"; }
}
misuse "--lang cpp, cuda or hip" --format native --lang python
misuse "torch2kernel only" --format native --lang cpp --mode modu2func
misuse "drop --format extension" --lang triton --format extension
misuse "torch2kernel only" --lang triton --mode kernel2kernel --baseline "$TMP"
misuse "no prompts for --format fancy" --format fancy --lang cpp

lang=${GEN_LANG:-cpp}
case "$lang" in cuda) ext=.cu ;; hip) ext=.hip ;; *) ext=.cpp ;; esac
gen_format_run native "${GEN_EXAMPLES:-$KVAULT_SOURCE_ROOT/examples/native/cpu}" "$ext" broken,repeated,correct,two_blocks \
  native "$lang" "$KVAULT_SOURCE_ROOT/prompts/v1/formats/native-$lang.md" 60 -- --format native --lang "$lang"

# Every answer is a sample: the task answered the same wrong code twice, then a correct
# one, has 3 samples and 1 correct for `kvault score` (pass@1 1/3, not 1/2 as it would
# be if identical answers were one sample). The suite is the one gen recorded.
"$KVAULT" score --run native --db "$TMP/kv.db" --k 1,3 --json > "$TMP/score.json" ||
  fail "score of the native run"
python3 - "$TMP/native/plan.json" "$TMP/score.json" "$TMP/native/suite" <<'PY' || fail "identical answers were not counted as samples: $(cat "$TMP/score.json")"
import json, os, sys
plan, score = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert score["suite"] == os.path.abspath(sys.argv[3]), score["suite"]
task = next(t for t, p in plan.items() if p["path"] == "repeated")
got = next(t for t in score["per_task"] if t["task"] == task)
print(f"{task}: {got['samples']} samples, {got['correct']} correct, pass@k {got['pass_at_k']}")
assert (got["samples"], got["correct"]) == (3, 1)
assert abs(got["pass_at_k"]["1"] - 1 / 3) < 1e-9 and got["pass_at_k"]["3"] == 1.0
PY
echo ok
