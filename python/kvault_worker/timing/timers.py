"""One timed call, by method (docs/timing.md, "What one sample is").

- events (GPU): start event; the call; a device-wide synchronisation; end event.
  The end event is recorded only after every stream of the device is idle, so
  work a call leaves on side streams is inside the sample (it costs a fixed
  host round trip per sample, reported as the floor).
- graph (GPU): K calls captured once into a CUDA graph (each may read its own
  input set, timing/side.py); a sample is one replay between two events on its
  stream, divided by K (GraphReplay.sample).
- clock (CPU): perf_counter_ns around the call.

Clock functions are captured at import, before candidate code can patch them.
"""
import time

import torch

from kvault_worker.errors import INTERNAL, WorkerError

_perf_counter_ns = time.perf_counter_ns
_process_time_ns = time.process_time_ns
_thread_time_ns = time.thread_time_ns
_Event = getattr(torch.cuda, "Event", None)
_event_record = getattr(_Event, "record", None)
_event_synchronize = getattr(_Event, "synchronize", None)
_event_elapsed = getattr(_Event, "elapsed_time", None)
_CUDAGraph = getattr(torch.cuda, "CUDAGraph", None)
_graph_context = getattr(torch.cuda, "graph", None)
_current_stream = getattr(torch.cuda, "current_stream", None)
_set_stream = getattr(torch.cuda, "set_stream", None)

EVENTS, GRAPH, CLOCK = "cuda_events", "cuda_graph", "monotonic_clock"
# Longer than a device synchronisation takes on an idle device (a few
# microseconds), short enough that device work left behind by a graph replay
# cannot hide in it.
GRAPH_TAIL_MS = 0.05


def now_ms():
    return _perf_counter_ns() / 1e6


class Sample:
    __slots__ = ("ms", "wall_ms", "output", "others_ms")

    def __init__(self, ms, wall_ms, output, others_ms=None):
        self.ms, self.wall_ms, self.output = ms, wall_ms, output
        self.others_ms = others_ms


def clock_sample(call):
    """`call` between two readings of the clock; `others_ms` is the CPU time the
    process's other threads used meanwhile (the reference's is what the engine allows
    a candidate's other threads inside a call: engine/cpu_charge.h)."""
    cpu0, own0 = _process_time_ns(), _thread_time_ns()
    t0 = _perf_counter_ns()
    output = call()
    ms = (_perf_counter_ns() - t0) / 1e6
    others = max(0, (_process_time_ns() - cpu0) - (_thread_time_ns() - own0)) / 1e6
    return Sample(ms, ms, output, others)


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


def burst_ms(call, calls, synchronize):
    """Device time per call of `calls` back-to-back calls between two events on
    the current stream (no synchronisation between calls)."""
    synchronize()
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    _event_record(start)
    for _ in range(calls):
        call()
    _event_record(end)
    _event_synchronize(end)
    synchronize()
    return _event_elapsed(start, end) / calls


class GraphReplay:
    """K calls of `call` captured into one CUDA graph. Construction raises
    GraphUnavailable when capture fails (the call synchronises, allocates in a
    way capture forbids, uses host values, ...); the device is synchronised
    after a failed capture so its error does not leak into later samples."""

    def __init__(self, call, calls, synchronize):
        """`call(i)` makes the i-th call (0 <= i < calls); every call's output is kept
        (`outputs`; `output` is the last)."""
        if _CUDAGraph is None or _graph_context is None:
            raise GraphUnavailable("this PyTorch has no CUDA graphs")
        self.calls = calls
        self.outputs = []
        self._graph = _CUDAGraph()
        stream = _current_stream()
        try:
            with _graph_context(self._graph):
                for i in range(calls):
                    self.outputs.append(call(i))
            synchronize()
        except Exception as e:  # capture rejected: the call is not graph-safe
            self._graph, self.outputs = None, []
            # torch.cuda.graph leaves its capture stream current when ending the
            # capture raises (its __exit__ stops there): later work would go there.
            _set_stream(stream)
            try:
                synchronize()
            except Exception:
                pass
            _repair_generator(stream.device)
            raise GraphUnavailable("graph capture failed: %s: %s" % (type(e).__name__, e)) from None

    def sample(self, synchronize):
        """One replay, divided by K. The sample ends at an event recorded right after
        the replay on the same stream: a graph launch completes only when every node
        of the graph has (captured side streams included), so no host round trip is
        in it. Once that event has completed, a device-wide synchronisation follows:
        on an idle device it returns at once; when it takes longer than
        GRAPH_TAIL_MS, device work was still running after the graph (work the
        graph started outside itself), and the sample runs to a third event
        recorded after it. The host is timed only around that synchronisation, so
        a host thread descheduled by other load while the graph runs does not
        lengthen the sample."""
        start, end = _Event(enable_timing=True), _Event(enable_timing=True)
        _event_record(start)
        t0 = _perf_counter_ns()
        self._graph.replay()
        _event_record(end)
        _event_synchronize(end)
        t_end = _perf_counter_ns()
        synchronize()
        t_idle = _perf_counter_ns()
        ms = _event_elapsed(start, end)
        if (t_idle - t_end) / 1e6 > GRAPH_TAIL_MS:
            idle = _Event(enable_timing=True)
            _event_record(idle)
            _event_synchronize(idle)
            ms = _event_elapsed(start, idle)
        return Sample(ms / self.calls, (t_idle - t0) / 1e6 / self.calls, self.output)

    def replay(self, replays=1):
        """`replays` replays back to back, no synchronisation."""
        for _ in range(replays):
            self._graph.replay()

    @property
    def output(self):
        return self.outputs[-1] if self.outputs else None

    def replay_ms(self, replays, synchronize):
        """Device time per call over `replays` back-to-back replays (no
        synchronisation between them): what sizes the graph."""
        return burst_ms(self._graph.replay, replays, synchronize) / self.calls

    def release(self):
        self._graph, self.outputs = None, []


class GraphUnavailable(Exception):
    pass


def _repair_generator(device):
    """A capture that failed at its end leaves PyTorch's CUDA generator marked as
    capturing (the capture's epilogue never ran), and every later random op on the
    device raises "Offset increment outside graph capture encountered unexpectedly":
    the inputs of the next run could not be made. One small capture that succeeds
    runs the prologue and the epilogue again. Raises (an internal error of the
    worker, not the candidate's) when the generator is still unusable after it."""
    try:
        buffer = torch.zeros(1, device=device)
        repair = _CUDAGraph()
        with _graph_context(repair):
            buffer.add_(1.0)
        del repair
        torch.randn(1, device=device)
    except Exception as e:
        raise WorkerError(INTERNAL, "the device's random generator is unusable after a failed graph "
                                    "capture: %s: %s" % (type(e).__name__, e)) from None
