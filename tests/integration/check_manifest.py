"""Checks `kvault eval --json` results against examples/adversarial/adversarial.json.

usage: check_manifest.py --backend B MANIFEST FOLDER=RESULT.json ...
Every manifest entry of a listed folder that names backend B must appear with its
status; a passed control must carry timings; an entry with `reward_at_most` must
get a reward no higher (the paper reward, eval's default); an entry with
`speedup_at_most` that passes must measure no faster (a cheat that gains nothing:
it ends up doing the work), on GPU backends only: CPU timings of several lanes on a
small machine are too noisy to hold a bound (docs/timing.md, "Known limits"); no
unexpected candidate
may appear.
An entry with `policy` must have been recorded under that policy. An entry with
`or_status` may also end with one of those statuses (a cheat that the engine may also
catch outright, depending on what it cannot control, e.g. where the allocator puts
its inputs). `status_on` gives a backend a status of its own (a cheat that another
backend's timer leaves no room for).
An entry with `cpu_charged` on the CPU backend is judged by the CPU time its other
threads used around its timed samples (docs/timing.md, "What the engine trusts"), read
from the store given with --db, where folder F's attempts are recorded under run `adv-F`.
`false`: its samples were never raised by it (an honest control). `true`: the engine saw
that work (a charge beyond its allowance) and the candidate paid for it: its samples were
raised to it, or its own clock already showed as much (on a loaded machine the thread
may lose the race to the clock, and forward then waits for it in the clocked call).
Exit 0 when all agree, 1 otherwise (one line per problem).
"""
import argparse
import json
import os
import sqlite3
import sys


# The engine's rule for raising samples (engine/options.h clock_slack, engine/cpu_charge.h
# kCpuFloorMs): a charge within these of the reported time is already paid.
CLOCK_SLACK, CPU_FLOOR_MS = 0.10, 0.02


def cpu_charges(db, folder, candidate):
    """The `cpu` parts of the timing records of the attempt at `candidate` (run
    adv-`folder`); None when there is no such attempt."""
    row = sqlite3.connect(db).execute(
        "SELECT cases FROM attempts WHERE run = ? AND candidate_path = ? ORDER BY id DESC LIMIT 1",
        ("adv-" + folder, candidate)).fetchone()
    if row is None:
        return None
    return [((rec.get("engine_clock") or {}).get("cpu") or {})
            for rec in json.loads(row[0]) if rec.get("kind") == "timing"]


def charge_problem(charges, want_charged):
    """Why the attempt's CPU charges disagree with the manifest's `cpu_charged`; None
    when they agree."""
    raised = any(c.get("applied", False) for c in charges)
    if not want_charged:
        return "samples raised by its other threads' CPU time, want not" if raised else None
    for c in charges:
        seen = c.get("candidate_charged_ms", 0) > c.get("allowance_ms", 0) + CPU_FLOOR_MS
        paid = c.get("applied", False) or c.get("candidate_charged_ms", 0) <= (
            c.get("candidate_reported_ms", 0) * (1 + CLOCK_SLACK) + c.get("allowance_ms", 0) + CPU_FLOOR_MS)
        if seen and paid:
            return None
    return ("its other threads' CPU time not seen or not paid for (charges %s), want samples raised "
            "to it or a clock already showing it" % json.dumps(charges))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", required=True)
    ap.add_argument("--db", help="the store the attempts were recorded in (for cpu_charged)")
    ap.add_argument("manifest")
    ap.add_argument("results", nargs="+", help="FOLDER=RESULT.json")
    args = ap.parse_args()
    manifest = json.load(open(args.manifest))
    problems, checked = [], 0
    for spec in args.results:
        folder, path = spec.split("=", 1)
        expected = {k: v for k, v in manifest.items()
                    if k.startswith(folder + "/") and args.backend in v["backends"]}
        seen = set()
        for a in json.load(open(path))["attempts"]:
            key = folder + "/" + os.path.basename(a["candidate"])
            want = expected.get(key)
            if want is None:
                problems.append("%s: not in the manifest for backend %s" % (key, args.backend))
                continue
            seen.add(key)
            checked += 1
            status = want.get("status_on", {}).get(args.backend, want["status"])
            if a["status"] != status and a["status"] not in want.get("or_status", []):
                problems.append("%s: got %s, want %s (%s): %s"
                                % (key, a["status"], status, want["cheat"], a["message"]))
            elif a["status"] == "passed" and a.get("speedup") is None:
                problems.append("%s: passed without a speedup" % key)
            elif "reward_at_most" in want and not (a.get("reward") is not None
                                                   and a["reward"] <= want["reward_at_most"]):
                problems.append("%s: reward %s, want at most %s (%s)"
                                % (key, a.get("reward"), want["reward_at_most"], want["defence"]))
            if "speedup_at_most" in want and args.backend != "cpu" and a["status"] == "passed" and not (
                    a.get("speedup") is not None and a["speedup"] <= want["speedup_at_most"]):
                problems.append("%s: speedup %s, want at most %s (%s)"
                                % (key, a.get("speedup"), want["speedup_at_most"], want["defence"]))
            if "cpu_charged" in want and args.backend == "cpu" and a["status"] == "passed":
                charges = cpu_charges(args.db, folder, a["candidate"]) if args.db else None
                problem = None if charges is None else charge_problem(charges, want["cpu_charged"])
                if charges is None:
                    problems.append("%s: no recorded attempt to read its CPU charge from (--db)" % key)
                elif problem:
                    problems.append("%s: %s (%s)" % (key, problem, want["defence"]))
            if "policy" in want and a.get("policy") != want["policy"]:
                problems.append("%s: recorded policy %s, want %s" % (key, a.get("policy"), want["policy"]))
        problems += ["%s: expected but not run" % k for k in sorted(set(expected) - seen)]
    for p in problems:
        print(p)
    print("%d candidates checked, %d problems" % (checked, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
