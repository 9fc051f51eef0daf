# The adversarial suite on the CPU backend (examples/adversarial, docs/adversarial.md):
# every cheat gets the status adversarial.json names, every honest control passes.
source "$(dirname "$0")/lib.sh"
need_torch
adv="$KVAULT_SOURCE_ROOT/examples/adversarial"
# policy/: tasks without a policy, under the one `gen` applies by default.
# isolated/: cheats that disturb other lanes (spinners), in a lane of their own.
for folder in kernelbench cpu policy isolated; do
  policy=task
  [ "$folder" = policy ] && policy=custom_kernel
  jobs=2
  [ "$folder" = isolated ] && jobs=1
  "$KVAULT" eval --suite "$adv/tasks" --candidates "$adv/$folder" --backend cpu --jobs "$jobs" --run-timeout 30 \
    --policy "$policy" --db "$TMP/kv.db" --run "adv-$folder" --json > "$TMP/$folder.json" 2> "$TMP/$folder.err" ||
    { cat "$TMP/$folder.err"; fail "eval of $folder exited $?"; }
done
exec python3 "$KVAULT_SOURCE_ROOT/tests/integration/check_manifest.py" --backend cpu --db "$TMP/kv.db" \
  "$adv/adversarial.json" "kernelbench=$TMP/kernelbench.json" "cpu=$TMP/cpu.json" "policy=$TMP/policy.json" \
  "isolated=$TMP/isolated.json"
