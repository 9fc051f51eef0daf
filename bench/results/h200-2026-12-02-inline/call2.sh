#!/usr/bin/env bash
# Device call 2 (2026-12-02, evening): the KernelBench examples (relu.py builds a CUDA
# kernel with load_inline: now by the engine) and the CUDA examples through kvault eval
# on the cuda backend with this binary (worker protocol 6), cold cache, statuses checked
# against examples/expected.json, each attempt's build record printed.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/lib KVAULT_SOURCE_ROOT=$PWD KVAULT_CACHE_DIR=/tmp/kv-cache
for part in kernelbench cuda; do
  t0=$(date +%s)
  timeout 200 .carry/kvault eval --suite examples/suite --candidates examples/$part --backend cuda --jobs 4 \
    --db /tmp/ex.db --run $part --json > $OUT/$part-examples.json 2> $OUT/$part-examples.log
  echo "$part: eval exit $? in $(( $(date +%s) - t0 )) s"
  python3 tests/integration/expect_statuses.py $OUT/$part-examples.json examples/expected.json $part cuda
  echo "$part: check exit $?"
done
python3 - /tmp/ex.db <<'PY'
import json, sqlite3, sys
for run, cand, status, speedup, env in sqlite3.connect(sys.argv[1]).execute(
        "SELECT run, candidate_path, status, speedup, environment FROM attempts ORDER BY run, candidate_path"):
    b = json.loads(env).get("build") or {}
    print(run, cand.split("/")[-1], status, speedup, "build %.1f s" % b.get("seconds", 0),
          "lite" if b.get("lite_ext") else b.get("lite_ext_note", ""), json.dumps(b.get("inline", "")))
PY
