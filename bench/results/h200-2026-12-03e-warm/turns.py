#!/usr/bin/env python3
"""Per task, the timing turns of runs in a store: candidates, median seconds, members
per turn, rounds, stage_ms medians, and the exclusive part of all turns (drain +
start + sampling, counted once per turn). Used for this folder's README:

  python3 turns.py STORE RUN [RUN ...]
"""
import json
import sqlite3
import statistics
import sys


def main(db, runs):
    con = sqlite3.connect(db)
    for run in runs:
        rows = con.execute("SELECT task, seconds, cases FROM attempts WHERE run = ? ORDER BY id", (run,)).fetchall()
        print("== %s: %d candidates" % (run, len(rows)))
        by_task, exclusive = {}, 0.0
        for task, seconds, cases in rows:
            records = [c for c in json.loads(cases) if c.get("kind") == "timing"]
            by_task.setdefault(task, []).append((seconds, records))
            for r in records:
                ms = r.get("stage_ms", {})
                exclusive += (ms.get("drain", 0) + ms.get("start", 0) + ms.get("sampling", 0)) / r.get("turn_candidates", 1)
        for task, items in by_task.items():
            records = [r for _, rs in items for r in rs]
            if not records:
                print("  %-10s %2d no timing" % (task, len(items)))
                continue
            stages = {k: round(statistics.median(r.get("stage_ms", {}).get(k, 0) for r in records))
                      for k in ("drain", "start", "sampling", "sampling_compare", "compare", "finish")}
            print("  %-10s %2d  s p50 %5.2f  members %s  rounds %s  stage_ms p50 %s" % (
                task, len(items), statistics.median(s for s, _ in items),
                [r.get("turn_candidates") for r in records], [r.get("rounds") for r in records], stages))
        print("  exclusive part of the turns: %.1f s" % (exclusive / 1000))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
