"""Device memory and time of the worker's input digest and modification check
(python/kvault_worker/digest.py) on KernelBench l1_4's input, an 8 GiB float32
matrix: the peak above the inputs must stay near digest.CHUNK * 8 bytes, and the
digest must be the same bit for bit every time and for a strided view.

usage: python3 bench/digest_memory.py [--rows 2048] [--cols 1048576]   (repository root, a GPU)
Prints one JSON line per measurement.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from kvault_worker import digest  # noqa: E402

GIB = float(1 << 30)


def measured(what, fn):
    """Runs fn once; prints its seconds and its peak device memory above the start."""
    torch.cuda.synchronize()
    start = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    began = time.perf_counter()
    value = fn()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    extra = (torch.cuda.max_memory_allocated() - start) / GIB
    print(json.dumps({"what": what, "seconds": round(seconds, 4), "peak_extra_gib": round(extra, 3)}), flush=True)
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--cols", type=int, default=1048576)
    args = parser.parse_args()
    torch.manual_seed(0)
    a = torch.rand(args.rows, args.cols, device="cuda")
    b = torch.rand(args.cols, 1, device="cuda")
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "input_gib": round(a.numel() * a.element_size() / GIB, 3)}), flush=True)
    measured("whole-tensor float64 sum (the former rule)", lambda: torch.sum(a, dtype=torch.float64).item())
    digests = [measured("input_digest", lambda: digest.input_digest([a, b])) for _ in range(3)]
    pristine = a.clone()
    same = measured("same_bits, equal", lambda: digest.same_bits(pristine, a))
    pristine.view(-1)[-1] += 1.0
    differ = measured("same_bits, the last element differs", lambda: digest.same_bits(pristine, a))
    del pristine
    view = a.t()  # strided: read through views, no copy
    strided = measured("input_digest of a transposed view", lambda: digest.input_digest([view]))
    contiguous = view.contiguous()
    print(json.dumps({"digests_equal": len(set(digests)) == 1, "same_bits": [same, differ],
                      "strided_equals_contiguous": strided == digest.input_digest([contiguous])}), flush=True)


if __name__ == "__main__":
    main()
