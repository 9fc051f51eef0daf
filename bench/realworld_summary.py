#!/usr/bin/env python3
"""Summarises bench/realworld_side_by_side.sh: per-file verdicts of kvault (each part)
and of KernelBench's harness, and the figures the real-world set is judged by.

  realworld_summary.py RESULTS_DIR DEVSET_MANIFEST [--csv OUT.csv]

RESULTS_DIR holds what the script left under realworld/ (PART.json, PART.db,
PART.wall, kernelbench.json). Reads each part's store for what its JSON lacks (a
part stopped at its limit leaves no JSON; the store has every attempt it finished).
Prints, per part: files verified, wall, files a minute after the first result,
statuses, median and quartiles of the phases (load, record_inline, build, memory_wait,
worker_start, correctness, timing; from the store when a part left no JSON), how many
load_inline units were built ahead (lite or full) and why the others were not; then
the verdict pairs against KernelBench's harness and the wall-time ratios. The
holdout source is reported apart.
"""
import argparse
import collections
import csv
import json
import os
import sqlite3
import statistics


def quartiles(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return "-"
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return "median %.2f s (%.2f-%.2f)" % (q[1], q[0], q[2])


def read_part(folder, part):
    db = os.path.join(folder, part + ".db")
    if not os.path.exists(db):
        return None
    rows = sqlite3.connect(db).execute(
        "select candidate_path, status, environment, cases, message from attempts where run = ?", (part,)).fetchall()
    attempts = {}
    for path, status, environment, cases, message in rows:
        env = json.loads(environment or "{}")
        attempts[os.path.basename(path)] = {"status": status, "env": env, "cases": json.loads(cases or "[]"),
                                            "message": message}
    speed = {}
    json_path = os.path.join(folder, part + ".json")
    if os.path.exists(json_path) and os.path.getsize(json_path):
        for a in json.load(open(json_path)).get("attempts", []):
            name = os.path.basename(a["candidate"])
            speed[name] = a
    wall = None
    wall_path = os.path.join(folder, part + ".wall")
    if os.path.exists(wall_path):
        wall = float(open(wall_path).read().split("wall")[1])
    return {"attempts": attempts, "json": speed, "wall": wall}


def timing_method(a):
    """The method the record's timed cases name ("-" when none was timed)."""
    found = set()

    def walk(v, depth=0):
        if depth > 6:
            return
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "method" and isinstance(x, str):
                    found.add(x)
                else:
                    walk(x, depth + 1)
        elif isinstance(v, list):
            for x in v:
                walk(x, depth + 1)
    walk(a["cases"])
    return "+".join(sorted(found)) or "-"


def phase(a, name):
    """A phase's seconds: from the eval's JSON, else from the store's `phases` record
    (a part stopped at its limit leaves no JSON)."""
    phases = a.get("phases")
    if phases is None:
        phases = next((c.get("seconds") for c in a.get("cases", []) if c.get("kind") == "phases"), None)
    return (phases or {}).get(name)


def kb_verdict(r):
    if not r or not r.get("answered"):
        return "no answer"
    return "correct" if r.get("correct") else "compiled, wrong" if r.get("compiled") else "not compiled"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("manifest")
    ap.add_argument("--csv")
    args = ap.parse_args()
    manifest = {m["name"]: m for m in json.load(open(args.manifest))}
    parts = {p: read_part(args.results, p) for p in ("all-cold", "all-warm", "subset-cold", "subset-warm", "subset-kbtol", "examples")}
    parts = {p: v for p, v in parts.items() if v}
    kb_path = os.path.join(args.results, "kernelbench.json")
    kb = json.load(open(kb_path)) if os.path.exists(kb_path) else None
    kb_by = {r["candidate"]: r for r in kb["results"]} if kb else {}

    for part, v in parts.items():
        js = v["json"]
        n = len(v["attempts"])
        print("== %s: %d files, wall %s s" % (part, n, v["wall"]))
        seconds = sorted(a["seconds"] for a in js.values() if a.get("seconds") is not None)
        if v["wall"] and n:
            print("   %.1f files a minute over the wall" % (n / v["wall"] * 60))
        print("   statuses:", dict(collections.Counter(a["status"] for a in v["attempts"].values())))
        answered = js.values() if js else v["attempts"].values()
        for name in ("load", "record_inline", "build", "memory_wait", "worker_start", "correctness", "timing"):
            print("   %-14s %s" % (name, quartiles([phase(a, name) for a in answered])))
        print("   record_inline summed: %.1f s" % sum(phase(a, "record_inline") or 0 for a in answered))
        ahead = collections.Counter()
        notes = collections.Counter()
        for a in v["attempts"].values():
            build = a["env"].get("build") or {}
            for note in build.get("inline") or []:
                if note.get("built"):
                    ahead["lite" if note.get("lite_ext") else "full"] += 1
                else:
                    notes[note.get("note", "not built")[:90]] += 1
            if build.get("lite_ext_note"):
                notes["full build: " + build["lite_ext_note"][:80]] += 1
        print("   units built by the engine:", dict(ahead), "left or full:", dict(notes))
        methods = collections.Counter(timing_method(a) for a in v["attempts"].values())
        print("   timing methods:", dict(methods))

    rows = []
    for name in sorted(manifest):
        m = manifest[name]
        row = {"file": name, "source": m["source"], "holdout": m["holdout"], "model": m.get("model", ""),
               "task_as_generated": m.get("task_identical_to_source_copy", True)}
        for part, v in parts.items():
            a = v["attempts"].get(name)
            j = v["json"].get(name, {})
            row[part] = a["status"] if a else ""
            if a and a["status"] != "passed":
                row[part + "_message"] = a["message"][:300]
            row[part + "_speedup"] = j.get("speedup")
            row[part + "_load_s"] = phase(j, "load")
        if kb_by:
            r = kb_by.get(name)
            row["kernelbench"] = kb_verdict(r) if r else ""
            if r and r.get("correct") and r.get("runtime_us", -1) > 0 and r.get("ref_runtime_us", -1) > 0:
                row["kernelbench_speedup"] = round(r["ref_runtime_us"] / r["runtime_us"], 3)
        rows.append(row)
    if args.csv:
        fields = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)

    if kb and "summary" not in kb:
        print("== KernelBench's harness stopped at its limit: %d files answered" % len(kb["results"]))
    elif kb:
        s = kb["summary"]
        print("== KernelBench's harness on %d files: wall %.1f s (builds %.1f s on %d processes, evaluations %.1f s)"
              % (s["candidates"], s["wall_s"], s["build_wall_s"], s["cpu_workers"], s["eval_wall_s"]))
        for part, kb_s in (("subset-cold", s["wall_s"]), ("subset-warm", s["eval_wall_s"])):
            if part in parts and parts[part]["wall"]:
                print("   %s %.1f s: KernelBench %.1f s is %.2fx" % (part, parts[part]["wall"], kb_s,
                                                                   kb_s / parts[part]["wall"]))
    if kb:
        for holdout in (False, True):
            pairs = collections.Counter()
            for r in rows:
                if r["holdout"] == holdout and r.get("kernelbench"):
                    pairs[(r.get("subset-cold", ""), r.get("subset-kbtol", ""), r["kernelbench"])] += 1
            print("   verdict pairs (kvault, kvault at 1e-2, KernelBench)%s: %s"
                  % (" [holdout]" if holdout else "", dict(pairs)))


if __name__ == "__main__":
    main()
