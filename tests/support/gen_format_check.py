#!/usr/bin/env python3
"""Checks one `kvault gen` loopback run in a non-default format (used by
tests/integration/test_gen_loopback_{triton,native,modu2func}.sh, docs/agent.md "Testing
against a replay server"):

    gen_format_check.py OUT.jsonl PLAN.json DB RUN CALLS.jsonl FORMAT_FILE HARDWARE_FILE FORMAT LANG

Every task of the plan records the planned generator outcomes and ends solved as
planned; every verified candidate is a file with the format's extension, in the
attempts table with the same status, detected as FORMAT / LANG; every answered call
has a reflection; and every system message sent carries the format's contract and
the hardware description. Prints each problem; exit 1 if any.
"""
import json
import os
import sqlite3
import sys


def main():
    out_path, plan_path, db_path, run, calls_path, format_file, hardware_file, fmt, lang = sys.argv[1:10]
    out = {j["task"]: j for j in (json.loads(l) for l in open(out_path) if l.strip())}
    plan = json.load(open(plan_path))
    db = sqlite3.connect(db_path)
    header, _, contract = open(format_file).read().partition("---\n")
    ext = next(l.split(":", 1)[1].strip() for l in header.splitlines() if l.startswith("file_extension"))
    hardware = open(hardware_file).read()
    problems = []
    if set(out) != set(plan):
        problems.append("tasks in output %s, plan %s" % (sorted(out), sorted(plan)))
    for task, want in plan.items():
        j = out.get(task, {})
        rows = db.execute("SELECT iteration, outcome FROM generations WHERE run=? AND task=? AND role='generator' "
                          "ORDER BY iteration", (run, task)).fetchall()
        got = [r[1] for r in rows]
        if got != want["outcomes"]:
            problems.append("%s: generator outcomes %s, want %s" % (task, got, want["outcomes"]))
        if j.get("solved") != want["solved"] or j.get("attempts") != len(want["outcomes"]):
            problems.append("%s: json %s, want solved=%s attempts=%d" % (task, j, want["solved"], len(want["outcomes"])))
        verified = db.execute(
            "SELECT g.candidate_path, g.outcome, a.status, a.format, a.language FROM generations g "
            "JOIN attempts a ON a.id = g.attempt_id WHERE g.run=? AND g.task=?", (run, task)).fetchall()
        if len(verified) != sum(o in ("passed", "mismatch") for o in want["outcomes"]):
            problems.append("%s: %d verified candidates for outcomes %s" % (task, len(verified), want["outcomes"]))
        for path, outcome, status, a_format, a_lang in verified:
            if outcome != status:
                problems.append("%s: generation says %s, attempt says %s" % (task, outcome, status))
            if not path.endswith(ext) or not os.path.exists(path):
                problems.append("%s: candidate file %s missing or not *%s" % (task, path, ext))
            if (a_format, a_lang) != (fmt, lang):
                problems.append("%s: candidate detected as %s/%s, want %s/%s" % (task, a_format, a_lang, fmt, lang))
        answered = sum(1 for r in rows if r[1] != "call_failed")
        refl = db.execute("SELECT count(*) FROM generations WHERE run=? AND task=? AND role='reflector' "
                          "AND outcome='reflection'", (run, task)).fetchone()[0]
        if refl != answered:
            problems.append("%s: %d reflections for %d answers" % (task, refl, answered))
    systems = 0
    for line in open(calls_path):
        call = json.loads(line) if line.strip() else {}
        for m in call.get("messages", []):
            if m.get("role") == "system":
                systems += 1
                if contract.strip() not in m.get("content", "") or hardware.strip() not in m.get("content", ""):
                    problems.append("a system message lacks the %s contract or the hardware description" % fmt)
    if systems == 0:
        problems.append("no system message was sent")
    for p in problems:
        print(p)
    print("%d tasks, %d system messages checked, %d problems" % (len(plan), systems, len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
