"""Figures and the markdown summary of an RL-step run (run_step.py): per side the
seconds per step, candidates per minute, statuses against the manifest and where the
time went; the goals; every reason the run failed."""

GOAL_STEP_S = {"extension": 300.0, "kernelbench": 300.0, "native": 60.0}
GOAL_RATIO = 5.0

# kvault's `phases` (docs/cli.md) grouped; gate_wait lies within the other stages.
KV_GROUPS = [("build", ["build"]),
             ("setup (describe, worker start, load)", ["describe", "worker_start", "load"]),
             ("correctness", ["correctness"]),
             ("timing (prepare, rounds, re-check)", ["timing_prepare", "timing", "recheck"]),
             ("waiting for the device's timing lock", ["timing_wait"]),
             ("of which waiting at the device's gate (within the stages above)", ["gate_wait"]),
             ("queue (before a lane took the candidate)", ["queue"])]
AMD_GROUPS = [("process start, import torch", ["import", "process"]), ("build (load_inline)", ["build"]),
              ("correctness", ["correctness"]), ("timing", ["timing"]),
              ("queue (waiting for a free worker)", ["pool_queue"])]


def quantile(values, q):
    v = sorted(values)
    if not v:
        return None
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def r3(x):
    return None if x is None else round(x, 3)


def count(values):
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: str(kv[0])))


def phase_table(records, key="phases", extra=None):
    """{phase: {sum_s, mean_s, p50_s, n}} over the records that have it; `extra`
    adds computed phases per record."""
    seconds = {}
    for r in records:
        phases = dict(r.get(key) or {})
        if extra:
            phases.update(extra(r))
        for name, s in phases.items():
            if isinstance(s, (int, float)):
                seconds.setdefault(name, []).append(float(s))
    return {name: {"sum_s": r3(sum(v)), "mean_s": r3(sum(v) / len(v)), "p50_s": r3(quantile(v, 0.5)),
                   "n": len(v)} for name, v in sorted(seconds.items())}


# Parts of a turn that its members share (a group turn, docs/timing.md): counted once per turn.
TURN_SHARED = ("drain", "start", "sampling", "sampling_compare", "compare")


def turn_table(records):
    """{stage: {sum_s, mean_s, p50_s, n}} of the timing records' stage_ms (docs/timing.md,
    "Results"), plus `exclusive`: drain + start + sampling, the device's turn, and
    `members`: candidates per turn. The members of a group turn share its drain, start
    and sampling (the same numbers in each record): those are counted once per turn;
    `prepare` and `finish` are each candidate's."""
    turns, members = {}, []
    for r in records:
        for c in r.get("turns") or r.get("cases") or []:  # run_step.py's records, or the server's
            if isinstance(c, dict) and c.get("kind") == "timing" and isinstance(c.get("stage_ms"), dict):
                ms = c["stage_ms"]
                stages = {k: v / 1000.0 for k, v in ms.items() if isinstance(v, (int, float))}
                members.append({"turn": {k: v for k, v in stages.items() if k not in TURN_SHARED}})
                shared = {k: v for k, v in stages.items() if k in TURN_SHARED}
                shared["exclusive"] = sum(shared.get(k, 0.0) for k in ("drain", "start", "sampling"))
                shared["rounds"] = c.get("rounds", 0)
                shared["members"] = c.get("turn_candidates", 1)
                key = (c.get("case"), c.get("reference_ms"), tuple(sorted(shared.items())))
                turns[key] = {"turn": shared}
    table = phase_table(list(turns.values()), key="turn")
    table.update(phase_table(members, key="turn"))
    return table


def groups(table, spec):
    out = {}
    for label, names in spec:
        out[label] = r3(sum(table[n]["sum_s"] for n in names if n in table))
    return out


def judge(records, manifest_by_index):
    """(agree, [disagreement]) of finished records against the manifest."""
    agree, bad = 0, []
    for r in records:
        want = manifest_by_index[r["index"]]["expected"]
        if r.get("status") == want:
            agree += 1
        else:
            bad.append({"index": r["index"], "id": r.get("id"), "expected": want, "got": r.get("status"),
                        "message": (r.get("message") or "")[:300], "error": r.get("error")})
    return agree, bad


def cancelled(r):
    """A result the benchmark's own cancel (or a deadline) made: not a verification."""
    return isinstance(r.get("error"), dict) and r["error"].get("kind") in ("cancelled", "deadline")


