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
}

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
    started = worker.call("time_start", side="candidate", case=1, seed=1000, warmup_ms=0, flush=False)
    assert started["ok"], started  # the patch is made in the first call
    sample = worker.call("time_sample", method="monotonic_clock", seed=5)
    assert sample["ok"] is False and sample["kind"] == "policy_violation", sample
    assert "harness was patched" in sample["message"], sample
