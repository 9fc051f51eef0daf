"""The worker's state and one handler per protocol op (docs/worker-protocol.md).

A handler takes the request dict and returns the response fields besides
`id` and `ok`, or raises WorkerError. State: the device chosen by `hello` and at
most one loaded (task, candidate) pair.
"""
import gc
import os
import sys
import time

import torch

from kvault_worker import PROTOCOL_VERSION, devmem, distributions, execution, handoff, op_policy
from kvault_worker.checked_run import captured, check_integrity, checked_run
from kvault_worker import request_fields as fields
from kvault_worker.aliasing import output_aliases
from kvault_worker.build_info import build_info
from kvault_worker.candidates import NATIVE, load_candidate, release_candidate
from kvault_worker.device import (BACKENDS, Device, backend_availability, device_info, l2_bytes,
                                  open_device, python_info)
from kvault_worker.digest import input_digest
from kvault_worker.errors import (INTERNAL, OOM, RUNTIME_ERROR, TASK_ERROR, WorkerError,
                                  attributed, bad_request)
from kvault_worker.integrity import SNAPSHOT
from kvault_worker.native import OutputLayout
from kvault_worker.tasks import load_task, release_task
from kvault_worker.tensorfile import Captured, capture, write
from kvault_worker.timing import timers
from kvault_worker.timing.flush import release_shared_flushers
from kvault_worker.timing.sensors import read_sensors
from kvault_worker.timing.side import TimedSide, output_layout


