"""Device memory one side of a timing holds, per byte of its case's inputs: what the
engine's memory lease counts for timing (TimingFootprintBytes, src/engine/timed_case.h:
9 bytes per input byte for both sides and the reference's hand-over buffer, plus kept
sample outputs and graphs). Drives the worker's own requests in this process, on the
reference side (a candidate's honest side runs the same code), as a turn sends them:
time_start, time_warmup, time_graph, a round of flushed and warm samples (outputs kept
on the device, as for cases compared there), time_finish with the re-check's call.

usage: python3 bench/timing_memory.py [--elements 268435456] [--op relu|matmul]   (repository root, a GPU)
       (--backend cpu runs the same requests with no memory to measure: a check of the script)
Prints one JSON line per request: the peak of PyTorch's allocated memory above what was
allocated before the timing, in input bytes, and at the end the largest.
"""
import argparse
import json
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from kvault_worker.session import Session  # noqa: E402

TASK = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return {expr}

def get_inputs():
    return [torch.randn({shape})]

def get_init_inputs():
    return []
'''


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=1 << 28)  # 1 GiB of float32
    parser.add_argument("--op", choices=("relu", "matmul"), default="relu")
    parser.add_argument("--batch", type=int, default=5)  # TimingSettings::batch
    parser.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    args = parser.parse_args()
    side = int(args.elements ** 0.5) if args.op == "matmul" else args.elements
    expr, shape = ("torch.relu(x)", "%d" % args.elements) if args.op == "relu" else ("x @ x", "%d, %d" % (side, side))
    folder = tempfile.mkdtemp(prefix="kvault-timing-memory-")
    task = os.path.join(folder, "task.py")
    with open(task, "w") as f:
        f.write(TASK.format(expr=expr, shape=shape))
    session = Session()
    session.handlers["hello"]({"backend": args.backend, "environment": False})
    gpu = args.backend == "cuda"
    allocated = torch.cuda.memory_allocated if gpu else (lambda: 0)
    peak = torch.cuda.max_memory_allocated if gpu else (lambda: 0)
    base = allocated()
    input_bytes = (side * side if args.op == "matmul" else args.elements) * 4
    worst = 0.0

    def ask(op, **fields):
        nonlocal worst
        if gpu:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        reply = session.handlers[op](dict(fields, op=op))
        if gpu:
            torch.cuda.synchronize()
        per_byte = (peak() - base) / input_bytes
        worst = max(worst, per_byte)
        print(json.dumps({"op": op, "peak_per_input_byte": round(per_byte, 3),
                          "held_after_per_input_byte": round((allocated() - base) / input_bytes, 3),
                          "graph": reply.get("graph_calls", reply.get("graph_failed"))}), flush=True)
        return reply

    ask("time_start", side="reference", task=task, case=0, seed=1000, flush=True, graph_below_ms=0.5)
    ask("time_warmup", warmup_ms=100)
    method = "cuda_graph" if "graph_calls" in ask("time_graph") else "cuda_events" if gpu else "monotonic_clock"
    # Kept on the device as the engine keeps them: a round's outputs (as large as the
    # inputs here) within kKeptSampleBytes (src/engine/timed_case.cc), else not compared.
    keep = gpu and 2 * args.batch * input_bytes <= 8 << 30
    for i in range(2 * args.batch):
        if i < args.batch:
            ask("time_flush")
        ask("time_sample", method=method, seed=12345 + i, **({"keep_as": i} if keep else {}))
    ask("time_finish", out=os.path.join(folder, "recheck.kvt"), keep=False)
    print(json.dumps({"input_bytes": input_bytes, "op": args.op, "method": method, "outputs_kept": keep,
                      "largest_peak_per_input_byte": round(worst, 3)}), flush=True)


if __name__ == "__main__":
    main()
