# `kvault gen` end to end against a loopback OpenAI-compatible replay server on the CPU
# backend: every answer path (correct, broken then fixed, garbage, no code block, two
# code blocks, a timeout, HTTP 429 and 500, truncated JSON) ends in its recorded
# outcome (a failed call stops its task, exit 3, until --resume calls again); a
# re-run without --resume is refused; --resume repeats nothing; an
# interrupted run (SIGTERM) leaves a consistent store and --resume finishes it.
source "$(dirname "$0")/lib.sh"
need_torch
ex="$KVAULT_SOURCE_ROOT/examples"
support="$KVAULT_SOURCE_ROOT/tests/support"
LANG_EXT="${GEN_LANG_EXT:-.cpp}"   # tests/gpu/gen_loopback_gpu.sh runs this file with .hip / .cu
LANG_NAME="${GEN_LANG:-cpp}"
BACKEND="${GEN_BACKEND:-cpu}"
EXAMPLES="${GEN_EXAMPLES:-$ex/cpu}"
python3 "$support/gen_replay_script.py" --examples "$EXAMPLES" --ext "$LANG_EXT" --tasks "$ex/suite" \
  --delay 4 --out "$TMP/script.json" --plan "$TMP/plan.json" || fail "cannot write the replay script"
mkdir -p "$TMP/suite"
for t in $(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))))" "$TMP/plan.json"); do
  cp "$ex/suite/$t.py" "$TMP/suite/"
done
ntasks=$(ls "$TMP/suite" | wc -l)
nsolved=$(python3 -c "import json,sys; print(sum(v['solved'] for v in json.load(open(sys.argv[1])).values()))" "$TMP/plan.json")

start_server() {  # $1: log file; sets PORT and SERVER_PID
  python3 "$support/openai_replay_server.py" --script "$TMP/script.json" --log "$1" --port 0 \
    > "$TMP/port.txt" 2> "$TMP/server_err.txt" &
  SERVER_PID=$!
  # Up to 60 s: on a loaded 2-core machine a Python start can take many seconds.
  for _ in $(seq 600); do grep -q "^PORT " "$TMP/port.txt" 2>/dev/null && break; kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  PORT=$(awk '/^PORT /{print $2}' "$TMP/port.txt")
  [ -n "$PORT" ] || { cat "$TMP/server_err.txt"; fail "replay server did not start"; }
}
stop_server() { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }
trap 'stop_server; rm -rf "$TMP"' EXIT

gen() {  # extra flags...; GEN_EXEC=exec replaces the calling (sub)shell
  ${GEN_EXEC:-} "$KVAULT" gen --suite "$TMP/suite" --endpoint "http://127.0.0.1:$PORT/v1" --model replay-model \
    --lang "$LANG_NAME" --backend "$BACKEND" --preset paper --perf-debug 0 ${GEN_TIMING_FLAG---no-timing} --timeout "${TIMEOUT_S:-2}" --retries 2 \
    --jobs "${GEN_JOBS:-2}" --concurrency "${GEN_CONCURRENCY:-4}" --run-timeout 20 --db "$TMP/kv.db" --json "$@"
}

# Bad inputs: each a clear message and exit 2, before any call.
misuse() {  # expected-text flags...
  local want=$1; shift
  "$KVAULT" gen --model m --backend cpu --db "$TMP/misuse.db" "$@" > /dev/null 2> "$TMP/misuse.txt"
  local rc=$?
  [ $rc = 2 ] && grep -q -- "$want" "$TMP/misuse.txt" || { cat "$TMP/misuse.txt"; fail "gen $* exited $rc without '$want'"; }
}
misuse "--lang fortran" --suite "$TMP/suite" --endpoint http://127.0.0.1:9/v1 --lang fortran
misuse "ftp://" --suite "$TMP/suite" --endpoint ftp://127.0.0.1/v1 --lang cpp
misuse "--preset paper" --suite "$TMP/suite" --endpoint http://127.0.0.1:9/v1 --lang cpp --preset paper --iterations 2
misuse "--baseline" --suite "$TMP/suite" --endpoint http://127.0.0.1:9/v1 --lang cpp --mode kernel2kernel
misuse "no-such-dir" --endpoint http://127.0.0.1:9/v1 --lang cpp --suite "$TMP/no-such-dir"
misuse "cannot be verified on backend cpu" --suite "$TMP/suite" --endpoint http://127.0.0.1:9/v1 --lang hip

start_server "$TMP/calls.jsonl"
gen --run ci > "$TMP/out.jsonl" 2> "$TMP/err.txt"
rc=$?
if python3 -c "import json,sys; sys.exit(0 if any(v['call_fails'] for v in json.load(open(sys.argv[1])).values()) else 1)" "$TMP/plan.json"; then
  # A call that fails (a reply that is not JSON) stops its task: exit 3 naming
  # --resume, the task unfinished; --resume calls again and finishes it.
  [ $rc = 3 ] && grep -q -- "--resume" "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "a failed call: gen exited $rc, want 3 naming --resume"; }
  [ "$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM gen_tasks WHERE run='ci' AND finished=0\").fetchone()[0])" "$TMP/kv.db")" -ge 1 ] ||
    fail "the task whose call failed was recorded as finished"
  gen --run ci --resume > "$TMP/out.jsonl" 2> "$TMP/err.txt"
  rc=$?