class Session:
    def __init__(self):
        self.device = None
        self.task = None  # the task of the loaded candidate
        self.candidate = None
        self.policy = None  # op_policy.Enforcer of the loaded candidate
        self.finished = False
        yielding = self._yielding_kept_sides
        self.handlers = {"hello": self.hello, "describe": yielding(self.describe),
                         "reference": yielding(self.reference), "load": self.load, "run": self.run,
                         "time_start": yielding(self.time_start), "time_warmup": self.time_warmup,
                         "time_graph": self.time_graph, "time_flush": self.time_flush,
                         "time_sample": self.time_sample,
                         "time_finish": self.time_finish, "unload": self.unload,
                         "write_outputs": self.write_outputs,
                         "handoff_compare": self.handoff_compare,
                         "handoff_release": self.handoff_release, "shutdown": self.shutdown}
        self.timed = None  # the TimedCase between time_start and time_finish
        # Reference sides kept between candidates (time_finish `keep`), by _kept_key.
        self.kept_references = {}
        self.offer = None  # the reference worker's handoff.Offer, until compared or released
        self.pending_writes = None  # [(path, Captured)] of a run with defer_writes

    def _require_device(self):
        if self.device is None:
            raise bad_request("no backend selected: send hello first")
        return self.device

    def _require_candidate(self):
        self._require_device()
        if self.candidate is None:
            raise bad_request("no candidate loaded: send load first")
        return self.task, self.candidate

    def hello(self, request):
        backend = fields.string(request, "backend")
        index = fields.integer(request, "device_index", 0, minimum=0)
        if backend not in BACKENDS:
            raise bad_request("unknown backend %r (expected cpu, cuda or hip)" % backend)
        if self.device is not None and (self.device.backend, self.device.index) != (backend, index):
            raise bad_request("this worker already runs on %s:%d" % (self.device.backend, self.device.index))
        device = self.device or open_device(backend, index)
        with attributed(INTERNAL, "collecting environment information failed"):
            response = {"protocol": PROTOCOL_VERSION, **python_info(),
                        "device": device_info(device),
                        "device_handoff": device.is_gpu and devmem.available(device.torch_device)[0]}
            # The build paths and the backend probe cost a second of subprocesses
            # (torch.utils.cpp_extension): only the first worker of a session asks.
            if fields.boolean(request, "environment", True):
                available, reasons = backend_availability(index)
                response.update({"build": build_info(), "available_backends": available,
                                 "unavailable_reasons": reasons})
        self.device = device
        SNAPSHOT.settle()
        # What is alive now (PyTorch and the harness) stays for the worker's life:
        # the collections that free each case's tensors then skip it (about 50 ms
        # each with PyTorch imported, a few after this).
        gc.freeze()
        return response

    def describe(self, request):
        task = load_task(fields.absolute_path(request, "task"))
        try:
            return {"task": describe_task(task, self.device)}
        finally:
            release_task(task)
            if self.device is not None:
                self.device.release_memory()

    def reference(self, request):
        device = self._require_device()
        path = fields.absolute_path(request, "task")
        s, out = fields.seed(request), fields.absolute_path(request, "out")
        task = load_task(path)
        try:
            case = task.cases[fields.case_index(request, task)]
            try:
                fn = execution.reference_forward(task, case, s, device)
                inputs = execution.make_inputs(case, s, device, _distribution(request))
                digest = input_digest(inputs)
                started = time.perf_counter()
                output = execution.call_reference(fn, inputs, s, device)
                seconds = time.perf_counter() - started
                captured = None
                if "handoff" not in request:
                    with attributed(TASK_ERROR, "the reference output cannot be captured"):
                        captured = capture(output)
            except WorkerError as e:
                if e.kind == OOM:  # the reference worker runs trusted code only
                    e.kind = TASK_ERROR
                    e.out_of_memory = True  # for _yielding_kept_sides
                raise
            response = {"input_digest": digest, "seconds": seconds,
                        "output_aliases": output_aliases(output, inputs)}
            offered = self._offer(request, output)
            if offered is None:
                if captured is None:
                    with attributed(TASK_ERROR, "the reference output cannot be captured"):
                        captured = capture(output)
                _write_output(out, captured)
            else:
                response["handoff"] = offered
            return response
        finally:
            release_task(task)

    def load(self, request):
        self._require_device()
        path = fields.absolute_path(request, "task")
        self._drop_candidate()
        task = load_task(path)
        try:
            policy = op_policy.resolve(request.get("policy"), task.meta.policy)
        except ValueError as e:
            release_task(task)
            raise bad_request(str(e))
        if policy == op_policy.CUSTOM_KERNEL:
            op_policy.install_tripwires()  # before any candidate code runs
        try:
            candidate = load_candidate(request.get("candidate"), self.device.backend)
            try:
                enforcer = op_policy.Enforcer(policy, self.device, _own_kernels(request.get("candidate"), candidate))
            except BaseException:
                release_candidate(candidate)
                raise
        except BaseException:
            release_task(task)
            raise
        self.task, self.candidate, self.policy = task, candidate, enforcer
        check_integrity("loading the candidate")
        return {}

    def run(self, request):
        self.pending_writes = None
        task, candidate = self._require_candidate()
        case = task.cases[fields.case_index(request, task)]
        s, out = fields.seed(request), fields.absolute_path(request, "out")
        repeat_out = fields.absolute_path(request, "repeat_out") if "repeat_out" in request else None
        defer = fields.boolean(request, "defer_writes", False)
        handing = "handoff" in request
        result = checked_run(task, candidate, case, s, _distribution(request), self.device,
                             native_run_options(request, candidate), repeat=repeat_out is not None,
                             keep_on_device=handing, policy=self.policy)
        response = {"input_digest": result.digest, "inputs_modified": result.modified,
                    "seconds": result.seconds, "output_aliases": result.aliases}
        outputs = [(out, result.output)] + ([(repeat_out, result.repeat)] if repeat_out is not None else [])
        if handing:
            response.update(self._deliver(request, [value for _, value in outputs]))
            if response["handoff"] == "delivered":
                return response
        # Copied to the host here, written here or by write_outputs once the engine no
        # longer holds the device for this run (docs/worker-protocol.md, "run").
        pending = [(path, captured(value)) for path, value in outputs]
        if defer:
            self.pending_writes = pending
            response["deferred"] = True
            return response
        for path, value in pending:
            _write_output(path, value)
        return response

    def write_outputs(self, request):
        """Writes the outputs the last run held back (`defer_writes`)."""
        pending, self.pending_writes = self.pending_writes, None
        if pending is None:
            raise bad_request("no outputs held back: send run with defer_writes first")
        for path, value in pending:
            _write_output(path, value)
        return {"written": len(pending)}

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
        kept = False
        if side == "reference":
            path = fields.absolute_path(request, "task")
            case_index = fields.integer(request, "case", minimum=0)
            key = _kept_key(path, case_index, s, flush)
            self.timed = self.kept_references.pop(key, None) if key is not None else None
            if fields.boolean(request, "fresh", False) and self.timed is not None:
                self.timed.release()
                self.timed = None
            kept = self.timed is not None
            if kept:
                self.timed.modified = False
            if not kept:
                task = load_task(path)
                try:
                    case = task.cases[fields.case_index(request, task)]
                    fn = execution.reference_forward(task, case, s, device)
                    inputs = execution.make_inputs(case, s, device)
                except BaseException:
                    release_task(task)
                    raise
                self.timed = TimedCase(task, input_digest(inputs), key, s)
                kind, label = TASK_ERROR, "the reference forward"
        elif side == "candidate":
            task, candidate = self._require_candidate()
            case = task.cases[fields.case_index(request, task)]
            fn = execution.candidate_forward(task, candidate, case, s, device,
                                             **native_time_options(request, candidate))
            inputs = execution.make_inputs(case, s, device)
            self.timed = TimedCase(None, input_digest(inputs), None, s)
            kind, label = RUNTIME_ERROR, "the candidate's forward"
        else:
            raise bad_request("'side' must be reference or candidate, got %r" % side)
        try:
            if not kept:
                self.timed.side = TimedSide(fn, inputs, device, kind, label, flush, l2_bytes(device),
                                            device_info(device)["arch"],
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
        if why is not None:
            return {"graph_failed": why}
        return {"graph_calls": timed.side.graph.calls}

    def time_flush(self, request):
        """Flushes the caches before a cold sample (the engine's clock keeps it out of
        the sample's time; docs/timing.md, "What the engine trusts")."""
        self._require_timed().side.flush()
        return {}

    def time_sample(self, request):
        """One timed sample on the inputs of `seed`; the output goes to `out` before
        the reply, so what the engine compares was made inside the time it clocked."""
        timed = self._require_timed()
        method = fields.string(request, "method")
        if method not in (timers.EVENTS, timers.GRAPH, timers.CLOCK):
            raise bad_request("unknown timing method %r" % method)
        if (method == timers.CLOCK) == self.device.is_gpu:
            raise bad_request("method %s does not fit backend %s" % (method, self.device.backend))
        if method == timers.GRAPH and timed.side.graph is None:
            raise bad_request("no graph captured: send time_graph first")
        s = fields.integer(request, "seed", minimum=0, maximum=(1 << 62))
        check_call = fields.integer(request, "call", 0, minimum=0, maximum=1 << 30)
        out = fields.absolute_path(request, "out") if "out" in request else None
        side = timed.side
        sample, output, inputs, modified = side.sample(method, s, check_call)
        timed.modified = timed.modified or modified
        with attributed(side.kind, "%s returned an output that cannot be inspected" % side.label):
            aliases = output_aliases(output, inputs)
        if out is not None:
            with attributed(side.kind, "the output of %s cannot be captured" % side.label):
                value = captured(output) if side.kind == RUNTIME_ERROR else capture(output)
            _write_output(out, value)
        check_integrity("timing")
        response = {"ms": sample.ms, "wall_ms": sample.wall_ms, "inputs_modified": modified,
                    "output_aliases": aliases}
        if method == timers.GRAPH:
            response["graph_calls"] = side.graph.calls
        return response

    def time_finish(self, request):
        """Writes the output of the last timed call to `out` (when given), reports
        whether the inputs changed while timing, and drops the timed case, or, with
        `keep` on the reference side, keeps it for the next candidate's timing of the
        same case (docs/timing.md, "Preparation")."""
        timed = self._require_timed()
        check_integrity("timing")
        out = fields.absolute_path(request, "out") if "out" in request else None
        keep = fields.boolean(request, "keep", False) and timed.kept_key is not None \
            and timed.side.held_bytes() <= KEEP_BYTES
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
                if "handoff" in request:
                    if timed.owned_task is not None:  # the reference side offers
                        offered = self._offer(request, output)
                        if offered is not None:
                            response["handoff"] = offered
                    else:
                        response.update(self._deliver(request, [output]))
                if response.get("handoff") in (None, "declined"):
                    with attributed(side.kind, "the output of %s cannot be captured" % side.label):
                        value = capture(output)
                    _write_output(out, value)
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

    def _keep_reference(self, timed):
        """Keeps `timed` under its key; the oldest others go while more than
        KEEP_SIDES are kept or they hold more than KEEP_BYTES together."""
        self.timed = None
        self.kept_references.pop(timed.kept_key, None)
        self.kept_references[timed.kept_key] = timed
        while len(self.kept_references) > KEEP_SIDES or sum(
                t.side.held_bytes() for t in self.kept_references.values()) > KEEP_BYTES:
            oldest = next(iter(self.kept_references))
            self.kept_references.pop(oldest).release()

    def _offer(self, request, output):
        """Reference side of a handoff (handoff.py): keeps `output` on the device and
        offers buffers like it; the response's `handoff` object, or None when this
        output is not handed over (no handoff asked, not on a device that can, or not
        one tensor or a flat tuple/list of them) - then it goes to a file."""
        spec = request.get("handoff")
        if spec is None:
            return None
        if not isinstance(spec, dict):
            raise bad_request("'handoff' must be an object")
        socket_path, secret = fields.absolute_path(spec, "socket"), fields.string(spec, "secret")
        sets = fields.integer(spec, "sets", 1, minimum=1, maximum=2)
        layout = output_layout(output)
        if layout is None or not self.device.is_gpu or not devmem.available(self.device.torch_device)[0] \
                or len(layout["tensors"]) * sets > handoff.MAX_DESCRIPTORS \
                or len(socket_path.encode()) >= handoff.MAX_SOCKET_PATH:
            return None
        self._close_offer()
        try:
            self.offer = handoff.Offer(output, sets, socket_path, secret, self.device)
        except (devmem.DevmemError, OSError) as e:  # e.g. no device memory left: files instead
            print("kvault worker: no hand-over on the device (%s); writing the output" % e, file=sys.stderr)
            return None
        return {"output_layout": layout}

    def _deliver(self, request, values):
        """Candidate side of a handoff: {"handoff": "delivered"} or "declined" with a
        reason (then the caller writes files)."""
        spec = request.get("handoff")
        if not isinstance(spec, dict):
            raise bad_request("'handoff' must be an object")
        socket_path, secret = fields.absolute_path(spec, "socket"), fields.string(spec, "secret")
        if "output_layout" not in request:
            raise bad_request("a handoff needs 'output_layout'")
        layout = OutputLayout.from_json(request["output_layout"])
        if any(isinstance(v, Captured) for v in values):
            return {"handoff": "declined",
                    "handoff_reason": "the output is not a tensor or a flat tuple/list of tensors"}
        try:
            why = handoff.deliver(values, layout, socket_path, secret, self.device)
        except (devmem.DevmemError, OSError, ValueError, KeyError, TypeError) as e:
            why = "the hand-over failed (%s)" % e  # then files, compared by the engine
        if why is not None:
            print("kvault worker: outputs not handed over on the device: %s" % why, file=sys.stderr)
            return {"handoff": "declined", "handoff_reason": why}
        return {"handoff": "delivered"}

    def handoff_compare(self, request):
        """Compares the delivered buffers with the kept reference output on the
        device: per call {match, compared, mismatched, max_abs, max_rel}. At the
        first call that does not match, writes the reference output to
        `out_reference` and that call's output to `out_candidate` (the engine's
        Compare words the report) and stops."""
        offer = self._require_offer()
        rules = request.get("tolerances")
        if not isinstance(rules, list) or len(rules) != len(offer.kept) or not all(isinstance(r, dict) for r in rules):
            raise bad_request("'tolerances' must list one {rtol, atol, forbid} per output tensor")
        rules = [(fields.number(r, "rtol"), fields.number(r, "atol"), fields.boolean(r, "forbid")) for r in rules]
        try:
            if not offer.served.is_set():
                return {"served": False, "calls": []}
            calls = []
            for row in range(len(offer.buffers)):
                views = offer.views(row)
                with attributed(INTERNAL, "comparing outputs on the device"):
                    stats = [handoff.compare_tensor(r, c, *rule) for r, c, rule in zip(offer.kept, views, rules)]
                call = {"match": all(x["match"] for x in stats),
                        "compared": sum(x["compared"] for x in stats),
                        "mismatched": sum(x["mismatched"] for x in stats),
                        "max_abs": max([x["max_abs"] for x in stats], default=0.0),
                        "max_rel": max([x["max_rel"] for x in stats], default=0.0)}
                calls.append(call)
                if not call["match"]:
                    _write_output(fields.absolute_path(request, "out_reference"), capture(offer.value))
                    value = views[0] if isinstance(offer.value, torch.Tensor) else views
                    _write_output(fields.absolute_path(request, "out_candidate"), capture(value))
                    break
            return {"served": True, "calls": calls}
        finally:
            self._close_offer()

    def handoff_release(self, request):
        """Ends a handoff that will not be compared; writes the kept reference output
        to `out` when given (the engine then compares files)."""
        offer = self._require_offer()
        try:
            if "out" in request:
                _write_output(fields.absolute_path(request, "out"), capture(offer.value))
        finally:
            self._close_offer()
        return {}

    def _require_offer(self):
        self._require_device()
        if self.offer is None:
            raise bad_request("no handoff offered: send reference or time_finish with 'handoff' first")
        return self.offer

    def _close_offer(self):
        if self.offer is not None:
            offer, self.offer = self.offer, None
            offer.close()
            self.device.release_memory()

    def _require_timed(self):
        self._require_device()
        if self.timed is None or self.timed.side is None:
            raise bad_request("no timed case: send time_start first")
        return self.timed

    def _yielding_kept_sides(self, handler):
        """The handler, run once more without the kept reference sides when it ran out
        of device memory while some were kept: they are a saving, not a need."""
        def run(request):
            try:
                return handler(request)
            except WorkerError as e:
                if not self.kept_references or not (e.kind == OOM or getattr(e, "out_of_memory", False)):
                    raise
            self._drop_kept_sides()
            return handler(request)
        return run

    def _drop_kept_sides(self):
        while self.kept_references:
            self.kept_references.popitem()[1].release()
        release_shared_flushers()  # made again at the next flush
        gc.collect()
        if self.device is not None:
            self.device.release_memory()

    def _drop_timed(self):
        if self.timed is not None:
            self.timed.release()
            self.timed = None
            if self.device is not None:
                self.device.release_memory()

    def unload(self, request):
        self._drop_candidate()
        return {}

    def shutdown(self, request):
        self._close_offer()
        self.finished = True
        return {}

    def _drop_candidate(self):
        self._drop_timed()
        self.pending_writes = None
        release_candidate(self.candidate)
        release_task(self.task)
        self.candidate = self.task = self.policy = None
        gc.collect()
        if self.device is not None:
            self.device.release_memory()


class TimedCase:
    """What a worker holds between time_start and time_finish: the side, the
    digest of its inputs when made, the task file it loaded and the key it may be
    kept under (reference side)."""

    def __init__(self, owned_task, digest, kept_key, seed):
        self.owned_task, self.digest, self.side = owned_task, digest, None
        self.kept_key, self.seed = kept_key, seed
        self.modified = False  # a sample's call changed the inputs it was given

    def release(self):
        if self.side is not None:
            self.side.release()
        release_task(self.owned_task)
        self.side = self.owned_task = None
        gc.collect()


# Reference sides kept between candidates (time_finish `keep`): at most this many,
# holding at most this much device memory together (inputs, flush buffers, graph
# outputs: TimedSide.held_bytes), so that a lane's reference worker stays small.
KEEP_SIDES = 2
KEEP_BYTES = 1 << 30


def _kept_key(path, case_index, seed, flush):
    """What a kept reference side is found by: the task file (as it is now: its
    size and modification time), the case, the seed and whether it flushes."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (path, st.st_size, st.st_mtime_ns, case_index, seed, flush)


def describe_task(task, device=None):
    """The `task` object of the describe response. Checks every case's inputs, made
    on `device` (the worker's, once it has one: inputs of several GB are made in
    milliseconds there, in seconds on the CPU)."""
    cpu = Device("cpu", 0)
    cases = []
    for case in task.cases:
        inputs = execution.make_inputs(case, 1, device or cpu)  # raises task_error on bad inputs
        # What decides whether outputs are compared on the device (handoff.py).
        nbytes = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
        cases.append(dict(case.to_json(), input_bytes=nbytes))
        del inputs
    probe = execution.build_model(task.model_class, execution.init_inputs(task.cases[0], 1), 1,
                                  cpu.torch_device, TASK_ERROR, "Model")
    return {"name": task.name, "has_twin": task.has_twin,
            "num_parameters": execution.count_parameters(probe),
            "cases": cases, "meta": task.meta.to_json()}


def native_run_options(request, candidate):
    """A native candidate's `run` needs the reference's `output_layout` (shapes and
    dtypes only) and garbage-filled outputs; other formats need nothing."""
    if candidate.format != NATIVE:
        return {}
    if "output_layout" not in request:
        raise bad_request("a native candidate's run needs 'output_layout'")
    return {"output_layout": OutputLayout.from_json(request["output_layout"]), "fill_outputs": True}


def native_time_options(request, candidate):
    """Timing a native candidate: with the engine's `output_layout`, outputs are left
    unfilled (as an extension's torch::empty would be); without it, the layout is
    taken from the reference run here, and every output is garbage-filled so that a
    freed reference buffer handed back by the allocator cannot be passed off."""
    if candidate.format != NATIVE:
        return {}
    if "output_layout" in request:
        return {"output_layout": OutputLayout.from_json(request["output_layout"]), "fill_outputs": False}
    return {"output_layout": None, "fill_outputs": True}


def _own_kernels(spec, candidate):
    """op_policy.own_kernel_names of the candidate: its source (the request's
    `source` text for compiled formats; the Python formats' file) and its module."""
    text = spec.get("source", "") if isinstance(spec, dict) else ""
    if not isinstance(text, str):
        raise bad_request("candidate 'source' must be a string")
    if not text and candidate.format != NATIVE and not candidate.path.endswith(".so"):
        with attributed(INTERNAL, "cannot read the candidate's source %s" % candidate.path):
            with open(candidate.path, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 22)
    return op_policy.own_kernel_names(text, candidate.module)


def _distribution(request):
    """The optional `distribution` field of run and reference (distributions.py)."""
    name = fields.string(request, "distribution", distributions.TASK)
    if name not in distributions.ALL:
        raise bad_request("unknown distribution %r (expected %s)" % (name, ", ".join(distributions.ALL)))
    return name


def _write_output(path, captured):
    try:
        write(path, captured)
    except OSError as e:
        raise WorkerError(INTERNAL, "cannot write %s: %s" % (path, e)) from None
