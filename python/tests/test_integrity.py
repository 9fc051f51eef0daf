"""The harness integrity snapshot (integrity.py) against candidates that patch the
worker in its own process: an alias of a clock in a worker module, a method of the
live protocol channel, the session's table of handlers, and patches that rebind no name
of a worker module: a function's code or defaults swapped, a method of a worker class
replaced or added."""
import textwrap

import pytest

from conftest import write_file

TASK = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(64)]
def get_cases():
    return [{"name": "a", "get_inputs": get_inputs},
            {"name": "b", "kind": "performance", "get_inputs": get_inputs}]
"""

PATCHES = {
    "clock-alias": """
        import kvault_worker.timing.timers as timers
        real = timers._perf_counter_ns
        timers._perf_counter_ns = lambda: real() // 10
""",
    "channel-send": """
        import sys
        frame = sys._getframe()
        while "channel" not in frame.f_locals:  # up to the request loop
            frame = frame.f_back
        channel = frame.f_locals["channel"]
        real = channel.send
        channel.send = lambda response, real=real: real(response)
""",
    "handler-table": """
        import sys
        frame = sys._getframe()
        while "session" not in frame.f_locals:
            frame = frame.f_back
        handlers = frame.f_locals["session"].handlers
        real = handlers["time_sample"]
        handlers["time_sample"] = lambda request, real=real: real(request)
""",
    # Patches that rebind no name the worker's modules bind:
    "code-swap": """
        import kvault_worker.digest as digest
        def nothing_modified(pristine, current):
            return []
        digest.modified_inputs.__code__ = nothing_modified.__code__
""",
    "class-method": """
        from kvault_worker.timing.side import TimedSide
        TimedSide.flush = lambda self: None
""",
    "method-added": """
        from kvault_worker.session.timed import TimedRequests
        TimedRequests._require_device = lambda self: None  # hides SessionState's
""",
    "defaults": """
        import kvault_worker.request_fields as fields
        fields.integer.__defaults__ = tuple(list(fields.integer.__defaults__))
""",
    # What the worker looks up at call time while a sample's inputs are drawn and copied,
    # before the clock: a builtin, the seeding functions, a dunder of torch.Tensor.
    "builtin": """
        import builtins
        real = builtins.zip
        builtins.zip = lambda *iterables: real(*iterables)
""",
    "seeding": """
        import random
        real = random.seed
        random.seed = lambda *args, **kwargs: real(*args, **kwargs)
""",
    "tensor-dunder": """
        torch.Tensor.__getattribute__ = torch._C._TensorBase.__getattribute__
""",
    # What the task's get_inputs looks up: a stand-in for the task module's `torch`.
    "task-globals": """
        import gc, types
        for f in gc.get_objects():
            if isinstance(f, types.FunctionType) and f.__name__ == "get_inputs" and "Model" in f.__globals__:
                f.__globals__["torch"] = types.SimpleNamespace(randn=f.__globals__["torch"].randn)
""",
    # A kernel of one of PyTorch's operators replaced through the dispatcher (the
    # flush's fill_): no Python name changes at all.
    "dispatcher-kernel": """
        from torch.library import Library
        library = Library("aten", "IMPL")
        library.impl("fill_.Scalar", lambda self, value: self, "AutogradCPU")
        PATCHED.append(library)
""",
}

# Registered once the warm-up is over (past its check of every operator), when the
# test says so: the next sample's check of the sample path's operators finds it.
LATE = """
import os, torch, torch.nn as nn
from torch.library import Library
KEPT = []
class ModelNew(nn.Module):
    def forward(self, x):
        if not KEPT and os.path.exists(%r):
            library = Library("aten", "IMPL")
            library.impl("copy_", lambda self, src, non_blocking=False: self, "AutogradCPU")
            KEPT.append(library)
        return torch.relu(x)
