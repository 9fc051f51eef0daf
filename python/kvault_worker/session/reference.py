"""The reference worker's part of the session: it runs trusted task code only.

describe and reference answer from the task file; the reference side of a timed
case is built here (time_start's `side: reference`) and may be kept for the next
candidate's timing of the same case (time_finish `keep`); an output the engine
compares on the device is kept and offered (handoff.py), then compared or
released (handoff_compare, handoff_release).
"""
import gc
import os
import sys
import time

import torch

from kvault_worker import devmem, execution, handoff, held_out
from kvault_worker import request_fields as fields
from kvault_worker.aliasing import output_aliases
from kvault_worker.device import Device
from kvault_worker.digest import reported_input_digest
from kvault_worker.errors import INTERNAL, OOM, TASK_ERROR, WorkerError, attributed, bad_request
from kvault_worker.session.state import NewSide, SessionState, TimedCase, write_output
from kvault_worker.tasks import load_task, release_task
from kvault_worker.tensorfile import capture
from kvault_worker.timing.flush import release_shared_flushers
from kvault_worker.timing.side import output_layout

# Reference sides kept between candidates (time_finish `keep`): at most this many,
# holding at most this much device memory together (inputs, flush buffers, graph
# outputs: TimedSide.held_bytes), so that a lane's reference worker stays small.
KEEP_SIDES = 2
KEEP_BYTES = 1 << 30


class ReferenceRole(SessionState):
    def __init__(self):
        super().__init__()
        # Reference sides kept between candidates (time_finish `keep`), by _kept_key.
        self.kept_references = {}
        self.offer = None  # the handoff.Offer, until compared or released
        self.buffer_pool = handoff.BufferPool()  # the offers' buffers, kept for their holder

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
                inputs = execution.make_inputs(case, s, device, fields.distribution(request))
                digest = reported_input_digest(inputs)
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
                write_output(out, captured)
            else:
                response["handoff"] = offered
            return response
        finally:
            release_task(task)

    def _start_reference_side(self, request, s, flush):
        """time_start's reference side: a side kept by an earlier time_finish
        (`keep`) for the same task file, case, seed and flush is taken up again
        (None), unless `fresh`; else the task's model and inputs, as a NewSide."""
        device = self.device
        path = fields.absolute_path(request, "task")
        case_index = fields.integer(request, "case", minimum=0)
        key = _kept_key(path, case_index, s, flush)
        self.timed = self.kept_references.pop(key, None) if key is not None else None
        if fields.boolean(request, "fresh", False) and self.timed is not None:
            self.timed.release()
            self.timed = None
        if self.timed is not None:
            self.timed.modified = False
            return None
        task = load_task(path)
        try:
            case = task.cases[fields.case_index(request, task)]
            fn = execution.reference_forward(task, case, s, device)
            inputs = execution.make_inputs(case, s, device)
            digest = reported_input_digest(inputs)
        except BaseException:
            release_task(task)
            raise
        self.timed = TimedCase(task, digest, key, s)
        return NewSide(fn, inputs, case, TASK_ERROR, "the reference forward")

    # Reference sides kept between candidates.

    def _keepable(self, timed):
        """Whether time_finish `keep` may keep `timed`: a reference side (only
        those have a key) holding at most KEEP_BYTES."""
        return timed.kept_key is not None and timed.side.held_bytes() <= KEEP_BYTES

    def _keep_reference(self, timed):
        """Keeps `timed` under its key; the oldest others go while more than
        KEEP_SIDES are kept or they hold more than KEEP_BYTES together."""
        self.timed = None
        timed.kept_samples = {}  # outputs of its samples are never kept with it
        self.kept_references.pop(timed.kept_key, None)
        self.kept_references[timed.kept_key] = timed
        while len(self.kept_references) > KEEP_SIDES or sum(
                t.side.held_bytes() for t in self.kept_references.values()) > KEEP_BYTES:
            oldest = next(iter(self.kept_references))
            self.kept_references.pop(oldest).release()

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
        self.buffer_pool.release()
        release_shared_flushers()  # made again at the next flush
        gc.collect()
        if self.device is not None:
            self.device.release_memory(everything=True)

    # The output offered on the device (docs/device-compare.md).

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
            self.offer = self._with_room_on_failure(
                lambda: handoff.Offer(output, sets, socket_path, secret, self.device, self.buffer_pool))
        except (devmem.DevmemError, OSError) as e:  # e.g. no device memory left: files instead
            print("kvault worker: no hand-over on the device (%s); writing the output" % e, file=sys.stderr)
            return None
        return {"output_layout": layout}

    def _with_room_on_failure(self, make):
        """make(), once more after giving back the device memory this worker keeps when
        it fails: exported buffers are the driver's own allocations, which cannot use
        the blocks PyTorch's allocator keeps cached (a 6.4 GB output's buffers beside
        the cache of the heavy-tailed draw's inputs), nor the pooled buffers of another
        size."""
        try:
            return make()
        except (devmem.DevmemError, OSError):
            self.buffer_pool.release()
            gc.collect()
            self.device.release_memory(everything=True)
        return make()

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
        rules = [(fields.number(r, "rtol"), fields.number(r, "atol"), fields.boolean(r, "forbid"),
                  fields.boolean(r, "atol_by_rms", False)) for r in rules]
        try:
            # A candidate that took the buffers has its descriptors before the serving
            # thread marks the offer served: an honest delivery of small outputs can be
            # answered first. One that never took them is told apart by the wait's end.
            if not offer.served.wait(handoff.SERVED_WAIT_SECONDS):
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
                    write_output(fields.absolute_path(request, "out_reference"), capture(offer.value))
                    value = views[0] if isinstance(offer.value, torch.Tensor) else views
                    write_output(fields.absolute_path(request, "out_candidate"), capture(value))
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
                write_output(fields.absolute_path(request, "out"), capture(offer.value))
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
    cases, notes = [], []
    for case in task.cases:
        if case.name in (held_out.HELD_OUT, held_out.HELD_OUT_LARGER):
            # The last cases: the others keep their indices. One not listed takes those
            # after it along, whose indices would move.
            listed, why = held_out.reference_runs(
                task, case, device or cpu, execution.make_inputs, execution.reference_forward,
                execution.call_reference)
            if listed and notes and not notes[-1]["listed"]:
                listed, why = False, "the held-out case before it is not listed"
            notes.append({"case": case.name, "listed": listed, "why": why})
            if not listed:
                continue
        inputs = execution.make_inputs(case, 1, device or cpu)  # raises task_error on bad inputs
        # What decides whether outputs are compared on the device (handoff.py).
        nbytes = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
        cases.append(dict(case.to_json(), input_bytes=nbytes))
        del inputs
    probe = execution.build_model(task.model_class, execution.init_inputs(task.cases[0], 1), 1,
                                  cpu.torch_device, TASK_ERROR, "Model")
    return {"name": task.name, "has_twin": task.has_twin,
            "num_parameters": execution.count_parameters(probe),
            "cases": cases, "meta": task.meta.to_json(), "held_out": notes}