def kvault_section(manifest, run):
    """run: what run_step.py recorded (records, step_s, complete, ...)."""
    by_index = {c["index"]: c for c in manifest["candidates"]}
    records = [r for r in run["records"] if r.get("status") is not None and not cancelled(r)]
    agree, bad = judge(records, by_index)
    lat = [r["seconds"] for r in records if isinstance(r.get("seconds"), (int, float))]
    queue = lambda r: ({"queue": max(0.0, r["arrived_s"] - r["seconds"])}
                       if isinstance(r.get("seconds"), (int, float)) and r.get("arrived_s") is not None else {})
    table = phase_table(records, extra=queue)
    n, step_s = len(records), run["step_s"]
    out = dict({k: v for k, v in run.items() if k != "records"},
               finished=n, statuses=count(r["status"] for r in records), agree=agree, disagree=bad,
               from_store=sum(1 for r in records if r.get("from_store")),
               per_min=r3(60.0 * n / step_s) if step_s and n else None,
               latency_p50_s=r3(quantile(lat, 0.5)), latency_p95_s=r3(quantile(lat, 0.95)),
               lane_seconds=r3(sum(lat)), phases=table, groups=groups(table, KV_GROUPS),
               gate_wait_s=table.get("gate_wait", {}).get("sum_s"), queue_s=table.get("queue", {}).get("sum_s"),
               turns=turn_table(records),
               per_kind={k: r3(sum(r["seconds"] for r in records if by_index[r["index"]]["kind"] == k
                                   and isinstance(r.get("seconds"), (int, float))) /
                               max(1, sum(1 for r in records if by_index[r["index"]]["kind"] == k)))
                         for k in ("correct", "offbyone", "wrong", "broken")},
               records=run["records"])
    if not run["complete"] and n:
        out["projected_step_s"] = r3(step_s * len(manifest["candidates"]) / n)
    return out


def amd_section(manifest, amd):
    by_index = {c["index"]: c for c in manifest["candidates"]}
    records = [r for r in amd["results"] if r["status"] != "stopped"]
    agree, bad = judge(records, by_index)

    def process(r):  # what the child's own phases do not cover: process start and exit
        inner = sum(v for v in (r.get("phases") or {}).values() if isinstance(v, (int, float)))
        return {"process": max(0.0, r["wall_s"] - inner), "pool_queue": r["start_s"]} if "wall_s" in r else {}

    table = phase_table(records, extra=process)
    n, total = len(records), len(manifest["candidates"])
    window = amd["last_end_s"] if not amd["stopped"] else amd["wall_s"]
    per_min = 60.0 * n / window if n and window else None
    # Two projections to the whole step; the smaller one (the more favourable to AMD's way)
    # is the one compared: the measured rate, and perfect packing of the workers' seconds.
    by_rate = total * window / n if n else None
    worker_s = sum(r["wall_s"] for r in records)
    by_packing = worker_s / amd["workers"] * total / n if n else None
    complete = n == total
    estimate = window if complete else min(x for x in (by_rate, by_packing) if x is not None) if n else None
    lat = [r["wall_s"] for r in records]
    return {"workers": amd["workers"], "device": amd["device"], "seeds": amd["seeds"], "iters": amd["iters"],
            "warmup": amd["warmup"], "selected": amd["selected"], "finished": n, "stopped": amd["stopped"],
            "complete": complete, "window_s": r3(window), "per_min": r3(per_min),
            "projected_step_s_rate": r3(by_rate), "projected_step_s_packing": r3(by_packing),
            "step_s": r3(estimate), "statuses": count(r["status"] for r in records), "agree": agree,
            "disagree": bad, "latency_p50_s": r3(quantile(lat, 0.5)), "latency_p95_s": r3(quantile(lat, 0.95)),
            "worker_seconds": r3(worker_s), "phases": table, "groups": groups(table, AMD_GROUPS),
            "pool_queue_s": table.get("pool_queue", {}).get("sum_s"), "records": amd["results"]}


