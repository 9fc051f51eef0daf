#!/usr/bin/env python3
"""Where a verification's worker time goes, one stage at a time, in one process with
no other load (BENCHMARKS.md, "Throughput"):

1. `run` (the correctness run of checked_run.py: three candidate calls, digests,
   captured outputs written to files), N times under cProfile, for the example
   suite's relu task (2048 x 1024 fp32) and a KernelBench-format candidate that
   calls torch.relu. Prints seconds per run and the top functions.
2. Timing of the same task, reference and candidate both torch.relu, with the
   engine's stopping rule: wall seconds, rounds, stop reason and graph size, for
   graph capture sized from the warm-up's call time (before) and from a measured
   replay (now), each with warm-ups of 100 ms and 10 ms.

  python3 bench/stage_profile.py            # on the GPU
  python3 bench/stage_profile.py --cpu      # anywhere (smoke test)

Writes $OUT/stage_profile.json and $OUT/stage_profile.txt.
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402

from kvault_worker.device import device_info, l2_bytes  # noqa: E402
from kvault_worker.errors import RUNTIME_ERROR  # noqa: E402
from kvault_worker.session import Session  # noqa: E402
from kvault_worker.timing import rounds, stats, timers  # noqa: E402
from kvault_worker.timing.side import GRAPH_TARGET_MS, TimedSide  # noqa: E402

CANDIDATE = """import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
"""


def profile_runs(backend, runs, text):
    folder = Path(tempfile.mkdtemp(prefix="kv-stage-"))
    cand = folder / "relu_new.py"
    cand.write_text(CANDIDATE)
    s = Session()
    s.hello({"op": "hello", "backend": backend})
    s.load({"op": "load", "task": str(ROOT / "examples/suite/relu.py"),
            "candidate": {"path": str(cand), "format": "kernelbench"}})
    per_case = {}
    for case in range(3):
        s.run({"op": "run", "case": case, "seed": 1, "out": str(folder / "o.kvt"),
               "repeat_out": str(folder / "r.kvt")})  # first call of each case: warm
        t0 = time.perf_counter()
        for i in range(runs):
            s.run({"op": "run", "case": case, "seed": 1 + i, "out": str(folder / ("o%d_%d.kvt" % (case, i))),
                   "repeat_out": str(folder / ("r%d_%d.kvt" % (case, i)))})
        per_case[case] = (time.perf_counter() - t0) / runs
    prof = cProfile.Profile()
    prof.enable()
    for i in range(runs):
        s.run({"op": "run", "case": 0, "seed": 100 + i, "out": str(folder / ("p%d.kvt" % i)),
               "repeat_out": str(folder / ("q%d.kvt" % i))})
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(22)
    text.append("== run: seconds per run, by case: %s" % per_case)
    text.append(buf.getvalue())
    return per_case


def timing_sequence(device, warmup_ms, sized_by_replay):
    x = torch.randn(2048, 1024, device=device.torch_device)
    fn = lambda inputs: torch.relu(inputs[0])  # noqa: E731
    t0 = time.perf_counter()
    sides = [TimedSide(fn, [x], device, RUNTIME_ERROR, "side %d" % i, flush=True,
                       l2_bytes=l2_bytes(device), arch=device_info(device)["arch"]) for i in range(2)]
    for side in sides:
        side.warm_up(warmup_ms)
    method = timers.CLOCK
    if device.is_gpu:
        method = timers.GRAPH
        for side in sides:
            if sized_by_replay:
                why = side.prepare_graph()
            else:  # as before: K from the warm-up's call time (host round trip included)
                calls = max(1, min(1000, int(GRAPH_TARGET_MS / max(side.call_ms, 1e-4))))
                side.graph, why = timers.GraphReplay(side._call, calls, device.synchronize), None
            if why:
                method = timers.EVENTS
    rule = stats.StoppingRule(min_samples=10, max_samples=100, min_ms=20, max_ms=2000, noise_target=0.005)
    out = rounds.measure(sides, rule, method, batch=5)
    seconds = time.perf_counter() - t0
    row = {"warmup_ms": warmup_ms, "graph_sized_by": "replay" if sized_by_replay else "call_ms",
           "seconds": seconds, "rounds": out["rounds"], "stop": out["stop"], "method": method,
           "call_ms": sides[0].call_ms,
           "graph_calls": sides[0].graph.calls if sides[0].graph is not None else None,
           "ms": [side["ms"] for side in out["sides"]], "noise": [side["noise"] for side in out["sides"]],
           "samples": [side["samples"] for side in out["sides"]]}
    for side in sides:
        side.release()
    return row


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench-out"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    backend = "cpu" if args.cpu else "cuda"
    text = []
    result = {"torch": torch.__version__, "backend": backend}
    result["run_seconds_by_case"] = profile_runs(backend, args.runs, text)
    from kvault_worker.device import open_device
    device = open_device(backend, 0)
    result["timing"] = []
    for sized_by_replay in (False, True):
        for warmup_ms in (100, 10):
            for _ in range(2):
                row = timing_sequence(device, warmup_ms, sized_by_replay)
                result["timing"].append(row)
                text.append("== timing: %s" % json.dumps(row))
    (out / "stage_profile.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "stage_profile.txt").write_text("\n".join(text) + "\n")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
