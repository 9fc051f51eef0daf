#!/usr/bin/env python3
"""How long a warm `kvault eval` takes before its lanes begin their first attempts
(BENCHMARKS.md, "A warm eval's lanes start sooner"): each engine binary given runs the
same eval REPEATS times, the binaries taking turns (A B A B ...) so that a noisy
machine loads both alike, every run on one warm cache (one run of each binary first,
not counted, fills it) and a fresh store (every attempt is verified again).

Per run: the wall time, and when the first attempt and the LANES-th attempt began,
in seconds after the eval started (an attempt begins when its lane takes its job:
the store's created_at less the attempt's seconds).

  python3 bench/lane_start.py --kvault before=/tmp/kvault-before --kvault after=build/kvault \\
      --suite examples/suite --candidates DIR --backend cpu --jobs 2 --repeats 5

Writes OUT/lane_start.csv (one row per run) and prints the medians per binary.
Environment: KVAULT_PYTHON and KVAULT_SOURCE_ROOT as for kvault; OUT (default
bench-out).
"""
import argparse
import csv
import datetime
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def attempt_starts(db):
    """Each attempt's start, in Unix seconds, sorted."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT created_at, seconds FROM attempts").fetchall()
    finally:
        con.close()
    starts = []
    for created, seconds in rows:
        end = datetime.datetime.strptime(created, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        starts.append(end.timestamp() - (seconds or 0.0))
    return sorted(starts)


def run_once(kvault, args, cache, work):
    db = os.path.join(work, "run.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    cmd = [kvault, "eval", "--suite", args.suite, "--candidates", args.candidates, "--backend", args.backend,
           "--jobs", str(args.jobs), "--db", db, "--json"] + args.extra
    env = dict(os.environ, KVAULT_CACHE_DIR=cache)
    t0 = time.time()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    if done.returncode not in (0, 1, 3):  # 3: some attempt's infra_error, still timed
        sys.exit("%s exited %d:\n%s" % (kvault, done.returncode, done.stderr[-2000:]))
    starts = [s - t0 for s in attempt_starts(db)]
    lanes = min(args.jobs, len(starts))
    return {"exit": done.returncode, "wall_s": round(wall, 2), "attempts": len(starts),
            "first_start_s": round(starts[0], 2) if starts else None,
            "lanes_started_s": round(starts[lanes - 1], 2) if starts else None}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kvault", action="append", required=True, help="LABEL=PATH of an engine binary (repeatable)")
    p.add_argument("--suite", required=True)
    p.add_argument("--candidates", required=True)
    p.add_argument("--backend", default="cpu")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("extra", nargs="*", help="more eval flags (after --)")
    args = p.parse_args()
    binaries = []
    for item in args.kvault:
        label, _, path = item.partition("=")
        if not path:
            sys.exit("--kvault wants LABEL=PATH, got %r" % item)
        binaries.append((label, os.path.abspath(path)))
    out = os.environ.get("OUT", "bench-out")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kv-lane-start-")
    rows = []

    def save():  # after every run: a run cut short keeps what was measured
        with open(os.path.join(out, "lane_start.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    try:
        cache = os.path.join(work, "cache")
        for label, path in binaries:  # fills the cache: builds, references, the lite object
            print("warm-up", label, run_once(path, args, cache, work), flush=True)
        for repeat in range(args.repeats):
            for label, path in binaries:
                row = dict(binary=label, repeat=repeat + 1, **run_once(path, args, cache, work))
                rows.append(row)
                save()
                print(row, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| binary | runs | wall s | first attempt began, s | all %d lanes began, s |" % args.jobs)
    print("|---|---|---|---|---|")
    for label, _ in binaries:
        mine = [r for r in rows if r["binary"] == label]
        med = lambda k: statistics.median(r[k] for r in mine if r[k] is not None)  # noqa: E731
        print("| %s | %d | %.2f | %.2f | %.2f |" % (label, len(mine), med("wall_s"), med("first_start_s"),
                                                  med("lanes_started_s")))


if __name__ == "__main__":
    main()
