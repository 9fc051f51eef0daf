"""Cost of the timing path's guards (docs/timing.md, "No candidate code where no clock
looks"): the harness check after every sample and flush, with and without the guarded
objects and the interpreter's hooks; a flush with its check; a graph sample's input
sets with the pool made anew from the sample's seed (make_inputs x 4) against the pool
reused; an output's capture, which copies it right when the call returns; the
policy's judgement of a trace at every depth against the outermost only, and the
fused policy's data flow over the same trace.

usage: python3 bench/timing_guard_cost.py      (from the repository root; GPU if any)
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from kvault_worker import integrity, op_policy  # noqa: E402
from kvault_worker.device import Device  # noqa: E402
from kvault_worker import protocol, session  # noqa: E402,F401  (every worker module imported)
from kvault_worker.timing import side as side_module  # noqa: E402
from kvault_worker.timing.flush import cpu_flush_bytes, gpu_flush_bytes  # noqa: E402


def per_call_ms(fn, n, device=None):
    fn()
    started = time.perf_counter()
    for _ in range(n):
        fn()
    if device is not None:
        device.synchronize()
    return (time.perf_counter() - started) / n * 1e3


def main():
    gpu = torch.cuda.is_available()
    device = Device("hip" if torch.version.hip else "cuda", 0) if gpu else Device("cpu", 0)
    dev = device.torch_device
    print("torch %s on %s" % (torch.__version__, torch.cuda.get_device_name(0) if gpu else "cpu"))
    snapshot = integrity.SNAPSHOT
    snapshot.settle()

    def make_inputs(seed):
        g = torch.Generator(device=dev).manual_seed(int(seed) % (1 << 62))
        return [torch.randn(1024, 1024, generator=g, device=dev)]
    nbytes = gpu_flush_bytes("cuda", torch.cuda.get_device_properties(0).L2_cache_size, "") if gpu \
        else cpu_flush_bytes()
    side = side_module.TimedSide(torch.relu, make_inputs(1), device, "runtime_error", "bench", True,
                                 make_inputs=make_inputs)
    assert snapshot.changes() == []
    full = per_call_ms(snapshot.changes, 200)
    guarded, hooks, spaces = dict(snapshot.guarded), integrity._hook_changes, dict(snapshot.namespaces)
    snapshot.guarded.clear()
    snapshot.namespaces.clear()
    integrity._hook_changes = lambda before, callbacks: []
    bare = per_call_ms(snapshot.changes, 200)
    snapshot.guarded.update(guarded)
    snapshot.namespaces.update(spaces)
    integrity._hook_changes = hooks
    print("harness check (after every sample, flush, warm-up, capture): %.3f ms; without the guards, "
          "hooks and torch's %d callables %.3f ms" % (full, len(spaces), bare))
    flush = per_call_ms(side.flush, 10, device)
    checked = per_call_ms(lambda: (side.flush(), snapshot.changes()), 10, device)
    print("flush of %d MiB: %.2f ms; with its check %.2f ms" % (nbytes >> 20, flush, checked))

    sets = side_module.GraphInputs(side.inputs, make_inputs, 100, device)
    reused = per_call_ms(lambda: sets.refresh(7, remake=False), 20, device)
    remade = per_call_ms(lambda: sets.refresh(7), 20, device)
    print("graph input sets of 100 calls (1024x1024 fp32): pool reused %.2f ms, made from the seed %.2f ms"
          % (reused, remade))

    from kvault_worker.tensorbytes import host_contiguous
    from kvault_worker.tensorfile import capture
    out = torch.randn(1 << 20, device=dev)
    before = per_call_ms(lambda: host_contiguous(out), 50, device)
    after = per_call_ms(lambda: capture(out), 50, device)
    print("capture of a 4 MiB output: %.3f ms (a host copy of the memory, every time) against %.3f ms "
          "for the host tensor alone (on the CPU: no copy)" % (after, before))

    a = torch.randn(64, 64)
    with op_policy.ProcessOperators() as ops:
        for _ in range(300):
            a.t().contiguous().view(-1)
    every = per_call_ms(ops.forbidden, 20)
    outer = per_call_ms(ops.outermost, 20)
    from kvault_worker.fused import flow
    fused = per_call_ms(lambda: flow(ops.nodes), 20)
    print("policy judgement of a trace of %d operators: every depth %.2f ms, outermost only %.2f ms; "
          "the fused policy's data flow %.2f ms" % (len(ops.nodes), every, outer, fused))


if __name__ == "__main__":
    main()
