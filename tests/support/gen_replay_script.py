#!/usr/bin/env python3
"""Writes the replay script for the `kvault gen` loopback tests (docs/agent.md,
"Testing against a replay server"): each answer path on its own task, built from the
example candidates of one language.

    gen_replay_script.py --examples DIR --ext .cpp --tasks SUITE_DIR --out S.json --plan P.json

Paths, in order of priority: correct first time; broken then fixed; garbage (a 200
reply that is not JSON) then correct; two code blocks then correct; a timeout then
correct; HTTP 429 then correct; HTTP 500 then correct; truncated JSON then correct;
and no code block at all (never solved). Every path but the last needs a task with a
correct example <task><ext>; "broken then fixed" also needs a <task>.wrong-*<ext>.
A language with fewer examples covers the first paths only. --paths keeps only the
named paths (broken, correct, garbage, two_blocks, timeout, http429, http500,
truncated, no_code), in the same order, e.g. for a slow language; it may also name
"repeated" (not in the default set): the same wrong answer twice, then a correct one,
three samples of which two are identical. P.json maps each chosen task to its path,
the generator outcomes the run must record (after a --resume where a call fails),
whether it ends solved, whether its first call needs HTTP retries, and whether its
first call fails (the run then exits 3 until resumed).
"""
import argparse
import glob
import json
import os

FENCE = {".cpp": "cpp", ".cu": "cuda", ".hip": "hip", ".py": "python"}
PATHS = ["broken", "correct", "garbage", "two_blocks", "timeout", "http429", "http500", "truncated",
         "no_code"]
OPT_IN_PATHS = ["repeated"]
PREFERRED = ["relu", "vector_add", "row_sum", "mse_loss", "cumsum", "transpose", "gelu_tanh",
             "swiglu", "softmax"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", required=True)
    ap.add_argument("--ext", required=True)
    ap.add_argument("--tasks", required=True, help="the example suite folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--delay", type=float, default=4.0, help="seconds of the timeout path")
    ap.add_argument("--paths", default=",".join(PATHS), help="comma-separated subset of " + ",".join(PATHS + OPT_IN_PATHS))
    a = ap.parse_args()
    wanted = a.paths.split(",")
    unknown = [p for p in wanted if p not in PATHS + OPT_IN_PATHS]
    if unknown:
        ap.error("unknown path(s) %s; known: %s" % (",".join(unknown), ",".join(PATHS + OPT_IN_PATHS)))
    fence = FENCE[a.ext]

    def example(task, wrong=False):
        pattern = task + (".wrong-*" if wrong else "") + a.ext
        found = sorted(glob.glob(os.path.join(a.examples, pattern)))
        return open(found[0]).read() if found else None

    def answer(code):
        return {"content": "Here is the kernel.\n\n```%s\n%s```\n" % (fence, code)}

    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(a.tasks, "*.py")))
    order = [t for t in PREFERRED if t in names] + [t for t in names if t not in PREFERRED]
    with_code = [t for t in order if example(t)]
    plan, rules, used = {}, [], set()

    def take(pool):
        for t in pool:
            if t not in used:
                used.add(t)
                return t
        return None

    with_wrong = [t for t in with_code if example(t, wrong=True)]
    paths_of = {}  # task -> its path's name
    broken = take(with_wrong) if "broken" in wanted else None
    if broken:
        plan[broken] = ([answer(example(broken, True)), answer(example(broken))], ["mismatch", "passed"], True, False)
        paths_of[broken] = "broken"
    repeated = take(with_wrong) if "repeated" in wanted else None
    if repeated:
        wrong = answer(example(repeated, True))
        plan[repeated] = ([wrong, dict(wrong), answer(example(repeated))], ["mismatch", "mismatch", "passed"],
                          True, False)
        paths_of[repeated] = "repeated"
    paths = [
        ("correct", lambda c: [answer(c)], ["passed"], False),
        # A reply that is not JSON fails the call (not retried): the run stops that task
        # and exits 3; --resume calls again and gets the answer.
        ("garbage", lambda c: [{"raw": "<html>502 garbage</html>", "status": 200}, answer(c)],
         ["passed"], False),
        ("two_blocks", lambda c: [{"content": answer(c)["content"] * 2}, answer(c)], ["no_code", "passed"], False),
        ("timeout", lambda c: [dict(answer(c), delay_s=a.delay), answer(c)], ["passed"], True),
        ("http429", lambda c: [{"status": 429, "retry_after": 0}, answer(c)], ["passed"], True),
        ("http500", lambda c: [{"status": 500}, answer(c)], ["passed"], True),
        ("truncated", lambda c: [dict(answer(c), truncate=True), answer(c)], ["passed"], True),
    ]
    for name, responses, outcomes, retried in paths:
        if name not in wanted:
            continue
        t = take(with_code)
        if t is None:
            break
        plan[t] = (responses(example(t)), outcomes, True, retried)
        paths_of[t] = name
    no_code = take(["softmax"] + order) if "no_code" in wanted else None
    if no_code:
        plan[no_code] = ([{"content": "Use a numerically stable loop over each row."}],
                         ["no_code", "no_code", "no_code"], False, False)
        paths_of[no_code] = "no_code"
    for t, (responses, _, _, _) in plan.items():
        rules.append({"match": ["task: " + t + "\n", "role: generator"], "responses": responses})
    rules.append({"match": ["role: reflector"],
                  "responses": [{"content": "Reflection: check the indexing and the reduction order."}]})
    json.dump({"rules": rules, "default": {"status": 404}}, open(a.out, "w"), indent=1)
    json.dump({t: {"path": paths_of[t], "outcomes": p[1], "solved": p[2], "retried": p[3],
                   "call_fails": p[0][0].get("raw") is not None} for t, p in plan.items()},
              open(a.plan, "w"), indent=1)


if __name__ == "__main__":
    main()
