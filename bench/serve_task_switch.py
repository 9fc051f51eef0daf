#!/usr/bin/env python3
"""What a lane's turn to another task costs in `kvault serve`, whose reference workers
each run one task's code (docs/threat-model.md, "Task code of one client"): the same
candidates verified in two orders, task by task (a lane keeps its reference worker)
and alternating (a new reference worker at every candidate). Each verification gets
its own run name, so none is answered from the store; the server has a cache of its
own, warm after a first pass that is not recorded.

    source scripts/env.sh
    python3 bench/serve_task_switch.py [--backend cpu] [--repeat 4] [--out results.json]

Prints the median seconds per verification and of its phases in both orders; the
difference is the switch. On a GPU add `--backend cuda` (the new worker's CUDA
context is the larger part there).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from kernelvault import Client  # noqa: E402

PAIRS = {"cpu": [("relu", "native/cpu/relu.cpp"), ("vector_add", "native/cpu/vector_add.cpp")],
         "cuda": [("softmax", "cuda/softmax.cu"), ("vector_add", "cuda/vector_add.cu")]}


def start(folder, backend):
    # A cache of its own: the device's timing lock lives in the cache, and another
    # process timing on the same cache would add its waits to these numbers.
    env = dict(os.environ, KVAULT_CACHE_DIR=str(folder / "cache"))
    process = subprocess.Popen([str(ROOT / "build" / "kvault"), "serve", "--backend", backend, "--port", "0",
                                "--lanes-per-device", "1", "--db", str(folder / "s.db")],
                               stdout=subprocess.PIPE, stderr=open(folder / "serve.log", "w"), text=True, env=env)
    first = {}
    reader = threading.Thread(target=lambda: first.setdefault("line", process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=300)
    if not first.get("line"):
        process.kill()
        sys.exit("kvault serve did not start: %s" % (folder / "serve.log").read_text()[-2000:])
    return process, json.loads(first["line"])["listening"]


def one_pass(client, order, tag):
    rows = []
    for i, (task, candidate) in enumerate(order):
        t = time.monotonic()
        r = client.verify({"task_source": task, "code": candidate, "run": "%s-%d" % (tag, i)})
        rows.append({"status": r["status"], "seconds": time.monotonic() - t,
                     "phases": {k: v for k, v in (r.get("phases") or {}).items() if isinstance(v, (int, float))}})
    return rows


def summary(rows):
    phases = sorted({k for r in rows for k in r["phases"]})
    return {"seconds": statistics.median(r["seconds"] for r in rows),
            "phases": {k: statistics.median(r["phases"].get(k, 0.0) for r in rows) for k in phases},
            "statuses": sorted({r["status"] for r in rows})}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="cpu", choices=sorted(PAIRS))
    p.add_argument("--repeat", type=int, default=4)
    p.add_argument("--out")
    a = p.parse_args()
    tasks = [((ROOT / "examples/suite" / (t + ".py")).read_text(), (ROOT / "examples" / c).read_text())
             for t, c in PAIRS[a.backend]]
    grouped = [tasks[0]] * a.repeat + [tasks[1]] * a.repeat
    alternating = [tasks[i % 2] for i in range(2 * a.repeat)]
    with tempfile.TemporaryDirectory() as d:
        process, url = start(Path(d), a.backend)
        try:
            client = Client(url)
            one_pass(client, alternating, "warm")  # builds and reference outputs cached
            result = {"backend": a.backend, "repeat": a.repeat,
                      "task_by_task": summary(one_pass(client, grouped, "grouped")),
                      "alternating": summary(one_pass(client, alternating, "alternating"))}
        finally:
            process.terminate()
            process.wait(timeout=120)
    result["switch_s"] = result["alternating"]["seconds"] - result["task_by_task"]["seconds"]
    text = json.dumps(result, indent=1, sort_keys=True)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
