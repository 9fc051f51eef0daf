# Triton candidates on the CPU backend (Triton's interpreter): examples/triton gets the
# statuses examples/expected.json names, and the GEAK-eval fixtures
# (tests/fixtures/tritonbench_g, tests/fixtures/rocmbench) imported with
# `kvault import-geak` get those of tests/fixtures/geak_expected.json.
source "$(dirname "$0")/lib.sh"
need_torch
"$KVAULT_PYTHON" -c "import triton" >/dev/null 2>&1 ||
  skip "no triton for the worker (KVAULT_PYTHON=$KVAULT_PYTHON); scripts/setup.sh installs it into .venv"
root="$KVAULT_SOURCE_ROOT"
check="$root/tests/integration/expect_statuses.py"

"$KVAULT" eval --suite "$root/examples/suite" --candidates "$root/examples/triton" --backend cpu \
  --jobs 2 --run-timeout 120 --db "$TMP/kv.db" --run triton --json > "$TMP/examples.json" \
  2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval of examples/triton exited $?"; }
python3 "$check" "$TMP/examples.json" "$root/examples/expected.json" triton || fail "examples/triton"

for fmt in tritonbench-g rocmbench; do
  dir=${fmt/-/_}
  "$KVAULT" import-geak --format "$fmt" --tasks "$root/tests/fixtures/$dir/tasks" \
    --candidates "$root/tests/fixtures/$dir/candidates" -o "$TMP/$dir" > "$TMP/import.txt" 2>&1
  rc=$?
  if [ "$dir" = tritonbench_g ]; then  # its no_separator.py must be refused by name
    [ "$rc" = 2 ] && grep -q "not imported: .*no_separator.py: no line of exactly 146" "$TMP/import.txt" ||
      { cat "$TMP/import.txt"; fail "import-geak did not refuse no_separator.py (exit $rc)"; }
  else
    [ "$rc" = 0 ] || { cat "$TMP/import.txt"; fail "import-geak $fmt exited $rc"; }
  fi
  "$KVAULT" eval --suite "$TMP/$dir/suite" --candidates "$TMP/$dir/candidates" --backend cpu \
    --jobs 2 --run-timeout 120 --db "$TMP/kv.db" --run "$dir" --json > "$TMP/$dir.json" \
    2> "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "eval of the $fmt fixtures exited $?"; }
  python3 "$check" "$TMP/$dir.json" "$root/tests/fixtures/geak_expected.json" "$dir" || fail "$fmt fixtures"
  "$KVAULT" score --suite "$TMP/$dir/suite" --run "$dir" --db "$TMP/kv.db" --json > "$TMP/score.json" ||
    fail "score of the $fmt fixtures"
done
echo "ok"
