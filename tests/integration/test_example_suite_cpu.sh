# The example suite on the CPU backend: every CPU candidate (correct, wrong, broken)
# gets the status examples/expected.json names; then a second run skips them all.
# The KernelBench-format examples meant for the CPU too (load_inline C++ among them).
source "$(dirname "$0")/lib.sh"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
"$KVAULT" eval --suite "$ex/suite" --candidates "$ex/cpu" --backend cpu --jobs 2 --run-timeout 20 \
  --db "$TMP/kv.db" --run ci --json > "$TMP/out.json" 2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval exited $?"; }
python3 "$KVAULT_SOURCE_ROOT/tests/integration/expect_statuses.py" "$TMP/out.json" "$ex/expected.json" cpu ||
  fail "statuses differ from expected.json"
"$KVAULT" eval --suite "$ex/suite" --candidates "$ex/cpu" --backend cpu --jobs 2 \
  --db "$TMP/kv.db" --run ci > "$TMP/table.txt" 2> "$TMP/err2.txt" || fail "second eval failed"
total=$(grep -c '^\[' "$TMP/err2.txt")
skipped=$(grep -c 'recorded earlier' "$TMP/err2.txt")
[ "$total" -gt 0 ] && [ "$total" = "$skipped" ] || { cat "$TMP/err2.txt"; fail "re-run verified again ($skipped of $total skipped)"; }
grep -q '^tasks ' "$TMP/table.txt" || fail "no totals line in the table"
rm -f /tmp/kvault-flag-wrapper-ran
mkdir "$TMP/kernelbench"
python3 - "$ex" "$TMP/kernelbench" <<'PY'
import json, os, sys
ex, into = sys.argv[1], sys.argv[2]
for key, e in json.load(open(os.path.join(ex, "expected.json"))).items():
    if key.startswith("kernelbench/") and "cpu" in e["backends"]:
        os.symlink(os.path.join(ex, key), os.path.join(into, os.path.basename(key)))
PY
"$KVAULT" eval --suite "$ex/suite" --candidates "$TMP/kernelbench" --backend cpu --jobs 2 --run-timeout 20 \
  --db "$TMP/kv.db" --run kb --json > "$TMP/kb.json" 2> "$TMP/kb-err.txt" || { cat "$TMP/kb-err.txt"; fail "kernelbench eval exited $?"; }
python3 "$KVAULT_SOURCE_ROOT/tests/integration/expect_statuses.py" "$TMP/kb.json" "$ex/expected.json" kernelbench cpu ||
  fail "kernelbench statuses differ from expected.json"
# Their load_inline calls (one in ModelNew's constructor; those written in models'
# habits: OpenMP, at::parallel_for, accessors, py::arg, several calls a file) were each
# built ahead by the engine, the lite way, not by PyTorch in the worker; those that do
# not compile were judged from the lite compile (expected.json's lite_verdict).
python3 - "$TMP/kv.db" "$ex/expected.json" <<'PY' || fail "load_inline calls were not built ahead by the engine"
import json, os, sqlite3, sys
expected = {os.path.basename(k): e for k, e in json.load(open(sys.argv[2])).items()
            if k.startswith("kernelbench/") and "cpu" in e["backends"] and ("inline" in k or ".llm-" in k or "-llm-" in k)}
rows = sqlite3.connect(sys.argv[1]).execute(
    "select candidate_path, status, environment from attempts where run = 'kb'").fetchall()
rows = [r for r in rows if os.path.basename(r[0]) in expected]
assert sorted(os.path.basename(r[0]) for r in rows) == sorted(expected), (rows, sorted(expected))
for path, status, environment in rows:
    build = json.loads(environment)["build"]
    notes = build.get("inline")
    assert notes and len(notes) == expected[os.path.basename(path)].get("inline_calls", 1), (path, build)
    for note in notes:
        assert note["built"] == (status != "compile_error"), (path, notes)
        assert status == "compile_error" or note["lite_ext"], (path, notes, build.get("lite_ext_note"))
    # A file whose own code does not compile is answered from the lite compile, with
    # no build against PyTorch's headers, and its record says so.
    if expected[os.path.basename(path)].get("lite_verdict"):
        assert build.get("lite_verdict") and notes[-1].get("lite_verdict"), (path, build)
        assert "include_lite" in build["command"], (path, build["command"])
        assert build["lite_ext_note"].startswith("not built the full way"), (path, build["lite_ext_note"])
PY
# The flag that asked g++ to run a command was refused by name; the command never ran.
[ ! -e /tmp/kvault-flag-wrapper-ran ] || fail "a candidate's -wrapper flag ran its command"
grep -q "flag '-wrapper' is not allowed for g++" "$TMP/kb.json" || fail "the refused flag is not named"
echo "ok"
