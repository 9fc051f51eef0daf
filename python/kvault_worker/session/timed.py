"""The timing requests, time_start to time_finish (docs/timing.md), which both
workers answer, each for its own side: time_start's `side` says which, and the
side is built by that role's part (ReferenceRole._start_reference_side,
CandidateRole._start_candidate_side). Between them every request works on the
one TimedSide the worker holds (timing/side.py); time_finish hands its last
output over by the role's way (the reference offers it, the candidate delivers
it) and keeps a reference side for the next candidate when asked. Outputs of
timed samples go to files (`out`) or are kept on the device (`keep_as`) until the
engine, after the round, asks for the ones it compares (time_output), handed over
the same way.
"""
import weakref

from kvault_worker import execution
from kvault_worker import request_fields as fields
from kvault_worker.aliasing import output_aliases
from kvault_worker.checked_run import captured, check_integrity, device_copy
from kvault_worker.device import device_info, l2_bytes
from kvault_worker.digest import input_digest
from kvault_worker.errors import POLICY_VIOLATION, RUNTIME_ERROR, WorkerError, attributed, bad_request
from kvault_worker.integrity import SAMPLE_PATH_OPS
from kvault_worker.session.state import SessionState, write_output
from kvault_worker.tensorfile import Captured, capture
from kvault_worker.timing import timers
from kvault_worker.timing.sensors import read_sensors
from kvault_worker.timing.side import TimedSide, output_layout


# Outputs of one round's samples a side keeps at most (the engine sends 2 x its
# batch per round).
MAX_KEPT_SAMPLES = 64
# Runs of one time_burst at most (the engine asks for about 20 ms of the reference's
# device time).
MAX_BURST_REPLAYS = 100000


