#!/usr/bin/env python3
"""Summarizes bench/h200_throughput.sh results: per step, candidates, wall time,
throughput, per-candidate latency p50/p95, statuses and agreement with the
generator's expected statuses, the mean and median seconds of each verification
stage (`phases`); then the ratios the targets name (native and
extension warm throughput over load_inline warm throughput; the KernelBench-sized
task's verification time over the baseline's). Writes DIR/summary.json.

  summarize_throughput.py DIR      # DIR = $OUT/throughput
  summarize_throughput.py --from-store DB RUN   # a stopped step's stored attempts as eval JSON
  summarize_throughput.py --from-log LOG RUN    # the same from eval's progress lines (counts and
                                                # statuses only: for runs with --force)
  summarize_throughput.py --timing DB RUN       # the timing records of a run: how they stopped,
                                                # method, quiet device, rounds, stage_ms
"""
import json
import sys
from pathlib import Path


def quantile(values, q):
    ordered = sorted(values)
    if not ordered:
        return None
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def load_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def expected_by_name(folder):
    out = {}
    for manifest in folder.glob("manifest-*.json"):
        for entry in load_json(manifest) or []:
            out[Path(entry["file"]).name] = entry["expected"]
    return out


def step_summary(name, data, wall, rc, expected):
    listed = data.get("attempts", []) if isinstance(data, dict) else []
    attempts, seen = [], set()
    # A candidate whose content the run had already verified is not verified again
    # (without --force): eval lists it with the earlier attempt's path and figures. Such
    # repeats are not counted.
    for a in listed:
        if a.get("candidate") not in seen:
            seen.add(a.get("candidate"))
            attempts.append(a)
    repeats = len(listed) - len(attempts)
    lat = [a.get("seconds", a.get("wall_seconds")) for a in attempts]
    lat = [x for x in lat if isinstance(x, (int, float))]
    statuses, agree, known = {}, 0, 0
    for a in attempts:
        statuses[a.get("status")] = statuses.get(a.get("status"), 0) + 1
        want = expected.get(Path(str(a.get("candidate", ""))).name)
        if want is not None:
            known += 1
            agree += want == a.get("status")
    n = len(attempts)
    phases = {}  # stage -> seconds of every attempt that has it (eval's `phases`)
    for a in attempts:
        for stage, seconds in (a.get("phases") or {}).items():
            if isinstance(seconds, (int, float)):
                phases.setdefault(stage, []).append(seconds)
    return {"step": name, "exit": rc, "candidates": n, "recorded_earlier": repeats, "wall_s": wall,
            "throughput_per_min": 60.0 * n / wall if wall and n else None,
            "latency_p50_s": quantile(lat, 0.5), "latency_p95_s": quantile(lat, 0.95),
            "statuses": statuses, "expected_known": known, "expected_agree": agree,
            "phases_p50_s": {k: quantile(v, 0.5) for k, v in sorted(phases.items())},
            "phases_mean_s": {k: sum(v) / len(v) for k, v in sorted(phases.items())}}


def ratio(a, b):
    return a / b if a and b else None


def from_store(db, run):
    """The attempts of RUN in the store DB in `eval --json`'s shape (candidate, status,
    seconds, phases): for a step stopped by its time limit, which prints no JSON but
    has stored every candidate it finished."""
    import sqlite3
    attempts = []
    for path, status, seconds, cases in sqlite3.connect(db).execute(
            "SELECT candidate_path, status, seconds, cases FROM attempts WHERE run = ? ORDER BY id", (run,)):
        try:
            records = json.loads(cases)
        except ValueError:
            records = []
        phases = next((r for r in records if isinstance(r, dict) and r.get("kind") == "phases"), {})
        attempts.append({"candidate": path, "status": status, "seconds": seconds,
                         "phases": phases.get("seconds") or {}})
    return {"run": run, "attempts": attempts, "from_store": True}


def from_log(log, run):
    """The attempts eval's progress lines name ("[k/N 0m44s, ~1m02s left] task <- file:
    status[: message]"; older engines wrote "[k/N]"), without seconds or phases: for a
    step stopped by its limit that re-verified repeated contents (--force), of which the
    store keeps one record per content. Each carries the time it was printed at, when
    the line has it."""
    import re
    line = re.compile(r"^\[\d+/\d+(?: (\d+)m(\d+)s)?[^\]]*\] \S+ <- (\S+): (\w+)(.*)$")
    attempts = []
    for text in Path(log).read_text(errors="replace").splitlines():
        m = line.match(text.strip())
        if m and "(recorded earlier)" not in m.group(5):
            a = {"candidate": m.group(3), "status": m.group(4)}
            if m.group(1):
                a["at_s"] = int(m.group(1)) * 60 + int(m.group(2))
            attempts.append(a)
    return {"run": run, "attempts": attempts, "from_log": True}