fi
[ $rc = 0 ] || { cat "$TMP/err.txt"; fail "gen exited $rc"; }

python3 - "$TMP/out.jsonl" "$TMP/plan.json" "$TMP/kv.db" <<'PY' || { cat "$TMP/err.txt"; fail "recorded outcomes differ from the plan"; }
import json, sqlite3, sys
out = {j["task"]: j for j in map(json.loads, open(sys.argv[1]).read().split("\n")[:-1])}
plan = json.load(open(sys.argv[2]))
db = sqlite3.connect(sys.argv[3])
bad = 0
def problem(*a):
    global bad; bad += 1; print(*a)
if set(out) != set(plan):
    problem("tasks in output", sorted(out), "plan", sorted(plan))
for task, want in plan.items():
    j = out.get(task, {})
    rows = db.execute("SELECT iteration, outcome, error, attempt_id, http_attempts, prompt_version, "
                      "model_requested, model_returned, parent FROM generations "
                      "WHERE run='ci' AND task=? AND role='generator' ORDER BY iteration", (task,)).fetchall()
    got = [r[1] for r in rows]
    if got != want["outcomes"]:
        problem(f"{task}: generator outcomes {got}, want {want['outcomes']}")
    if j.get("solved") != want["solved"] or j.get("attempts") != len(want["outcomes"]):
        problem(f"{task}: json {j}, want solved={want['solved']} attempts={len(want['outcomes'])}")
    if "best_speedup" not in j:
        problem(f"{task}: no best_speedup key")
    for it, outcome, error, attempt_id, http, version, model_req, model_ret, parent in rows:
        if outcome in ("passed", "mismatch") and attempt_id is None:
            problem(f"{task} iter {it}: verified without an attempt row")
        if outcome == "call_failed" and not error:
            problem(f"{task} iter {it}: failed call without an error")
        if not version.startswith("v1-") or model_req != "replay-model":
            problem(f"{task} iter {it}: provenance {version!r} {model_req!r}")
        if outcome != "call_failed" and model_ret != "replay-model":
            problem(f"{task} iter {it}: model returned {model_ret!r}")
        if it > 1 and not parent:
            problem(f"{task} iter {it}: no parent")
    if want["retried"] and (not rows or rows[0][4] < 2):
        problem(f"{task}: the retried call records {rows[0][4] if rows else None} HTTP attempts")
    # Every verified candidate is in the attempts table with the same outcome, and on disk.
    for (path, outcome, status) in db.execute(
            "SELECT g.candidate_path, g.outcome, a.status FROM generations g JOIN attempts a "
            "ON a.id = g.attempt_id WHERE g.run='ci' AND g.task=?", (task,)):
        if outcome != status: problem(f"{task}: generation says {outcome}, attempt says {status}")
        import os
        if not os.path.exists(path): problem(f"{task}: candidate file {path} missing")
    # One reflection per answered generator call.
    answered = sum(1 for r in rows if r[1] != "call_failed")
    refl = db.execute("SELECT count(*) FROM generations WHERE run='ci' AND task=? AND role='reflector' "
                      "AND outcome='reflection'", (task,)).fetchone()[0]
    if refl != answered:
        problem(f"{task}: {refl} reflections for {answered} answers")
state = dict(db.execute("SELECT task, finished FROM gen_tasks WHERE run='ci'").fetchall())
if set(state) != set(plan) or not all(state.values()):
    problem("gen_tasks not all finished:", state)
print(f"{len(plan)} tasks checked, {bad} problems")
sys.exit(1 if bad else 0)
PY
grep -q "tasks solved $nsolved/$ntasks" "$TMP/err.txt" || { cat "$TMP/err.txt"; fail "no or wrong totals line"; }

# The same run again without --resume is refused (misuse), and changes nothing.
calls_before=$(grep -c '"seq"' "$TMP/calls.jsonl")
gen --run ci > /dev/null 2> "$TMP/err_again.txt"
rc=$?
[ $rc = 2 ] || { cat "$TMP/err_again.txt"; fail "re-run without --resume exited $rc, want 2"; }
grep -q -- '--resume' "$TMP/err_again.txt" || fail "refusal does not mention --resume"

# --resume: every task finished earlier; no call is made.
gen --run ci --resume > "$TMP/resumed.jsonl" 2> "$TMP/err_resume.txt" || { cat "$TMP/err_resume.txt"; fail "resume failed"; }
calls_after=$(grep -c '"seq"' "$TMP/calls.jsonl")
[ "$calls_before" = "$calls_after" ] || fail "--resume made $((calls_after - calls_before)) call(s)"
python3 -c "
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(rows)==int(sys.argv[2]) and all(r['resumed'] and r['finished'] for r in rows), rows
assert sum(r['solved'] for r in rows)==int(sys.argv[3])
" "$TMP/resumed.jsonl" "$ntasks" "$nsolved" || fail "resumed output differs"