def comparison(fmt, kv, amd):
    goals = {}
    if kv and kv.get("finished"):
        limit = GOAL_STEP_S[fmt]
        step = kv["step_s"] if kv["complete"] else kv.get("projected_step_s")
        goals["step"] = {"goal": "the step under %d s (%s format)" % (limit, fmt), "value_s": step,
                         "met": bool(kv["complete"] and step is not None and step < limit)}
    ratio = None
    if kv and amd and kv.get("finished") and amd.get("step_s"):
        step = kv["step_s"] if kv["complete"] else kv.get("projected_step_s")
        ratio = amd["step_s"] / step if step else None
        goals["ratio"] = {"goal": "at least %gx AMD's way" % GOAL_RATIO, "value_x": r3(ratio),
                          "met": bool(kv["complete"] and ratio is not None and ratio >= GOAL_RATIO)}
    return {"speedup_x": r3(ratio), "goals": goals}


def failures(results):
    """Every reason this run is not a valid measurement (the exit status is 1 if any)."""
    out = list(results.get("errors", []))
    kv, amd = results.get("kvault"), results.get("amd")
    if kv:
        if not kv["complete"]:
            out.append("kvault: step incomplete: %d of %d results in %.1f s (limit)" % (
                kv["finished"], results["step_candidates"], kv["step_s"]))
        for d in kv["disagree"]:
            out.append("kvault: %s expected %s, got %s: %s %s" % (d["id"], d["expected"], d["got"],
                                                                  d["message"], d["error"] or ""))
        if kv["from_store"]:
            out.append("kvault: %d results came from the store: the step was not cold" % kv["from_store"])
        if kv.get("cache_hits"):
            out.append("kvault: %d builds hit the compile cache: the step was not cold" % kv["cache_hits"])
    if amd:
        if not amd["finished"]:
            out.append("AMD's way: no candidate finished")
        for d in amd["disagree"]:
            out.append("AMD's way: %s expected %s, got %s: %s" % (d["id"], d["expected"], d["got"], d["message"]))
    return out


def fmt_s(x):
    return "-" if x is None else ("%.1f" % x)


def stage_rows(group_sums, phases, total):
    """The table of where a side's time went: the groups (with their share of `total`,
    the seconds the candidates themselves took), then every phase."""
    rows = ["| stage | sum s | share | mean s | p50 s |", "|---|---|---|---|---|"]
    for label, value in group_sums.items():
        inside = not label.startswith("queue")  # a queue's wait is outside the candidates' seconds
        share = "%.0f%%" % (100.0 * value / total) if inside and total and value is not None else ""
        rows.append("| **%s** | %s | %s | | |" % (label, fmt_s(value), share))
    for name, row in phases.items():
        rows.append("| %s | %s | | %.3f | %.3f |" % (name, fmt_s(row["sum_s"]), row["mean_s"], row["p50_s"]))
    return rows


