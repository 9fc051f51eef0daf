"""The candidate worker's part of the session: the one candidate it loads and runs.

load brings in the candidate (with its task and its op policy) and unload drops
it; record_inline notes a KernelBench file's load_inline calls (inline_ext.py); run is the checked run (checked_run.py), whose outputs write_outputs writes
when the engine deferred them; the candidate side of a timed case is built here
(time_start's `side: candidate`); outputs the engine compares on the device are
delivered into the reference worker's offer (handoff.py) instead of files.
"""
import gc
import sys

import torch

from kvault_worker import devmem, execution, handoff, inline_ext, op_policy
from kvault_worker import request_fields as fields
from kvault_worker.candidates import NATIVE, load_candidate, release_candidate
from kvault_worker.checked_run import captured, check_integrity, checked_run
from kvault_worker.digest import reported_input_digest
from kvault_worker.errors import INTERNAL, RUNTIME_ERROR, attributed, bad_request
from kvault_worker.integrity import SNAPSHOT
from kvault_worker.native import OutputLayout
from kvault_worker.session.state import NewSide, SessionState, TimedCase, write_output
from kvault_worker.tasks import load_task, release_task
from kvault_worker.tensorfile import Captured


# The seed of the init inputs ModelNew is constructed with while its load_inline calls
# are noted (any seed: a call whose arguments differ at load time is PyTorch's own).
RECORD_SEED = 1


class CandidateRole(SessionState):
    def __init__(self):
        super().__init__()
        self.task = None  # the task of the loaded candidate
        self.candidate = None
        self.policy = None  # op_policy.Enforcer of the loaded candidate
        self.pending_writes = None  # [(path, Captured)] of a run with defer_writes

    def _require_candidate(self):
        self._require_device()
        if self.candidate is None:
            raise bad_request("no candidate loaded: send load first")
        return self.task, self.candidate

    def load(self, request):
        self._require_device()
        path = fields.absolute_path(request, "task")
        self._drop_candidate()
        task = load_task(path)
        # Before any candidate code: the task draws every sample's inputs in this worker.
        SNAPSHOT.watch_task([f for case in task.cases for f in (case.get_inputs, case.get_init_inputs)])
        try:
            policy = op_policy.resolve(request.get("policy"), task.meta.policy)
        except ValueError as e:
            release_task(task)
            raise bad_request(str(e))
        if policy in op_policy.OBSERVED:
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
        check_integrity("loading the candidate", kernels=True)
        return {}

    def record_inline(self, request):
        """The load_inline calls of a KernelBench candidate file, noted while it
        runs (inline_ext.record); the engine discards this worker afterwards."""
        self._require_device()
        spec = request.get("candidate")
        if not isinstance(spec, dict) or spec.get("format") != "kernelbench":
            raise bad_request("record_inline needs a kernelbench 'candidate'")
        path = fields.absolute_path(spec, "path")
        if not inline_ext.mentions_load_inline(path):
            return {"calls": []}
        if "task" not in request:
            return inline_ext.record(path)
        task = load_task(fields.absolute_path(request, "task"))
        try:
            return inline_ext.record(path, lambda module, calls: self._construct_and_call(task, module, calls))
        finally:
            release_task(task)

    def _construct_and_call(self, task, module, calls):
        """ModelNew constructed with each case's init inputs (calls its constructor
        makes); when nothing was noted so far, the first model called once on the
        first case's inputs (calls made at the first forward, the only case in which
        the inputs are made here)."""
        makers = [lambda case=case: execution.init_inputs(case, RECORD_SEED) for case in task.cases]
        models = inline_ext.construct_models(module, makers)
        if calls or not models:
            return
        model = models[0].to(self.device.torch_device) if isinstance(models[0], torch.nn.Module) else models[0]
        inputs = execution.make_inputs(task.cases[0], RECORD_SEED, self.device)
        with torch.no_grad():
            model(*inputs)

    def run(self, request):
        self.pending_writes = None
        task, candidate = self._require_candidate()
        case = task.cases[fields.case_index(request, task)]
        s, out = fields.seed(request), fields.absolute_path(request, "out")
        repeat_out = fields.absolute_path(request, "repeat_out") if "repeat_out" in request else None
        defer = fields.boolean(request, "defer_writes", False)
        handing = "handoff" in request
        result = checked_run(task, candidate, case, s, fields.distribution(request), self.device,
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
            write_output(path, value)
        return response

    def write_outputs(self, request):
        """Writes the outputs the last run held back (`defer_writes`)."""
        pending, self.pending_writes = self.pending_writes, None
        if pending is None:
            raise bad_request("no outputs held back: send run with defer_writes first")
        for path, value in pending:
            write_output(path, value)
        return {"written": len(pending)}

    def unload(self, request):
        self._drop_candidate()
        return {}

    def _drop_candidate(self):
        self._drop_timed()
        self.pending_writes = None
        release_candidate(self.candidate)
        release_task(self.task)
        SNAPSHOT.unwatch_task()
        self.candidate = self.task = self.policy = None
        gc.collect()
        if self.device is not None:
            self.device.release_memory()

    def _start_candidate_side(self, request, s):
        """time_start's candidate side: the loaded candidate's forward and the
        case's inputs, as a NewSide."""
        device = self.device
        task, candidate = self._require_candidate()
        case = task.cases[fields.case_index(request, task)]
        fn = execution.candidate_forward(task, candidate, case, s, device,
                                         **native_time_options(request, candidate))
        inputs = execution.make_inputs(case, s, device)
        self.timed = TimedCase(None, reported_input_digest(inputs), None, s)
        return NewSide(fn, inputs, case, RUNTIME_ERROR, "the candidate's forward")

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
