"""One timed call, by method (docs/timing.md, "What one sample is").

- events (GPU): start event; the call; a device-wide synchronisation; end event.
  The end event is recorded only after every stream of the device is idle, so
  work a call leaves on side streams is inside the sample (it costs a fixed
  host round trip per sample, reported as the floor).
- graph (GPU): K calls captured once into a CUDA graph; a sample is one replay,
  bracketed like `events`, divided by K.
- clock (CPU): perf_counter_ns around the call.

Clock functions are captured at import, before candidate code can patch them.
"""
import time

import torch

_perf_counter_ns = time.perf_counter_ns
_Event = getattr(torch.cuda, "Event", None)
_event_record = getattr(_Event, "record", None)
_event_synchronize = getattr(_Event, "synchronize", None)
_event_elapsed = getattr(_Event, "elapsed_time", None)
_CUDAGraph = getattr(torch.cuda, "CUDAGraph", None)
_graph_context = getattr(torch.cuda, "graph", None)

EVENTS, GRAPH, CLOCK = "cuda_events", "cuda_graph", "monotonic_clock"


def now_ms():
    return _perf_counter_ns() / 1e6


class Sample:
    __slots__ = ("ms", "wall_ms", "output")

    def __init__(self, ms, wall_ms, output):
        self.ms, self.wall_ms, self.output = ms, wall_ms, output


def clock_sample(call):
    t0 = _perf_counter_ns()
    output = call()
    ms = (_perf_counter_ns() - t0) / 1e6
    return Sample(ms, ms, output)


def event_sample(call, synchronize):
    """`call` then `synchronize` (device-wide) between two events."""
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    _event_record(start)
    t0 = _perf_counter_ns()
    output = call()
    synchronize()
    t1 = _perf_counter_ns()
    _event_record(end)
    _event_synchronize(end)
    return Sample(_event_elapsed(start, end), (t1 - t0) / 1e6, output)


class GraphReplay:
    """K calls of `call` captured into one CUDA graph. Construction raises
    GraphUnavailable when capture fails (the call synchronises, allocates in a
    way capture forbids, uses host values, ...); the device is synchronised
    after a failed capture so its error does not leak into later samples."""

    def __init__(self, call, calls, synchronize):
        if _CUDAGraph is None or _graph_context is None:
            raise GraphUnavailable("this PyTorch has no CUDA graphs")
        self.calls = calls
        self.output = None
        self._graph = _CUDAGraph()
        try:
            with _graph_context(self._graph):
                for _ in range(calls):
                    self.output = call()
            synchronize()
        except Exception as e:  # capture rejected: the call is not graph-safe
            self._graph = self.output = None
            try:
                synchronize()
            except Exception:
                pass
            raise GraphUnavailable("graph capture failed: %s: %s" % (type(e).__name__, e)) from None

    def sample(self, synchronize):
        s = event_sample(self._graph.replay, synchronize)
        return Sample(s.ms / self.calls, s.wall_ms / self.calls, self.output)

    def release(self):
        self._graph = self.output = None


class GraphUnavailable(Exception):
    pass