"""


def test_a_kernel_registered_after_the_warm_up_is_caught_by_the_next_sample(worker, tmp_path):
    task = write_file(tmp_path, "task.py", TASK)
    flag = str(tmp_path / "register-now")
    cand = write_file(tmp_path, "cand.py", LATE % flag)
    assert worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})["ok"]
    started = worker.call("time_start", side="candidate", case=1, seed=1000, warmup_ms=0, flush=False)
    assert started["ok"], started
    open(flag, "w").close()
    sample = worker.call("time_sample", method="monotonic_clock", seed=5)
    assert sample["ok"] is False and sample["kind"] == "policy_violation", sample
    assert "aten::copy_" in sample["message"], sample


CANDIDATE = """
import torch, torch.nn as nn
PATCHED = []
class ModelNew(nn.Module):
    def forward(self, x):
        if not PATCHED:
            PATCHED.append(1)
%s
        return torch.relu(x)
"""


@pytest.mark.parametrize("patch", sorted(PATCHES))
def test_a_patched_worker_is_a_policy_violation(worker, tmp_path, patch):
    task = write_file(tmp_path, "task.py", TASK)
    body = textwrap.indent(textwrap.dedent(PATCHES[patch]).strip("\n"), " " * 12)
    cand = write_file(tmp_path, "cand.py", CANDIDATE % body)
    loaded = worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})
    assert loaded["ok"], loaded
    # The patch is made in the first call: the warm-up's check (time_start warms up
    # with warmup_ms) or the sample's finds it.
    started = worker.call("time_start", side="candidate", case=1, seed=1000, warmup_ms=0, flush=False)
    sample = worker.call("time_sample", method="monotonic_clock", seed=5) if started["ok"] else started
    assert sample["ok"] is False and sample["kind"] == "policy_violation", sample
    assert "harness was patched" in sample["message"], sample


def test_guarded_timing_objects_and_interpreter_hooks():
    """What runs between the samples, where no clock looks: a guarded object's method
    hidden, its buffer swapped or pointed elsewhere in place, its class changed; a
    profile function, a signal handler or a garbage-collector callback installed."""
    import gc
    import signal
    import sys

    import torch

    from kvault_worker import integrity
    from kvault_worker.timing.flush import Flusher

    snapshot = integrity.Snapshot()
    snapshot.settle()
    flusher = Flusher(1 << 16, "cpu")
    snapshot.guard("flusher", flusher, ("_buffer", "nbytes"))
    assert snapshot.changes() == []

    flusher.flush = lambda: None
    assert snapshot.changes() == ["flusher.flush"]
    del flusher.flush
    real = flusher._buffer
    flusher._buffer = torch.empty(1, dtype=torch.uint8)
    assert snapshot.changes() == ["flusher._buffer"]
    flusher._buffer = real
    with torch.no_grad():
        real.set_(torch.empty(1, dtype=torch.uint8))
    assert snapshot.changes() == ["flusher._buffer"]

    class Quiet(Flusher):
        def flush(self):
            pass
    other = Flusher(1 << 10, "cpu")
    snapshot.guard("flusher", other, ("_buffer",))
    other.__class__ = Quiet
    assert snapshot.changes() == ["flusher.__class__"]
    snapshot.unguard("flusher")

    def hook(*args):
        return None
    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        assert "sys.getprofile()" in snapshot.changes()
    finally:
        sys.setprofile(previous)
    gc.callbacks.append(hook)
    try:
        assert snapshot.changes() == ["gc.callbacks"]
    finally:
        gc.callbacks.remove(hook)
    old = signal.signal(signal.SIGUSR2, hook)
    try:
        assert snapshot.changes() == ["signal %d handler" % signal.SIGUSR2]
    finally:
        signal.signal(signal.SIGUSR2, old)
    assert snapshot.changes() == []


def test_kernels_registered_for_pytorchs_operators():
    """A kernel registered for an operator that existed when the snapshot settled runs
    wherever the worker dispatches it (the copy of a sample's inputs, the flush): a
    change until it is removed again; an operator of the candidate's own is none."""
    import torch

    from kvault_worker import integrity

    snapshot = integrity.Snapshot()
    snapshot.settle()
    assert snapshot.kernel_changes() == []
    x = torch.randn(32, 32)
    torch.relu(x @ x).sum().item()  # PyTorch's own work registers nothing
    assert snapshot.kernel_changes() == []

    own = torch.library.Library("kvault_integrity_test", "DEF")
    own.define("twice(Tensor x) -> Tensor")
    own.impl("twice", lambda t: t * 2, "CPU")
    assert snapshot.kernel_changes() == []

    library = torch.library.Library("aten", "IMPL")
    library.impl("copy_", lambda self, src, non_blocking=False: self, "AutogradCPU")
    assert snapshot.kernel_changes() == ["the dispatcher's kernels of aten::copy_"]
    assert snapshot.changes() == []  # no Python name changed: only this check sees it
    assert snapshot.kernel_changes(integrity.SAMPLE_PATH_OPS) == ["the dispatcher's kernels of aten::copy_"]
    assert snapshot.kernel_changes(["aten::relu"]) == []
    del library
    import gc
    gc.collect()
    assert snapshot.kernel_changes() == []


def test_the_collector_is_paused_from_a_flush_to_the_clock():
    """No finalizer of the candidate's garbage runs between a flush and the timed call:
    one that did took a sample's fresh inputs from the worker's frame and computed the
    answer before the clock (relu.gc-finalizer)."""
    import gc

    import torch

    from kvault_worker.device import open_device
    from kvault_worker.timing import timers
    from kvault_worker.timing.side import TimedSide

    seen = []
    device = open_device("cpu", 0)

    def forward(inputs):
        seen.append(gc.isenabled())
        return torch.relu(inputs[0])

    side = TimedSide(forward, [torch.randn(8)], device, "runtime_error", "the candidate", flush=True,
                     make_inputs=lambda seed: [torch.randn(8, generator=torch.Generator().manual_seed(seed))])
    try:
        side.flush()
        assert not gc.isenabled()  # until the sample's clock starts
        side.sample(timers.CLOCK, seed=7)
        assert seen[-1] is True and gc.isenabled()
    finally:
        side.release()
        gc.enable()


def test_data_added_to_torch_tensor_is_no_change():
    """Reading `torch.Tensor.__annotations__` (typing, dataclasses, TorchScript) adds it
    to the class: data, not code, so no change; a method defined there is one."""
    import torch

    from kvault_worker import integrity

    snapshot = integrity.Snapshot()
    snapshot.settle()
    torch.Tensor.__annotations__
    assert snapshot.changes() == []
    torch.Tensor.__del__ = lambda self: None
    try:
        assert snapshot.changes() == ["torch.Tensor.__del__"]
    finally:
        del torch.Tensor.__del__
    assert snapshot.changes() == []


# Weak references, with callbacks, to the worker's copies of kept samples: the copy of
# sample 0 is dropped at the start of the next round's sample 0, before its clock.
WEAK = """
import sys, weakref, torch, torch.nn as nn
REFS = []
class ModelNew(nn.Module):
    def forward(self, x):
        frame = sys._getframe()
        while frame is not None and frame.f_code.co_name != "time_sample":
            frame = frame.f_back
        if frame is not None:
            for kept in frame.f_locals["timed"].kept_samples.values():
                REFS.append(weakref.ref(kept, lambda ref: None))
        return torch.relu(x)
"""


def test_a_weak_reference_to_a_kept_sample_is_a_policy_violation(worker, tmp_path):
    task = write_file(tmp_path, "task.py", TASK)
    cand = write_file(tmp_path, "cand.py", WEAK)
    assert worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})["ok"]
    assert worker.call("time_start", side="candidate", case=1, seed=1000, warmup_ms=0, flush=False)["ok"]
    for seed, keep in ((5, 0), (6, 1)):
        sample = worker.call("time_sample", method="monotonic_clock", seed=seed, keep_as=keep)
        assert sample["ok"], sample
    sample = worker.call("time_sample", method="monotonic_clock", seed=7, keep_as=0)
    assert sample["ok"] is False and sample["kind"] == "policy_violation", sample
    assert "weak reference" in sample["message"], sample
