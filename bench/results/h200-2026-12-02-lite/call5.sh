#!/usr/bin/env bash
# Device call 5 (2026-12-02, afternoon): the CUDA examples (examples/cuda, the new matmul
# among them) through kvault eval with the lite build, cold cache, statuses checked
# against examples/expected.json. .carry/kvault and .carry/lib carried.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib KVAULT_SOURCE_ROOT=$PWD KVAULT_CACHE_DIR=/tmp/kv-cache
t0=$(date +%s)
timeout 170 .carry/kvault eval --suite examples/suite --candidates examples/cuda --backend cuda --jobs 4 \
  --db /tmp/ex.db --json > $OUT/cuda-examples.json 2> $OUT/cuda-examples.log
echo "eval exit $? in $(( $(date +%s) - t0 )) s"
python3 tests/integration/expect_statuses.py $OUT/cuda-examples.json examples/expected.json cuda; echo "check exit $?"
python3 - $OUT/cuda-examples.json /tmp/ex.db <<'PY'
import json, sqlite3, sys
builds = {c: (json.loads(e).get("build") or {}) for c, e in
          sqlite3.connect(sys.argv[2]).execute("SELECT candidate_path, environment FROM attempts")}
for a in json.load(open(sys.argv[1]))["attempts"]:
    b = builds.get(a["candidate"], {})
    print(a["candidate"].split("/")[-1], a["status"], a.get("speedup"), "build %.1f s" % b.get("seconds", 0),
          "lite" if b.get("lite_ext") else b.get("lite_ext_note", ""))
PY
