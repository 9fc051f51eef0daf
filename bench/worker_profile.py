#!/usr/bin/env python3
"""Where the workers' time went: reads a KVAULT_WORKER_PROFILE folder
(python/kvault_worker/profiling.py) and prints, per request kind, how many there were
and their wall seconds, then the functions that took the time.

A request's kind is its op, and for `run` and `reference` whether it was the first of
its op in its worker ("run#1": a fresh worker's first device work) or a later one
("run#2+"), since a worker's first run pays what later ones do not.

  KVAULT_SANDBOX=off KVAULT_WORKER_PROFILE=/tmp/prof kvault eval ...
  python3 bench/worker_profile.py /tmp/prof [--top 25] [--kinds run#1,run#2+]
"""
import argparse
import collections
import glob
import io
import json
import os
import pstats
import sys

FIRST_SPLIT = ("run", "reference", "time_start", "load")


def read_requests(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
        seen = collections.Counter()
        with open(path) as f:
            for line in f:
                row = json.loads(line)
                seen[row["op"]] += 1
                op = row["op"]
                row["kind"] = op if op not in FIRST_SPLIT else op + ("#1" if seen[op] == 1 else "#2+")
                row["prof"] = os.path.join(folder, "%s-%d-%s.prof" % (row["worker"], row["n"], op))
                rows.append(row)
    return rows


def table(rows):
    by_kind = collections.defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row["wall_s"])
    lines = ["| request | count | total s | mean ms | max ms |", "|---|---|---|---|---|"]
    for kind, walls in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        lines.append("| %s | %d | %.2f | %.1f | %.1f |" % (kind, len(walls), sum(walls),
                                                            1000 * sum(walls) / len(walls), 1000 * max(walls)))
    return "\n".join(lines)


def functions(rows, kind, top, order):
    paths = [r["prof"] for r in rows if r["kind"] == kind and os.path.exists(r["prof"])]
    if not paths:
        return ""
    buf = io.StringIO()
    stats = pstats.Stats(paths[0], stream=buf)
    for p in paths[1:]:
        stats.add(p)
    stats.files = []  # not a line per profile file
    stats.strip_dirs().sort_stats(order).print_stats(top)
    return "== %s: %d requests, by %s\n%s" % (kind, len(paths), order, buf.getvalue())


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--kinds", default="", help="comma-separated kinds to list functions of (default: the 4 costliest)")
    args = ap.parse_args(argv)
    rows = read_requests(args.folder)
    if not rows:
        print("no profiled requests in %s" % args.folder, file=sys.stderr)
        return 1
    print(table(rows))
    totals = collections.Counter()
    for row in rows:
        totals[row["kind"]] += row["wall_s"]
    kinds = [k for k in args.kinds.split(",") if k] or [k for k, _ in totals.most_common(4)]
    for kind in kinds:
        for order in ("tottime", "cumulative"):
            print(functions(rows, kind, args.top, order))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
