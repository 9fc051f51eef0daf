# The native format on the CPU backend: every examples/native/cpu candidate (correct,
# wrong, broken) gets the status examples/expected.json names, correct ones are timed,
# and the agent prompts carry the contract of docs/native-format.md verbatim.
source "$(dirname "$0")/lib.sh"
need_torch
command -v "${KVAULT_CXX:-g++}" >/dev/null || skip "g++ not installed"
ex="$KVAULT_SOURCE_ROOT/examples"
"$KVAULT" eval --suite "$ex/suite" --candidates "$ex/native/cpu" --backend cpu --jobs 2 --run-timeout 20 \
  --db "$TMP/kv.db" --run native --json > "$TMP/out.json" 2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval exited $?"; }
python3 - "$TMP/out.json" "$ex/expected.json" <<'PY' || fail "statuses differ from expected.json"
import json, os, sys
out = json.load(open(sys.argv[1])); expected = json.load(open(sys.argv[2]))
bad = 0; seen = 0
for a in out["attempts"]:
    rel = "native/cpu/" + os.path.basename(a["candidate"])
    want = expected.get(rel, {}).get("status")
    if want is None:
        print("no expectation for", rel); bad += 1; continue
    seen += 1
    if a["status"] != want:
        bad += 1
        print(f"{rel}: got {a['status']} want {want}: {a['message']}")
    if a["status"] == "passed" and (a["speedup"] is None or a["reference_ms"] is None):
        bad += 1; print(f"{rel}: passed without timings")
    if rel.endswith("bad-errorcode.cpp") and "kvault_forward returned 7: relu: unsupported tile size" not in a["message"]:
        bad += 1; print(f"{rel}: the candidate's message is not reported: {a['message']}")
want_n = len([k for k in expected if k.startswith("native/cpu/")])
if seen != want_n:
    bad += 1; print(f"{seen} attempts checked, expected.json names {want_n} native cpu candidates")
print(f"{seen} attempts checked, {bad} problems")
sys.exit(1 if bad else 0)
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
