"""The real-world set as SFT rows for `kvault corpus import --from sft`.

    python3 bench/corpus_realworld_rows.py DEVSET OUT.jsonl [--limit N]

DEVSET holds tasks/<task>.py (KernelBench's files), cands/<task>.<source>.py (one
LLM-written ModelNew file each), manifest.json (per file: name, task, model,
source_repo, commit, holdout) and sources.json (per repository: its licence). Each file
becomes one row: the task in a python block of the user message, the file as the
assistant's one code block, and in the metadata the task name, the model, the
repository at its commit as source and the repository's licence ("" when it states
none), pipeline "kernelbench". No verdict is written: the vault verifies the kernels
itself. --limit keeps the first N files in name order (a quick or bounded run).
Prints one JSON object: rows written, files skipped and why, holdout files.
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("devset")
    ap.add_argument("out")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.devset, "manifest.json")))
    licences = {}
    sources_path = os.path.join(args.devset, "sources.json")
    if os.path.exists(sources_path):
        for s in json.load(open(sources_path)):
            licences[s["repo"]] = s.get("license") or ""
    entries = sorted(manifest, key=lambda e: e["name"])
    if args.limit > 0:
        entries = entries[: args.limit]
    skipped, holdout, rows = [], 0, 0
    with open(args.out, "w") as out:
        for e in entries:
            cand = os.path.join(args.devset, "cands", e["name"])
            task = os.path.join(args.devset, e["task"])
            if not os.path.exists(cand) or not os.path.exists(task):
                skipped.append({"file": e["name"], "why": "candidate or task file missing"})
                continue
            code, reference = open(cand).read(), open(task).read()
            if "```" in code:
                skipped.append({"file": e["name"], "why": "the file holds a code fence"})
                continue
            holdout += bool(e.get("holdout"))
            row = {
                "messages": [
                    {"role": "user", "content": "```python\n" + reference + ("" if reference.endswith("\n") else "\n") + "```\n"},
                    {"role": "assistant", "content": "```python\n" + code + ("" if code.endswith("\n") else "\n") + "```"},
                ],
                "metadata": {
                    "kernel_name": os.path.splitext(os.path.basename(e["task"]))[0],
                    "model": e.get("model", ""),
                    "source": "https://github.com/%s@%s" % (e["source_repo"], e["commit"]),
                    "license": licences.get(e["source_repo"], ""),
                    "pipeline": "kernelbench",
                },
            }
            out.write(json.dumps(row) + "\n")
            rows += 1
    json.dump({"rows": rows, "skipped": skipped, "holdout": holdout, "manifest": len(manifest)}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