# The corpus exports render a record's prompt as gen's first call for its task (one
# template source): its run's kernels, imported and exported as SFT, carry exactly the
# system and user messages this run sent first, task by task.
"$KVAULT" corpus import --vault "$TMP/vault.db" --from store "$TMP/kv.db" --suite "$TMP/suite" > /dev/null 2> "$TMP/vault_err.txt" ||
  { cat "$TMP/vault_err.txt"; fail "corpus import of the gen store"; }
"$KVAULT" corpus export --vault "$TMP/vault.db" --format sft --claims --any-status -o "$TMP/sft.jsonl" > /dev/null 2> "$TMP/vault_err.txt" ||
  { cat "$TMP/vault_err.txt"; fail "corpus export of the gen records"; }
python3 - "$TMP/calls.jsonl" "$TMP/sft.jsonl" <<'PY' || fail "an exported prompt is not the one gen sent first"
import json, re, sys
first = {}
for line in open(sys.argv[1]):
    j = json.loads(line) if line.strip() else {}
    user = [m for m in j.get("messages", []) if m["role"] == "user"]
    if user and "role: generator" in user[-1]["content"] and "iteration: 1\n" in user[-1]["content"]:
        first.setdefault(re.search(r"task: (\w+)\n", user[-1]["content"]).group(1), j["messages"])
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
bad = [r["metadata"]["kernel_name"] for r in rows if r["messages"][:2] != first.get(r["metadata"]["kernel_name"])]
print(f"{len(rows)} exported rows, {len(first)} tasks' first calls, {len(bad)} differ: {bad}")
sys.exit(1 if bad or not rows else 0)
PY

# Interrupt a run while its first calls are in flight; it stops cleanly (exit 130)
# with a consistent store, and --resume finishes it without repeating recorded calls.
stop_server
python3 - "$TMP/script.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for r in s["rules"]:
    if "role: generator" in r["match"]:
        r["responses"][0] = dict(r["responses"][0], delay_s=1.5) if "content" in r["responses"][0] else r["responses"][0]
json.dump(s, open(sys.argv[1], "w"))
PY
start_server "$TMP/calls2.jsonl"
( GEN_EXEC=exec TIMEOUT_S=5; gen --run int > /dev/null 2> "$TMP/err_int.txt" ) &
gen_pid=$!
for _ in $(seq 100); do grep -q '"seq"' "$TMP/calls2.jsonl" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM $gen_pid
wait $gen_pid
rc=$?
[ $rc = 130 ] || { cat "$TMP/err_int.txt"; fail "interrupted gen exited $rc, want 130"; }
sql() { python3 -c "import sqlite3,sys; [print(*r) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]" "$TMP/kv.db" "$1"; }
sql "PRAGMA integrity_check" | grep '^ok$' >/dev/null || fail "store damaged"
unfinished=$(sql "SELECT count(*) FROM gen_tasks WHERE run='int' AND finished=0")
sql "SELECT task, role, iteration FROM generations WHERE run='int' AND error=''" > "$TMP/recorded.txt"
lines_before=$(wc -l < "$TMP/calls2.jsonl")
TIMEOUT_S=5 gen --run int --resume > "$TMP/int.jsonl" 2> "$TMP/err_int2.txt"
rc=$?
# The task whose first call fails may not have started before the interrupt: then
# this resume meets the failure (exit 3), and one more finishes it.
[ $rc = 3 ] && { TIMEOUT_S=5 gen --run int --resume > "$TMP/int.jsonl" 2> "$TMP/err_int2.txt"; rc=$?; }
[ $rc = 0 ] || { cat "$TMP/err_int2.txt"; fail "resume after interrupt exited $rc"; }
python3 - "$TMP/calls2.jsonl" "$lines_before" "$TMP/recorded.txt" "$TMP/int.jsonl" "$ntasks" "$nsolved" <<'PY' || fail "the resumed run repeated a recorded call or lost a task"
import json, re, sys
recorded = {tuple(l.split()) for l in open(sys.argv[3]) if l.strip()}
asked = set()
for line in open(sys.argv[1]).read().split("\n")[int(sys.argv[2]):]:
    if not line.strip(): continue
    j = json.loads(line)
    if "messages" not in j: continue
    text = "\n".join(m.get("content", "") for m in j["messages"])
    asked.add(tuple(re.search(p, text).group(1) for p in (r"task: (\w+)\n", r"role: (\w+)", r"iteration: (\d+)")))
rows = [json.loads(l) for l in open(sys.argv[4]) if l.strip()]
ok = len(rows) == int(sys.argv[5]) and all(r["finished"] for r in rows) and sum(r["solved"] for r in rows) == int(sys.argv[6])
print(f"{len(recorded)} calls recorded before the resume, {len(asked)} asked by it, "
      f"repeated: {sorted(recorded & asked)}, all finished: {ok}")
sys.exit(0 if ok and not (recorded & asked) else 1)
PY
echo "ok (interrupted with $unfinished unfinished task(s), $(wc -l < "$TMP/recorded.txt") call(s) recorded)"
