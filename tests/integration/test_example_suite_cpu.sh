# The example suite on the CPU backend: every CPU candidate (correct, wrong, broken)
# gets the status examples/expected.json names; then a second run skips them all.
source "$(dirname "$0")/lib.sh"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
"$KVAULT" eval --suite "$ex/suite" --candidates "$ex/cpu" --backend cpu --jobs 2 --run-timeout 20 \
  --db "$TMP/kv.db" --run ci --json > "$TMP/out.json" 2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval exited $?"; }
python3 - "$TMP/out.json" "$ex/expected.json" <<'PY' || fail "statuses differ from expected.json"
import json, os, sys
out = json.load(open(sys.argv[1])); expected = json.load(open(sys.argv[2]))
bad = 0; seen = 0
for a in out["attempts"]:
    rel = "cpu/" + os.path.basename(a["candidate"])
    want = expected.get(rel, {}).get("status")
    if want is None:
        print("no expectation for", rel); bad += 1; continue
    seen += 1
    if a["status"] != want:
        bad += 1
        print(f"{rel}: got {a['status']} want {want}: {a['message']}")
    if a["status"] == "passed" and (a["speedup"] is None or a["reference_ms"] is None):
        bad += 1; print(f"{rel}: passed without timings")
    if a["status"] in ("task_error", "infra_error") and a["reward"] is not None:
        bad += 1; print(f"{rel}: infrastructure status with a reward")
missing = [k for k in expected if k.startswith("cpu/")] 
if seen != len(missing):
    bad += 1; print(f"{seen} attempts checked, expected.json names {len(missing)} cpu candidates")
print(f"{seen} attempts checked, {bad} problems")
sys.exit(1 if bad else 0)
PY
"$KVAULT" eval --suite "$ex/suite" --candidates "$ex/cpu" --backend cpu --jobs 2 \
  --db "$TMP/kv.db" --run ci > "$TMP/table.txt" 2> "$TMP/err2.txt" || fail "second eval failed"
total=$(grep -c '^\[' "$TMP/err2.txt")
skipped=$(grep -c 'recorded earlier' "$TMP/err2.txt")
[ "$total" -gt 0 ] && [ "$total" = "$skipped" ] || { cat "$TMP/err2.txt"; fail "re-run verified again ($skipped of $total skipped)"; }
grep -q '^tasks ' "$TMP/table.txt" || fail "no totals line in the table"
echo "ok"
