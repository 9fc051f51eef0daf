#!/usr/bin/env python3
"""Writes a batch of KernelBench-format candidates for the fault-tolerance test.

usage: make_fault_batch.py OUT_DIR EXPECTED_TSV [--count N]

Candidates are for examples/suite/relu.py and vector_add.py, named
<task>.<kind>-<n>.py, and each carries a unique comment so that no two share a hash.
EXPECTED_TSV lists "<file>\t<kind>\t<allowed statuses, comma-separated>".
At least 20% are hostile: they crash, hang, fork, leak memory, write huge files or
attack the worker's protocol descriptors.
"""
import argparse
import os

FORWARD = {"relu": ("x", "torch.relu(x)"), "vector_add": ("a, b", "a + b")}

# kind -> (share of the batch, allowed statuses, body of forward before the return)
KINDS = {
    "correct": (0.40, "passed", ""),
    "wrong": (0.20, "mismatch", "RESULT = RESULT * 0.5 + 1.0"),
    "raises": (0.10, "runtime_error", "raise ValueError('candidate gave up')"),
    "segfault": (0.04, "crash", "os.kill(os.getpid(), signal.SIGSEGV)"),
    "nullderef": (0.03, "crash", "ctypes.string_at(0)"),
    "exit": (0.03, "crash", "os._exit(3)"),
    "sleep": (0.025, "timeout", "time.sleep(3600)"),
    "spin": (0.025, "timeout", "while True: pass"),
    # Children leave the process group and sleep; the worker then hangs.
    "forkescape": (0.02, "timeout",
                   "for _ in range(64):\n"
                   "            if os.fork() == 0:\n"
                   "                os.setsid(); time.sleep(3600); os._exit(0)\n"
                   "        time.sleep(3600)"),
    # Every process forks again, 5 generations deep (32 processes), then spins.
    "forktree": (0.02, "timeout",
                 "for _ in range(5):\n"
                 "            os.fork()\n"
                 "        while True: pass"),
    # RLIMIT_AS ends it (MemoryError -> oom, or a crash); on a loaded machine the
    # run timeout may come first.
    "leak": (0.03, "oom,crash,timeout",
             "hoard = []\n"
             "        while True: hoard.append(bytearray(64 << 20))"),
    # RLIMIT_FSIZE: the write fails with EFBIG (or the run timeout comes first).
    "hugefile": (0.03, "runtime_error,timeout",
                 "with open('huge.bin', 'wb') as f:\n"
                 "            while True: f.write(b'x' * (1 << 24))"),
    # A broken protocol is the candidate's fault: crash, never infra_error.
    "closefds": (0.025, "crash", "os.closerange(3, 4096)"),
    "forgefds": (0.025, "crash",
                 "for fd in range(3, 4096):\n"
                 "            try: os.write(fd, b'{\"id\": 1, \"ok\": true}\\n')\n"
                 "            except OSError: pass"),
}

TEMPLATE = """# fault-batch candidate {n}: {kind}
import ctypes, os, signal, time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, {args}):
        RESULT = {expr}
        {body}
        return RESULT
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("expected")
    ap.add_argument("--count", type=int, default=1000)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows, n = [], 0
    tasks = sorted(FORWARD)
    for kind, (share, allowed, body) in KINDS.items():
        for _ in range(max(1, round(share * a.count))):
            task = tasks[n % len(tasks)]
            args, expr = FORWARD[task]
            name = f"{task}.{kind}-{n:04d}.py"
            with open(os.path.join(a.out, name), "w") as f:
                f.write(TEMPLATE.format(n=n, kind=kind, args=args, expr=expr, body=body or "pass"))
            rows.append(f"{name}\t{kind}\t{allowed}")
            n += 1
    with open(a.expected, "w") as f:
        f.write("\n".join(rows) + "\n")
    hostile = sum(1 for r in rows if r.split("\t")[1] not in ("correct", "wrong", "raises"))
    print(f"{len(rows)} candidates, {hostile} hostile ({100 * hostile / len(rows):.0f}%)")


if __name__ == "__main__":
    main()
