# Shared by test_gen_loopback_{native,triton,modu2func}.sh (sourced after lib.sh): one `kvault gen`
# run in a non-default format against tests/support/openai_replay_server.py, with
# answers taken from a folder of example candidates, checked by gen_format_check.py.
# GEN_BACKEND (default cpu) and GEN_TIMING_FLAG (default --no-timing; empty times the
# candidates) and GEN_JOBS (default 2) let tests/gpu/gen_loopback_gpu.sh run the same on a GPU.
GEN_BACKEND=${GEN_BACKEND:-cpu}
case "$GEN_BACKEND" in cuda) GEN_HARDWARE=h200 ;; hip) GEN_HARDWARE=mi300x ;; *) GEN_HARDWARE=cpu ;; esac
support="$KVAULT_SOURCE_ROOT/tests/support"
SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }; SERVER_PID=; }
trap 'stop_server; rm -rf "$TMP"' EXIT

# gen_format_run NAME EXAMPLES EXT PATHS FORMAT LANG FORMAT_FILE RUN_TIMEOUT -- gen flags...
# Plans the PATHS (gen_replay_script.py --paths) over the tasks of examples/suite that
# EXAMPLES has answers for, runs `kvault gen` on $GEN_BACKEND (its default --hardware),
# and checks every task's recorded outcome; fails the test on any difference.
gen_format_run() {
  local name=$1 examples=$2 ext=$3 paths=$4 fmt=$5 lang=$6 format_file=$7 run_timeout=$8
  shift 9
  local dir="$TMP/$name"
  mkdir -p "$dir/suite"
  python3 "$support/gen_replay_script.py" --examples "$examples" --ext "$ext" \
    --tasks "$KVAULT_SOURCE_ROOT/examples/suite" --paths "$paths" --out "$dir/script.json" \
    --plan "$dir/plan.json" || fail "$name: cannot write the replay script"
  for t in $(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))))" "$dir/plan.json"); do
    cp "$KVAULT_SOURCE_ROOT/examples/suite/$t.py" "$dir/suite/"
  done
  python3 "$support/openai_replay_server.py" --script "$dir/script.json" --log "$dir/calls.jsonl" --port 0 \
    > "$dir/port.txt" 2> "$dir/server_err.txt" &
  SERVER_PID=$!
  # Up to 60 s: on a loaded 2-core machine a Python start can take many seconds.
  for _ in $(seq 600); do grep -q "^PORT " "$dir/port.txt" 2>/dev/null && break; kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  local port
  port=$(awk '/^PORT /{print $2}' "$dir/port.txt")
  [ -n "$port" ] || { cat "$dir/server_err.txt"; fail "$name: replay server did not start"; }
  local t0=$SECONDS
  "$KVAULT" gen --suite "$dir/suite" --endpoint "http://127.0.0.1:$port/v1" --model replay-model \
    --backend "$GEN_BACKEND" --preset paper --perf-debug 0 ${GEN_TIMING_FLAG---no-timing} --timeout 5 --retries 1 --jobs "${GEN_JOBS:-2}" \
    --concurrency 4 --run-timeout "$run_timeout" --db "$TMP/kv.db" --run "$name" --json "$@" \
    > "$dir/out.jsonl" 2> "$dir/err.txt"
  local rc=$?
  if python3 -c "import json,sys; sys.exit(0 if any(v['call_fails'] for v in json.load(open(sys.argv[1])).values()) else 1)" "$dir/plan.json"; then
    # A failed call stops its task and the run exits 3; --resume calls again.
    [ $rc = 3 ] && grep -q -- "--resume" "$dir/err.txt" || { cat "$dir/err.txt"; fail "$name: a failed call: gen exited $rc, want 3 naming --resume"; }
    "$KVAULT" gen --suite "$dir/suite" --endpoint "http://127.0.0.1:$port/v1" --model replay-model \
      --backend "$GEN_BACKEND" --preset paper --perf-debug 0 ${GEN_TIMING_FLAG---no-timing} --timeout 5 --retries 1 --jobs "${GEN_JOBS:-2}" \
      --concurrency 4 --run-timeout "$run_timeout" --db "$TMP/kv.db" --run "$name" --json --resume "$@" \
      > "$dir/out.jsonl" 2> "$dir/err.txt"
    rc=$?
  fi
  stop_server
  [ $rc = 0 ] || { cat "$dir/err.txt"; fail "$name: gen exited $rc"; }
  python3 "$support/gen_format_check.py" "$dir/out.jsonl" "$dir/plan.json" "$TMP/kv.db" "$name" \
    "$dir/calls.jsonl" "$format_file" "$KVAULT_SOURCE_ROOT/prompts/hardware/$GEN_HARDWARE.md" "$fmt" "$lang" ||
    { cat "$dir/err.txt"; fail "$name: recorded outcomes differ from the plan"; }
  echo "$name: $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$dir/plan.json") task(s) in $((SECONDS - t0)) s"
}
