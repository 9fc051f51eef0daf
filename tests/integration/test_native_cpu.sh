# The native format on the CPU backend: every examples/native/cpu candidate (correct,
# wrong, broken) gets the status examples/expected.json names, correct ones are timed,
# and the agent prompts carry the contract of docs/native-format.md verbatim.
source "$(dirname "$0")/lib.sh"
need_torch
command -v "${KVAULT_CXX:-g++}" >/dev/null || skip "g++ not installed"
ex="$KVAULT_SOURCE_ROOT/examples"
"$KVAULT" eval --suite "$ex/suite" --candidates "$ex/native/cpu" --backend cpu --jobs 2 --run-timeout 20 \
  --db "$TMP/kv.db" --run native --json > "$TMP/out.json" 2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval exited $?"; }
python3 "$KVAULT_SOURCE_ROOT/tests/integration/expect_statuses.py" "$TMP/out.json" "$ex/expected.json" native/cpu ||
  fail "statuses differ from expected.json"
python3 - "$TMP/out.json" <<'PY' || fail "the candidate's own error message is not reported"
import json, sys
for a in json.load(open(sys.argv[1]))["attempts"]:
    if a["candidate"].endswith("bad-errorcode.cpp"):
        sys.exit(0 if "kvault_forward returned 7: relu: unsupported tile size" in a["message"] else 1)
sys.exit(1)  # the candidate was not attempted
PY
# Every timing record says how it was taken (docs/timing.md, "Results"), and the
# bench summary of a store's timing records reads them.
python3 "$KVAULT_SOURCE_ROOT/bench/summarize_throughput.py" --timing "$TMP/kv.db" native > "$TMP/timing.json" ||
  fail "summarize_throughput.py --timing failed"
python3 - "$TMP/timing.json" <<'PY' || fail "timing records lack warmup_ms, device_quiet, stage_ms or reference_kept"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["records"] >= 5, t                                  # the correct candidates' cases
assert t["device_quiet"] == {"True": t["records"]}, t        # no other lane's run in flight
assert set(t["warmup_ms"]) <= {"100", "10"}, t
assert set(t["stage_ms_median"]) == {"prepare", "drain", "start", "sampling", "sampling_compare", "compare", "finish"}, t
assert set(t["reference_kept"]) <= {"True", "False"}, t
PY
# The bench generator's wrong variants (bench/make_candidates.py --poke): a correct
# example whose first output element is overwritten after the real call is a mismatch.
python3 "$KVAULT_SOURCE_ROOT/bench/make_candidates.py" --out "$TMP/gen" --lang cpu --count native=4 --poke 2 \
  > /dev/null || fail "make_candidates.py failed"
"$KVAULT" eval --suite "$ex/suite" --candidates "$TMP/gen/native" --backend cpu --jobs 2 --run-timeout 20 \
  --db "$TMP/gen.db" --run gen --json > "$TMP/gen.json" 2> "$TMP/gen-err.txt" || { cat "$TMP/gen-err.txt"; fail "eval of the generated batch exited $?"; }
python3 - "$TMP/gen/manifest.json" "$TMP/gen.json" <<'PY' || fail "generated variants' statuses differ from the manifest"
import json, sys
want = {e["file"].split("/")[-1]: e["expected"] for e in json.load(open(sys.argv[1]))}
got = {a["candidate"].split("/")[-1]: a["status"] for a in json.load(open(sys.argv[2]))["attempts"]}
assert sum("wrong-poke" in name for name in want) == 2, want
assert got == want, (got, want)
PY
# One lane, three candidates of one task: the reference worker keeps its timed side
# from the first candidate's timing for the next two (docs/timing.md, "Preparation").
mkdir -p "$TMP/same"
for v in a b c; do { cat "$ex/native/cpu/relu.cpp"; echo "// variant $v"; } > "$TMP/same/relu.$v.cpp"; done
"$KVAULT" eval --suite "$ex/suite" --candidates "$TMP/same" --backend cpu --jobs 1 --run-timeout 20 \
  --db "$TMP/same.db" --run same --json > "$TMP/same.json" 2> "$TMP/same-err.txt" || { cat "$TMP/same-err.txt"; fail "eval of one task's candidates exited $?"; }
python3 "$KVAULT_SOURCE_ROOT/bench/summarize_throughput.py" --timing "$TMP/same.db" same > "$TMP/same-timing.json" ||
  fail "summarize_throughput.py --timing failed"
python3 - "$TMP/same-timing.json" <<'PY' || fail "the reference's timed side was not kept between candidates"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["records"] == 3 and t["reference_kept"] == {"False": 1, "True": 2}, t
PY
# The prompts' contract is the doc's, word for word.
python3 - "$KVAULT_SOURCE_ROOT" <<'PY' || fail "a native prompt does not carry the contract verbatim"
import sys
root = sys.argv[1]
doc = open(root + "/docs/native-format.md").read()
contract = doc[doc.index("```c\n#include <kvault/native.h>"):doc.index("## Detection")].rstrip()
for lang in ("cpp", "cuda", "hip"):
    if contract not in open(f"{root}/prompts/v1/formats/native-{lang}.md").read():
        print("stale:", lang); sys.exit(1)
PY
echo "ok"
