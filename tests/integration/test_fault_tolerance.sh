#!/usr/bin/env bash
# Fault tolerance (docs/threat-model.md): a batch of KVAULT_FAULT_COUNT (default 200 in
# CI; the soak run is KVAULT_FAULT_COUNT=1000, about 20 minutes on 2 cores) KernelBench
# candidates, 30% of them hostile (crash, hang, fork, leak, huge files,
# protocol-fd attacks: tests/support/make_fault_batch.py), on the CPU backend.
#  1. the engine is SIGKILLed mid-batch; no worker or forked process survives it;
#  2. a re-run completes the batch: exactly one record per candidate, each with a
#     status its kind allows, no duplicate, none lost; no stray process afterwards.
source "$(dirname "$0")/lib.sh"
need_torch
command -v sqlite3 >/dev/null || skip "sqlite3 not installed"
COUNT=${KVAULT_FAULT_COUNT:-200}
export KVAULT_SANDBOX_MEMORY_MB=${KVAULT_SANDBOX_MEMORY_MB:-2048} KVAULT_SANDBOX_FILE_MB=64
python3 "$KVAULT_SOURCE_ROOT/tests/support/make_fault_batch.py" "$TMP/cands" "$TMP/expected.tsv" --count "$COUNT"
DB="$TMP/fault.db"
eval_args=(eval --suite "$KVAULT_SOURCE_ROOT/examples/suite" --candidates "$TMP/cands" --db "$DB"
  --run fault --jobs 2 --no-timing --run-timeout 3 --load-timeout 60)
rows() { sqlite3 "$DB" "select count(*) from attempts where run='fault'" 2>/dev/null || echo 0; }
export KVAULT_CACHE_DIR="$TMP/cache"
# Processes of this test's batch: workers and everything they fork run in private
# folders under $TMP/cache; sandbox helpers name the store ($TMP/fault.db).
strays() {
  for p in /proc/[0-9]*; do
    c=$(readlink "$p/cwd" 2>/dev/null) || continue
    case "$c" in "$TMP"/*) echo "${p#/proc/}" ;; esac
  done
  pgrep -f "sandbox-exec.*$TMP/" || true
}

start=$(date +%s)
"$KVAULT" "${eval_args[@]}" > "$TMP/first.out" 2> "$TMP/first.err" &  # $! is the engine itself
engine=$!
target=$((COUNT / 5))
while kill -0 "$engine" 2>/dev/null && [ "$(rows)" -lt "$target" ]; do sleep 1; done
kill -0 "$engine" 2>/dev/null || fail "the batch ended before it could be interrupted: $(tail -3 "$TMP/first.err")"
kill -9 "$engine"; wait "$engine" 2>/dev/null
before=$(rows)
echo "killed the engine with SIGKILL after $before record(s), $(( $(date +%s) - start )) s"
sleep 2
left=$(strays)
[ -z "$left" ] || { ps -o pid,pgid,cmd -p $left; fail "processes survived the killed engine"; }

"$KVAULT" "${eval_args[@]}" > "$TMP/second.out" 2> "$TMP/second.err" || { tail -20 "$TMP/second.err"; fail "re-run failed"; }
echo "batch of $COUNT finished in $(( $(date +%s) - start )) s"
sleep 1
left=$(strays)
[ -z "$left" ] || { ps -o pid,pgid,cmd -p $left; fail "processes survived the batch"; }

dups=$(sqlite3 "$DB" "select count(*) from (select 1 from attempts where run='fault' group by task, candidate_hash, backend, arch having count(*) > 1)")
[ "$dups" = 0 ] || fail "$dups candidate(s) have more than one record"
sqlite3 -separator $'\t' "$DB" "select candidate_path, status from attempts where run='fault'" > "$TMP/records.tsv"
python3 - "$TMP/expected.tsv" "$TMP/records.tsv" <<'PY' || fail "records do not match the batch"
import collections, os, sys
expected = {}
for line in open(sys.argv[1]):
    name, kind, allowed = line.rstrip("\n").split("\t")
    expected[name] = (kind, allowed.split(","))
got = collections.defaultdict(list)
for line in open(sys.argv[2]):
    path, status = line.rstrip("\n").split("\t")
    got[os.path.basename(path)].append(status)
bad = []
for name, (kind, allowed) in expected.items():
    s = got.get(name, [])
    if len(s) != 1: bad.append(f"{name}: {len(s)} records")
    elif s[0] not in allowed: bad.append(f"{name} ({kind}): {s[0]}, expected {'/'.join(allowed)}")
extra = set(got) - set(expected)
counts = collections.Counter((expected[n][0], got[n][0]) for n in expected if len(got.get(n, [])) == 1)
for (kind, status), n in sorted(counts.items()): print(f"  {kind:11s} {status:14s} {n}")
for b in bad[:30]: print("  BAD", b)
sys.exit(1 if bad or extra else 0)
PY
echo "every one of $COUNT candidates has exactly one record with an allowed status"
