#!/usr/bin/env python3
"""Keeps bench/results to summaries: removes raw logs and dumps, checks the links.

    python3 bench/prune_results.py --dry-run   # list what would go
    python3 bench/prune_results.py             # delete it, then check the links
    python3 bench/prune_results.py --check     # only check the links

Removed: raw logs and dumps (*.log, *.err, *.out, *.time, *.jsonl, archives) and
any .json or .txt file over --max-kb, unless a page (BENCHMARKS.md, README.md,
docs/*.md) names the file itself. Kept: summaries (*.md), tables (*.csv, *.tsv),
the commands that made them (*.sh, *.py) and small JSON/text results.

The link check reads every `bench/results/...` path those pages mention (wildcards
allowed) and fails, exit 1, naming each one that matches nothing on disk. The
raw files removed on 2026-12-06 stay reachable in git on the branch `bench-logs`.
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = "bench/results"
RAW_PATTERNS = ["*.log", "*.err", "*.out", "*.time", "*.jsonl", "*.gz", "*.tgz", "*.tar"]
SIZED_PATTERNS = ["*.json", "*.txt"]
MENTION = re.compile(r"bench/results/[^\s`'\")\]>,;]*")


def pages():
    out = [os.path.join(ROOT, p) for p in ("BENCHMARKS.md", "README.md", "ARCHITECTURE.md")]
    out += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [p for p in out if os.path.isfile(p)]


def mentions():
    """(page, path) for every bench/results path a page mentions, trailing dots cut."""
    found = []
    for page in pages():
        with open(page, encoding="utf-8") as f:
            for m in MENTION.finditer(f.read()):
                found.append((os.path.relpath(page, ROOT), m.group(0).rstrip(".:")))
    return found


def to_remove(max_bytes):
    cited = {path.rstrip("/") for _, path in mentions()}
    doomed = []
    for folder, _, files in os.walk(os.path.join(ROOT, RESULTS)):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), ROOT)
            if rel in cited:
                continue
            raw = any(fnmatch.fnmatch(name, p) for p in RAW_PATTERNS)
            big = any(fnmatch.fnmatch(name, p) for p in SIZED_PATTERNS) and \
                os.path.getsize(os.path.join(ROOT, rel)) > max_bytes
            if raw or big:
                doomed.append(rel)
    return sorted(doomed)


def broken_links():
    """Mentions that match no file; `<...>` is a template, `callN.sh` any call number."""
    broken = []
    for page, path in mentions():
        if "<" in path:
            continue
        pattern = re.sub(r"(?<=[a-z])N(?=\.)", "*", path)
        if not glob.glob(os.path.join(ROOT, pattern)):
            broken.append(f"{page}: {path}")
    return broken


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="list the files, delete nothing")
    ap.add_argument("--check", action="store_true", help="only check the links")
    ap.add_argument("--max-kb", type=int, default=64, help="largest .json/.txt kept (Default: 64)")
    args = ap.parse_args()
    if not args.check:
        doomed = to_remove(args.max_kb * 1024)
        total = sum(os.path.getsize(os.path.join(ROOT, p)) for p in doomed)
        for p in doomed:
            print(p)
            if not args.dry_run:
                os.remove(os.path.join(ROOT, p))
        verb = "would remove" if args.dry_run else "removed"
        print(f"{verb} {len(doomed)} files, {total / 1e6:.1f} MB", file=sys.stderr)
    broken = broken_links()
    for b in broken:
        print("broken link: " + b, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