class TimedRequests(SessionState):
    def time_start(self, request):
        """Builds one side of a timed case: model, inputs, flush buffer, first calls
        (docs/timing.md, "Preparation"). With `warmup_ms` it also warms up, as
        time_warmup does; without, the engine sends time_warmup once the device is
        the side's alone. A reference side kept by the last time_finish (`keep`) for
        the same task file, case, seed and flush is taken up again (`kept`)."""
        device = self._require_device()
        side, s = fields.string(request, "side"), fields.seed(request)
        warmup_ms = fields.number(request, "warmup_ms", 0) if "warmup_ms" in request else None
        flush = fields.boolean(request, "flush", True)
        graph_below_ms = fields.number(request, "graph_below_ms", 0)
        self._drop_timed()
        if side == "reference":
            new = self._start_reference_side(request, s, flush)
        elif side == "candidate":
            new = self._start_candidate_side(request, s)
        else:
            raise bad_request("'side' must be reference or candidate, got %r" % side)
        kept = new is None
        try:
            if not kept:
                case = new.case
                self.timed.side = TimedSide(new.forward, new.inputs, device, new.kind, new.label, flush,
                                            l2_bytes(device), device_info(device)["arch"],
                                            make_inputs=lambda seed: execution.make_inputs(case, seed, device))
                # The re-check after timing runs on inputs of the next seed, written into
                # the timed buffers: a candidate that replays a cached output is caught.
                self.timed.side.fresh_inputs = lambda: execution.make_inputs(case, s + 1, device)
                self.timed.side.prime(graph_below_ms)
            response = {"timer": timers.EVENTS if device.is_gpu else timers.CLOCK,
                        "input_digest": self.timed.digest, "kept": kept,
                        "flush_bytes": self.timed.side.flush_bytes,
                        "output_layout": output_layout(self.timed.side.last_output)
                        if side == "reference" else None}
            if warmup_ms is not None:
                response.update(self._warm_up(warmup_ms))
        except BaseException:
            self._drop_timed()
            raise
        return response

    def time_warmup(self, request):
        """Warms the prepared side up for `warmup_ms` (docs/timing.md, "Warm-up")."""
        self._require_timed()
        return self._warm_up(fields.number(request, "warmup_ms", 100))

    def _warm_up(self, warmup_ms):
        side = self.timed.side
        calls = side.warm_up(warmup_ms)
        check_integrity("warming up", kernels=True)
        response = {"warmup_calls": calls, "call_ms": side.call_ms, "device_call_ms": side.device_call_ms,
                    "sensors": read_sensors(self.device)}
        if self.device.is_gpu:
            response["graph_max_calls"] = side.max_graph_calls()
        return response

    def time_graph(self, request):
        """Captures the side's graph: `calls` calls when given (the engine's choice,
        the same for both sides), else as many as the side's sizing on the device as
        it is now finds (docs/timing.md, "What one sample is")."""
        timed = self._require_timed()
        calls = fields.integer(request, "calls", minimum=1, maximum=100000) if "calls" in request else None
        why = timed.side.prepare_graph(calls)
        check_integrity("capturing a graph", kernels=True)
        if why is not None:
            return {"graph_failed": why}
        return {"graph_calls": timed.side.graph.calls}

    def time_flush(self, request):
        """Flushes the caches before a cold sample (the engine's clock keeps it out of
        the sample's time; docs/timing.md, "What the engine trusts"). No clock looks
        here, so the harness is checked right after: a flush that a candidate disarmed
        or ran its own code in is a policy_violation before the sample it would help."""
        self._require_timed().side.flush()
        check_integrity("flushing the caches", kernels=SAMPLE_PATH_OPS)
        return {}

    def time_sample(self, request):
        """One timed sample on the inputs of `seed`; the output goes to `out`, or is
        kept on the device as sample `keep_as` of the round, before the reply, so what
        the engine compares was made inside the time it clocked."""
        timed = self._require_timed()
        method = self._timing_method(request, timed)
        s = fields.integer(request, "seed", minimum=0, maximum=(1 << 62))
        check_call = fields.integer(request, "call", 0, minimum=0, maximum=1 << 30)
        out = fields.absolute_path(request, "out") if "out" in request else None
        keep = fields.integer(request, "keep_as", minimum=0, maximum=MAX_KEPT_SAMPLES - 1) \
            if "keep_as" in request else None
        side = timed.side
        if keep is not None:  # last round's: its memory is free for this sample
            dropped = timed.kept_samples.pop(keep, None)
            if side.kind == RUNTIME_ERROR and _weakly_referenced(dropped):
                raise WorkerError(POLICY_VIOLATION, "a weak reference to the worker's copy of a timed sample's "
                                  "output: its callback would run as the copy is dropped, before the next "
                                  "sample's clock")
            del dropped
        sample, output, inputs, modified = side.sample(method, s, check_call)
        # The output is copied first, right when the sample ends: work a thread of the
        # candidate's finishes after the call returned is not in it.
        if out is not None:
            with attributed(side.kind, "the output of %s cannot be captured" % side.label):
                value = captured(output) if side.kind == RUNTIME_ERROR else capture(output)
        if keep is not None:
            timed.kept_samples[keep] = device_copy(output, side.kind, side.label)
        timed.modified = timed.modified or modified
        with attributed(side.kind, "%s returned an output that cannot be inspected" % side.label):
            aliases = output_aliases(output, inputs)
        if out is not None:
            written = write_output(out, value, sha256=True)
        check_integrity("timing", kernels=SAMPLE_PATH_OPS)
        response = {"ms": sample.ms, "wall_ms": sample.wall_ms, "inputs_modified": modified,
                    "output_aliases": aliases}
        if out is not None:
            response["out_sha256"] = written
        if method == timers.GRAPH:
            response["graph_calls"] = side.graph.calls
        if sample.others_ms is not None:
            response["call_others_ms"] = sample.others_ms
        return response

    def time_burst(self, request):
        """`replays` runs of the side's timed unit back to back (graph replays with
        `cuda_graph`, else calls), one synchronisation after the last, on the inputs as
        they are. The reply says nothing the engine uses: it clocks the request, and
        a long burst's time less a short one's is the side's device time, whatever its
        samples reported (docs/timing.md, "What the engine trusts")."""
        timed = self._require_timed()
        method = self._timing_method(request, timed)
        replays = fields.integer(request, "replays", minimum=1, maximum=MAX_BURST_REPLAYS)
        timed.side.burst(method, replays)
        check_integrity("timing")
        return {}

    def _timing_method(self, request, timed):
        """The request's `method`, checked against the device and the side (time_sample,
        time_burst)."""
        method = fields.string(request, "method")
        if method not in (timers.EVENTS, timers.GRAPH, timers.CLOCK):
            raise bad_request("unknown timing method %r" % method)
        if (method == timers.CLOCK) == self.device.is_gpu:
            raise bad_request("method %s does not fit backend %s" % (method, self.device.backend))
        if method == timers.GRAPH and timed.side.graph is None:
            raise bad_request("no graph captured: send time_graph first")
        return method

    def time_output(self, request):
        """The output kept as sample `sample` of the round, handed over as
        time_finish hands its output over: offered (reference side) or delivered
        into the offer (candidate side) with `handoff`, else written to `out`. The
        sample is no longer kept afterwards, unless the reference side is asked to
        `keep` it for the next candidate of a group turn."""
        timed = self._require_timed()
        index = fields.integer(request, "sample", minimum=0, maximum=MAX_KEPT_SAMPLES - 1)
        out = fields.absolute_path(request, "out")
        keep = fields.boolean(request, "keep", default=False)
        if keep and timed.owned_task is None:
            raise bad_request("only the reference side keeps a sample it hands over")
        if index not in timed.kept_samples:
            raise bad_request("no output kept as sample %d: send time_sample with 'keep_as' first" % index)
        value = timed.kept_samples[index] if keep else timed.kept_samples.pop(index)
        return self._hand_over(request, timed, value, out)

    def _hand_over(self, request, timed, value, out):
        """An output of the timed side to the engine: the response's `handoff`
        (offered, delivered or declined), and the output written to `out` unless it
        stays on the device."""
        side = timed.side
        response = {}
        if "handoff" in request:
            if timed.owned_task is not None:  # the reference side offers
                offered = self._offer(request, value)
                if offered is not None:
                    response["handoff"] = offered
            else:
                response.update(self._deliver(request, [value]))
        if response.get("handoff") in (None, "declined"):
            if not isinstance(value, Captured):
                with attributed(side.kind, "the output of %s cannot be captured" % side.label):
                    value = capture(value)
            write_output(out, value)
        return response

    def time_finish(self, request):
        """Writes the output of the last timed call to `out` (when given), reports
        whether the inputs changed while timing, and drops the timed case, or, with
        `keep` on the reference side, keeps it for the next candidate's timing of the
        same case (docs/timing.md, "Preparation")."""
        timed = self._require_timed()
        check_integrity("timing", kernels=True)
        out = fields.absolute_path(request, "out") if "out" in request else None
        keep = fields.boolean(request, "keep", False) and self._keepable(timed)
        side = timed.side
        response = {}
        try:
            side.restore_inputs(timed.seed)
            with attributed(side.kind, "%s left its inputs unreadable" % side.label):
                modified = timed.modified or input_digest(side.inputs) != timed.digest
            keep = keep and not modified
            if out is not None:
                with attributed(side.kind, "%s raised on fresh inputs after timing" % side.label):
                    output = side.call_on(side.fresh_inputs(), into_timed_buffers=not keep)
                response.update(self._hand_over(request, timed, output, out))
                del output
        except BaseException:
            keep = False
            raise
        finally:
            if keep:
                self._keep_reference(timed)
            else:
                self._drop_timed()
        response.update({"inputs_modified": modified, "kept": keep, "sensors": read_sensors(self.device)})
        return response

    def _require_timed(self):
        self._require_device()
        if self.timed is None or self.timed.side is None:
            raise bad_request("no timed case: send time_start first")
        return self.timed


def _weakly_referenced(value):
    """Whether anything holds a weak reference to `value` or a tensor in it (a kept
    sample: a tensor, or a tuple or list of them). The worker makes none: one is the
    candidate's, whose callback would run where the worker drops the copy, before a
    sample's clock, with the sample's seed in the worker's frame."""
    items = value if isinstance(value, (tuple, list)) else [value]
    for item in [value] + list(items):
        try:
            if weakref.getweakrefcount(item):
                return True
        except TypeError:
            pass
    return False
