# kvault score over a store written as kvault serve (and so a Ray campaign) writes
# it: tasks named `<label>-<hash12>`, sample "". No worker runs: the rows are
# imported. --run defaults to `default`; --suite to the suite gen recorded, else
# the tasks the run attempted.
source "$(dirname "$0")/lib.sh"
mkdir -p "$TMP/suite/level1"
printf 'class Model: pass\n# relu\n' > "$TMP/suite/level1/19_ReLU.py"
printf 'class Model: pass\n# gelu\n' > "$TMP/suite/level1/20_GELU.py"
printf 'class Model: pass\n# softmax\n' > "$TMP/suite/level1/21_Softmax.py"
python3 - "$TMP/suite/level1" "$TMP/rows.jsonl" <<'PY'
import hashlib, json, sys
folder, out = sys.argv[1], sys.argv[2]
def h(name): return hashlib.sha256(open(f"{folder}/{name}.py", "rb").read()).hexdigest()
def row(run, label, digest, status, cand):
    r = dict(id=0, run=run, task=f"{label}-{digest[:12]}", sample="", task_hash=digest,
             candidate_path=cand, candidate_hash=hashlib.sha256(cand.encode()).hexdigest(),
             format="extension", language="cuda", backend="cuda", arch="sm_90", device="", torch="",
             model="", policy="custom_kernel", status=status, compiled=status != "compile_error",
             correct=status == "passed", speedup=2.0 if status == "passed" else None,
             reference_ms=None, candidate_ms=None, reward=1.0, message="", diagnostics="", seconds=1.0,
             created_at="2026-12-06T00:00:00.000Z", engine_version="t", candidate_source="",
             cases=[], environment={})
    return json.dumps(r)
other = hashlib.sha256(b"the same file sent with request tolerances").hexdigest()
rows = [row("sweep1", "19_ReLU", h("19_ReLU"), "passed", "a.cu"),
        row("sweep1", "19_ReLU", other, "mismatch", "b.cu"),
        row("sweep1", "20_GELU", h("20_GELU"), "compile_error", "c.cu"),
        row("default", "20_GELU", h("20_GELU"), "passed", "d.cu")]
open(out, "w").write("\n".join(rows) + "\n")
PY
# Inputs import cannot read are said before any row is stored (exit 2): a folder, a
# missing file, a Parquet file (import reads JSON Lines), even after a good file.
mkdir -p "$TMP/a-folder"; printf 'PAR1rest' > "$TMP/rows.parquet"
for bad in "a-folder:a folder" "missing.jsonl:no such file" "rows.parquet:a Parquet file"; do
  rc=0; "$KVAULT" import --db "$TMP/bad.db" "$TMP/rows.jsonl" "$TMP/${bad%%:*}" > /dev/null 2> "$TMP/e.txt" || rc=$?
  [ $rc = 2 ] && grep -q "${bad#*:}" "$TMP/e.txt" && [ ! -e "$TMP/bad.db" ] || fail "import of ${bad%%:*}: exit $rc, $(cat "$TMP/e.txt")"
done
"$KVAULT" import --db "$TMP/s.db" "$TMP/rows.jsonl" > /dev/null 2>&1 || fail "import"
# With the suite: serve's names are the suite's tasks (by content, else by label);
# 21_Softmax, never attempted, counts as a failure.
"$KVAULT" score --suite "$TMP/suite" --run sweep1 --db "$TMP/s.db" --json > "$TMP/a.json" 2> "$TMP/e.txt" ||
  fail "score --suite: $(cat "$TMP/e.txt")"
python3 - "$TMP/a.json" <<'PY' || fail "score --suite: $(cat "$TMP/a.json")"
import json, sys
j = json.load(open(sys.argv[1]))
per = {t["task"]: (t["samples"], t["correct"]) for t in j["per_task"]}
assert j["unknown_tasks"] == [], j["unknown_tasks"]
assert per["level1/19_ReLU"] == (2, 1) and per["level1/20_GELU"] == (1, 0), per
assert j["tasks"] == 3 and j["solved"] == 1 and abs(j["pass_at_k"]["1"] - 0.5 / 3) < 1e-9, j
PY
# Without --suite (as docs/cluster.md runs it): the attempted tasks, by label, said on stderr.
"$KVAULT" score --run sweep1 --db "$TMP/s.db" --json > "$TMP/b.json" 2> "$TMP/e.txt" ||
  fail "score without --suite: $(cat "$TMP/e.txt")"
grep -q "scoring the 3 task(s) it attempted" "$TMP/e.txt" || fail "no note of the denominator: $(cat "$TMP/e.txt")"
python3 - "$TMP/b.json" <<'PY' || fail "score without --suite: $(cat "$TMP/b.json")"
import json, sys
j = json.load(open(sys.argv[1]))
names = sorted(t["task"] for t in j["per_task"])
# 19_ReLU was sent with two contents: kept apart, never merged without a suite.
assert names[2] == "20_GELU" and all(n.startswith("19_ReLU-") for n in names[:2]) and len(names) == 3, names
assert j["suite"] is None, j["suite"]
PY
# --run defaults to `default`, as for eval.
"$KVAULT" score --db "$TMP/s.db" --json > "$TMP/c.json" 2> /dev/null || fail "score without --run"
[ "$(json_get "$TMP/c.json" 'j["run"], j["solved"]')" = "default 1" ] || fail "default run: $(cat "$TMP/c.json")"
# compare reads the names the same way in both runs: 20_GELU (solved only in
# `default`) is one task of both, not two.
"$KVAULT" compare --run sweep1 --run default --db "$TMP/s.db" --json > "$TMP/d.json" 2> /dev/null || fail "compare"
[ "$(json_get "$TMP/d.json" '[d["task"] for d in j["differing_tasks"] if d["task"] == "20_GELU"]')" = "['20_GELU']" ] || fail "compare: $(cat "$TMP/d.json")"
# Without a suite, a task only one run attempted is that run's alone, not the other's
# failure: sweep1's two 19_ReLU contents are only in sweep1; 20_GELU is the one pair.
[ "$(json_get "$TMP/d.json" '"%d %d %d" % (j["common_tasks"], j["only_a"], j["only_b"])')" = "1 2 0" ] ||
  fail "compare without a suite pairs tasks one run never attempted: $(cat "$TMP/d.json")"
# An unknown run stays misuse.
"$KVAULT" score --run nope --db "$TMP/s.db" > /dev/null 2>&1; [ $? -eq 2 ] || fail "unknown run should exit 2"
exit 0
