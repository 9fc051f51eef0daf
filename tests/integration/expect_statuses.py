"""Checks `kvault eval --json` output against an expectations file.

usage: expect_statuses.py EVAL_JSON EXPECTED_JSON PREFIX [BACKEND]
Every attempt's candidate, as PREFIX/<file name>, must have the status the file names,
every PREFIX/ entry of the file (with BACKEND among its backends, when given: the
others' attempts are not checked) must have been attempted, passed attempts must carry
timings, and task_error / infra_error attempts no reward. Prints one line per
problem; exits 1 if there is any. Used for examples/expected.json (cpu/, native/cpu/,
triton/) and the GEAK fixtures.
"""
import json
import os
import sys

out, expected, prefix = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
backend = sys.argv[4] if len(sys.argv) > 4 else None
wanted = {k: v["status"] for k, v in expected.items()
          if k.startswith(prefix + "/") and (backend is None or backend in v.get("backends", [backend]))}
seen, bad = set(), 0
for a in out["attempts"]:
    key = prefix + "/" + os.path.basename(a["candidate"])
    seen.add(key)
    if key not in wanted:
        if backend is not None and key in expected:
            continue  # expected elsewhere only (e.g. a CPU-only candidate tried on cuda)
        print("no expectation for", key); bad += 1; continue
    if a["status"] != wanted[key]:
        bad += 1; print("%s: got %s want %s: %s" % (key, a["status"], wanted[key], a["message"]))
    if a["status"] == "passed" and (a["speedup"] is None or a["reference_ms"] is None):
        bad += 1; print("%s: passed without timings" % key)
    if a["status"] in ("task_error", "infra_error") and a.get("reward") is not None:
        bad += 1; print("%s: infrastructure status with a reward" % key)
for key in sorted(set(wanted) - seen):
    bad += 1; print("%s: not attempted" % key)
print("%s: %d attempts checked, %d problems" % (prefix, len(seen), bad))
sys.exit(1 if bad else 0)
