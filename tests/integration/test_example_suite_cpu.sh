# The example suite on the CPU backend: every CPU candidate (correct, wrong, broken)
# gets the status examples/expected.json names; then a second run skips them all.
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
echo "ok"
