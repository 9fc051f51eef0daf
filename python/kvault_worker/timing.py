"""The timer: reference and candidate timed by one method, interleaved, per case.

Method per docs/worker-protocol.md ("time"):
- GPU (`cuda_events`): each sample is [L2 flush] start-event, call, end-event,
  device synchronisation; the flush zeroes a buffer of max(2 x L2, 256 MiB)
  (512 MiB on ROCm, whose Infinity Cache of 256 MiB sits behind L2).
- CPU (`monotonic_clock`): [flush: write a 64 MiB buffer] perf_counter_ns around
  the call.
Warm-up alternates reference and candidate calls until `warmup_ms` has passed
(at least one call each). Sampling then alternates ref, cand, ref, cand... until
both have `min_samples`, and continues until `max_samples` each or until
`max_ms` of sampling time has passed. Each case reports medians and IQRs, plus
the host wall time of the samples (informational: from the call until the
device was idle, which includes any flush still running).

The clock functions are captured at import, before candidate code can patch them.
"""
import time

import torch

from kvault_worker import execution
from kvault_worker.digest import pristine_copy
from kvault_worker.errors import RUNTIME_ERROR, TASK_ERROR, attributed

_perf_counter_ns = time.perf_counter_ns
_Event = getattr(torch.cuda, "Event", None)
_event_record = getattr(_Event, "record", None)
_event_elapsed = getattr(_Event, "elapsed_time", None)

MIB = 1 << 20
CPU_FLUSH_BYTES = 64 * MIB
CUDA_MIN_FLUSH_BYTES = 256 * MIB
HIP_MIN_FLUSH_BYTES = 512 * MIB


class Settings:
    def __init__(self, warmup_ms, min_samples, max_samples, max_ms, flush):
        self.warmup_ms = warmup_ms
        self.min_samples = min_samples
        self.max_samples = max_samples
        self.max_ms = max_ms
        self.flush = flush


class Runner:
    """One side of the comparison: `fn(inputs)` on its own inputs. Failures are
    WorkerErrors of `kind` (task_error for the reference, runtime_error for the
    candidate; oom for both when memory runs out)."""

    def __init__(self, fn, inputs, device, kind, label):
        self.fn = fn
        self.inputs = inputs
        self.device = device
        self.kind = kind
        self.label = label
        self.samples = []  # device (or clock) milliseconds
        self.wall = []  # host wall milliseconds

    def invoke(self):
        """One call, not synchronised; returns the output (keep it until synced)."""
        with attributed(self.kind, "%s raised" % self.label):
            with torch.no_grad():
                return self.fn(self.inputs)

    def sync(self):
        with attributed(self.kind, "%s raised" % self.label):
            self.device.synchronize()

    def call(self):
        self.invoke()
        self.sync()


def _now_ms():
    return _perf_counter_ns() / 1e6


class CpuClock:
    method = "monotonic_clock"

    def __init__(self, flush):
        self._buffer = torch.empty(CPU_FLUSH_BYTES, dtype=torch.uint8) if flush else None
        self._fill = 0

    def sample(self, runner):
        if self._buffer is not None:
            self._fill = (self._fill + 1) % 256
            self._buffer.fill_(self._fill)
        t0 = _perf_counter_ns()
        output = runner.invoke()
        ms = (_perf_counter_ns() - t0) / 1e6
        del output
        runner.samples.append(ms)
        runner.wall.append(ms)


class CudaEventClock:
    method = "cuda_events"

    def __init__(self, device, l2_bytes, flush):
        floor = HIP_MIN_FLUSH_BYTES if device.backend == "hip" else CUDA_MIN_FLUSH_BYTES
        self.flush_bytes = max(2 * l2_bytes, floor)
        self._buffer = (torch.empty(self.flush_bytes, dtype=torch.uint8, device=device.torch_device)
                        if flush else None)

    def sample(self, runner):
        if self._buffer is not None:
            self._buffer.zero_()
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
        _event_record(start)
        t0 = _perf_counter_ns()
        output = runner.invoke()
        _event_record(end)
        runner.sync()
        t1 = _perf_counter_ns()
        del output
        runner.samples.append(_event_elapsed(start, end))
        runner.wall.append((t1 - t0) / 1e6)


def make_clock(device, l2_bytes, flush):
    return CudaEventClock(device, l2_bytes, flush) if device.is_gpu else CpuClock(flush)


def measure(clock, reference, candidate, settings):
    """Warm-up, then interleaved samples of both runners (see module doc)."""
    deadline = _now_ms() + settings.warmup_ms
    while True:
        reference.call()
        candidate.call()
        if _now_ms() >= deadline:
            break
    started = _now_ms()
    while True:
        done = len(reference.samples)
        if done >= settings.min_samples and (
                done >= settings.max_samples or _now_ms() - started >= settings.max_ms):
            break
        clock.sample(reference)
        clock.sample(candidate)


def median(values):
    return quantile(values, 0.5)


def quantile(values, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(case_index, reference, candidate):
    row = {"case": case_index}
    for role, runner in (("reference", reference), ("candidate", candidate)):
        row[role + "_ms"] = median(runner.samples)
        row[role + "_samples"] = len(runner.samples)
        row[role + "_iqr_ms"] = quantile(runner.samples, 0.75) - quantile(runner.samples, 0.25)
        row[role + "_wall_ms"] = median(runner.wall)
    return row


def time_cases(task, candidate, case_indices, s, device, l2_bytes, settings):
    """Times every case; returns (method, rows) as the `time` response wants them.

    Each case builds both sides with seed `s` (execution module), makes fresh
    inputs with that seed, and gives the candidate its own copy of them.
    """
    clock = make_clock(device, l2_bytes, settings.flush)
    rows = []
    for index in case_indices:
        case = task.cases[index]
        reference_fn = execution.reference_forward(task, case, s, device)
        candidate_fn = execution.candidate_forward(task, candidate, case, s, device)
        inputs = execution.make_inputs(case, s, device)
        reference = Runner(reference_fn, inputs, device, TASK_ERROR, "the reference forward")
        candidate_runner = Runner(candidate_fn, pristine_copy(inputs), device, RUNTIME_ERROR,
                                  "the candidate's forward")
        measure(clock, reference, candidate_runner, settings)
        rows.append(summary(index, reference, candidate_runner))
        del reference_fn, candidate_fn, inputs, reference, candidate_runner
        device.release_memory()
    return clock.method, rows