def timing_summary(db, run):
    """Counts and medians over the timing records of `run` in the store `db`."""
    import sqlite3
    from collections import Counter
    rows = sqlite3.connect(db).execute("SELECT cases FROM attempts WHERE run = ?", (run,)).fetchall()
    records = [c for (cases,) in rows for c in json.loads(cases) if c.get("kind") == "timing"]

    def median_of(values):
        values = [v for v in values if isinstance(v, (int, float))]
        return quantile(values, 0.5)
    stages = sorted({k for r in records for k in r.get("stage_ms", {})})
    return {"run": run, "records": len(records),
            "stop": dict(Counter(r.get("stop") for r in records)),
            "method": dict(Counter(r.get("method") for r in records)),
            "warmup_ms": dict(Counter(str(r.get("warmup_ms")) for r in records)),
            "device_quiet": dict(Counter(str(r.get("device_quiet")) for r in records)),
            "reference_kept": dict(Counter(str(r.get("reference_kept")) for r in records)),
            "rounds_median": median_of(r.get("rounds") for r in records),
            "candidate_noise_median": median_of(r.get("candidate_noise") for r in records),
            "stage_ms_median": {k: median_of(r.get("stage_ms", {}).get(k) for r in records) for k in stages}}


def main(argv):
    if argv[:1] == ["--from-log"] and len(argv) == 3:
        print(json.dumps(from_log(argv[1], argv[2])))
        return 0
    if argv[:1] == ["--from-store"]:
        print(json.dumps(from_store(argv[1], argv[2])))
        return 0
    if argv[:1] == ["--timing"]:
        print(json.dumps(timing_summary(argv[1], argv[2])))
        return 0
    folder = Path(argv[0]) if argv else Path(".")
    steps = {}
    tsv = folder / "steps.tsv"
    for line in (tsv.read_text().splitlines() if tsv.exists() else []):
        name, rc, wall = line.split("\t")
        steps[name] = (int(rc), float(wall))  # the last run of a step wins
    expected = expected_by_name(folder)
    rows = {}
    for name, (rc, wall) in steps.items():
        rows[name] = step_summary(name, load_json(folder / (name + ".json")) or {}, wall, rc, expected)

    def tp(name):
        return (rows.get(name) or {}).get("throughput_per_min")

    def wall(name):
        return (rows.get(name) or {}).get("wall_s")

    targets = {
        "native_over_load_inline_warm": ratio(tp("batch-native-warm"), tp("batch-load_inline-warm")),
        "extension_over_load_inline_warm": ratio(tp("batch-extension-warm"), tp("batch-load_inline-warm")),
        "native_over_load_inline_cold": ratio(tp("batch-native-cold"), tp("batch-load_inline-cold")),
        "extension_over_load_inline_cold": ratio(tp("batch-extension-cold"), tp("batch-load_inline-cold")),
        "native_over_load_inline200_warm": ratio(tp("batch-native-warm"), tp("batch-load_inline200-warm")),
        "extension200_over_load_inline200_warm": ratio(tp("batch-extension200-warm"),
                                                       tp("batch-load_inline200-warm")),
        "big_task_kvault_cold_over_baseline_cold": ratio(wall("big-native-cold"), wall("big-load_inline-cold")),
        "big_task_kvault_warm_over_baseline_warm": ratio(wall("big-native-warm"), wall("big-load_inline-warm")),
    }
    summary = {"steps": rows, "targets": targets,
               "goals": {"native_over_load_inline_warm": ">= 10", "extension_over_load_inline_warm": ">= 3",
                         "big_task_kvault_*_over_baseline_*": "<= 0.1"}}
    (folder / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print("%-28s %4s %5s %8s %9s %8s %8s  %s" % ("step", "exit", "n", "wall s", "cand/min", "p50 s", "p95 s",
                                                   "statuses (expected agree/known)"))
    fmt = lambda x, f: (f % x) if isinstance(x, (int, float)) else "-"  # noqa: E731
    for name, r in rows.items():
        print("%-28s %4d %5d %8s %9s %8s %8s  %s (%d/%d)" % (
            name, r["exit"], r["candidates"], fmt(r["wall_s"], "%.1f"), fmt(r["throughput_per_min"], "%.1f"),
            fmt(r["latency_p50_s"], "%.2f"), fmt(r["latency_p95_s"], "%.2f"),
            ",".join("%s:%d" % kv for kv in sorted(r["statuses"].items(), key=str)),
            r["expected_agree"], r["expected_known"]))
    for name, r in rows.items():
        if r["phases_mean_s"]:
            print("%-28s phases, mean s: %s" % (name, " ".join(
                "%s=%.2f" % kv for kv in r["phases_mean_s"].items())))
    for key, value in targets.items():
        print("%-44s %s" % (key, fmt(value, "%.2f")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