def markdown(results):
    kv, amd, cmp_ = results.get("kvault"), results.get("amd"), results.get("comparison", {})
    total = results["step_candidates"]
    lines = ["# RL step: %d candidates (%d tasks x %d samples), %s format, %s, seed %d" % (
        total, results["tasks"], results["samples_per_task"], results["format"], results["lang"], results["seed"]),
        "", "Environment: %s" % "; ".join("%s %s" % kv_ for kv_ in results.get("environment", {}).items()), ""]
    for m in results.get("merged_from", []):
        lines.append("Merged: %s from %s (a %s step of the same seed)" % (" and ".join(m["parts"]), m["file"],
                                                                           m["format"]))
    if results.get("merged_from"):
        lines.append("")
    head, sep = "| | kvault serve | AMD's way |", "|---|---|---|"
    rows = [head, sep]

    def cell(side, what):
        if not side:
            return "not run"
        return what(side)

    rows.append("| candidates | %s | %s |" % (
        cell(kv, lambda s: "%d of %d%s" % (s["finished"], total, "" if s["complete"] else " (stopped at limit)")),
        cell(amd, lambda s: "%d of %d%s%s" % (s["finished"], total,
                                               " (stratified subset)" if s["selected"] < total else "",
                                               ", %d stopped at limit" % s["stopped"] if s["stopped"] else ""))))
    rows.append("| seconds per step | %s | %s |" % (
        cell(kv, lambda s: fmt_s(s["step_s"]) if s["complete"] else "%s projected (%s measured)" % (
            fmt_s(s.get("projected_step_s")), fmt_s(s["step_s"]))),
        cell(amd, lambda s: fmt_s(s["step_s"]) if s["complete"] else
             "%s projected (rate: %s, perfect packing: %s; %d in %s s)" % (
                 fmt_s(s["step_s"]), fmt_s(s["projected_step_s_rate"]), fmt_s(s["projected_step_s_packing"]),
                 s["finished"], fmt_s(s["window_s"])))))
    rows.append("| candidates per minute | %s | %s |" % (cell(kv, lambda s: fmt_s(s["per_min"])),
                                                         cell(amd, lambda s: fmt_s(s["per_min"]))))
    rows.append("| statuses as in the manifest | %s | %s |" % (
        cell(kv, lambda s: "%d/%d" % (s["agree"], s["finished"])),
        cell(amd, lambda s: "%d/%d" % (s["agree"], s["finished"]))))
    rows.append("| latency p50 / p95 (s) | %s | %s |" % (
        cell(kv, lambda s: "%s / %s" % (fmt_s(s["latency_p50_s"]), fmt_s(s["latency_p95_s"]))),
        cell(amd, lambda s: "%s / %s" % (fmt_s(s["latency_p50_s"]), fmt_s(s["latency_p95_s"])))))
    rows.append("| parallelism | %s | %s |" % (cell(kv, lambda s: "%s lanes" % s.get("lanes")),
                                                cell(amd, lambda s: "%d worker processes" % s["workers"])))
    lines += rows + [""]
    if cmp_.get("goals"):
        lines.append("Goals:")
        for g in cmp_["goals"].values():
            value = ("%.1f s" % g["value_s"]) if "value_s" in g and g["value_s"] is not None else (
                "%.2fx" % g["value_x"] if g.get("value_x") is not None else "-")
            lines.append("- %s: **%s** (%s)" % (g["goal"], "met" if g["met"] else "not met", value))
        lines.append("")
    if kv and kv.get("finished"):
        lines += ["## Where kvault's time went", "",
                  "Lane-seconds summed over candidates (%s lanes, %.1f s of step: %.0f lane-seconds available); "
                  "`gate_wait` lies within the other stages; `queue` is the time before a lane took the "
                  "candidate." % (kv.get("lanes"), kv["step_s"], (kv.get("lanes") or 0) * kv["step_s"]), "",
                  ] + stage_rows(kv["groups"], kv["phases"], kv["lane_seconds"])
        lines += ["", "Mean seconds per candidate by kind: %s" % ", ".join(
            "%s %s" % (k, fmt_s(v)) for k, v in kv["per_kind"].items()), ""]
        if kv.get("turns"):
            lines += ["Timing turns (stage_ms of the timing records, seconds; `exclusive` = drain + start + "
                      "sampling, the device taken from every other lane, counted once per turn however many "
                      "candidates shared it; `rounds` and `members` (candidates per turn) are counts; "
                      "`prepare` and `finish` are per candidate):", "",
                      "| stage | sum | mean | p50 | n |", "|---|---|---|---|---|"]
            for name, t in kv["turns"].items():
                lines.append("| %s | %s | %s | %s | %d |" % (name, t["sum_s"], t["mean_s"], t["p50_s"], t["n"]))
            lines.append("")
        if kv.get("prewarm"):
            lines += ["Before the step: %s" % kv["prewarm"].get("note", ""), ""]
    if amd and amd.get("finished"):
        lines += ["## Where AMD's way's time went", "",
                  "Worker-seconds summed over the %d finished candidates (%d workers); `pool_queue` is "
                  "the wait for a free worker." % (amd["finished"], amd["workers"]), "",
                  ] + stage_rows(amd["groups"], amd["phases"], amd["worker_seconds"])
        lines.append("")
    lines += ["## Statuses", "", "| expected | count | kvault | AMD's way |", "|---|---|---|---|"]
    expected = results["expected_counts"]
    for status in sorted(expected):
        lines.append("| %s | %d | %s | %s |" % (
            status, expected[status],
            cell(kv, lambda s: ", ".join("%s %d" % x for x in sorted(count(
                r["status"] for r in s["records"] if r.get("status") and r.get("expected") == status).items()))),
            cell(amd, lambda s: ", ".join("%s %d" % x for x in sorted(count(
                r["status"] for r in s["records"] if r["status"] != "stopped" and
                r.get("expected") == status).items())) or "none run")))
    lines.append("")
    fails = results.get("failures", [])
    lines += ["## Verdict", "", "**%s**" % ("VALID: every status as in the manifest, no server error"
                                            if not fails else "FAILED (%d problems)" % len(fails)), ""]
    lines += ["- " + f for f in fails[:50]]
    if len(fails) > 50:
        lines.append("- ... and %d more (results.json)" % (len(fails) - 50))
    return "\n".join(lines) + "\n"
