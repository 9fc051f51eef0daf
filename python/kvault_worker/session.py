"""The worker's state and one handler per protocol op (docs/worker-protocol.md).

A handler takes the request dict and returns the response fields besides
`id` and `ok`, or raises WorkerError. State: the device chosen by `hello` and at
most one loaded (task, candidate) pair.
"""
import gc
import time

from kvault_worker import PROTOCOL_VERSION, execution, timing
from kvault_worker import request_fields as fields
from kvault_worker.build_info import build_info
from kvault_worker.candidates import load_candidate, release_candidate
from kvault_worker.device import (BACKENDS, Device, backend_availability, device_info, l2_bytes,
                                  open_device, python_info)
from kvault_worker.digest import input_digest, modified_inputs, pristine_copy
from kvault_worker.errors import (INTERNAL, OOM, RUNTIME_ERROR, TASK_ERROR, WorkerError,
                                  attributed, bad_request)
from kvault_worker.tasks import load_task, release_task
from kvault_worker.tensorfile import capture, write


class Session:
    def __init__(self):
        self.device = None
        self.task = None  # the task of the loaded candidate
        self.candidate = None
        self.finished = False
        self.handlers = {"hello": self.hello, "describe": self.describe,
                         "reference": self.reference, "load": self.load, "run": self.run,
                         "time": self.time, "unload": self.unload, "shutdown": self.shutdown}

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
            available, reasons = backend_availability(index)
            response = {"protocol": PROTOCOL_VERSION, **python_info(),
                        "device": device_info(device), "build": build_info(),
                        "available_backends": available, "unavailable_reasons": reasons}
        self.device = device
        return response

    def describe(self, request):
        task = load_task(fields.absolute_path(request, "task"))
        try:
            return {"task": describe_task(task)}
        finally:
            release_task(task)

    def reference(self, request):
        device = self._require_device()
        path = fields.absolute_path(request, "task")
        s, out = fields.seed(request), fields.absolute_path(request, "out")
        task = load_task(path)
        try:
            case = task.cases[fields.case_index(request, task)]
            try:
                fn = execution.reference_forward(task, case, s, device)
                inputs = execution.make_inputs(case, s, device)
                digest = input_digest(inputs)
                started = time.perf_counter()
                output = execution.call_reference(fn, inputs, s, device)
                seconds = time.perf_counter() - started
                with attributed(TASK_ERROR, "the reference output cannot be captured"):
                    captured = capture(output)
            except WorkerError as e:
                if e.kind == OOM:  # the reference worker runs trusted code only
                    e.kind = TASK_ERROR
                raise
            _write_output(out, captured)
            return {"input_digest": digest, "seconds": seconds}
        finally:
            release_task(task)

    def load(self, request):
        self._require_device()
        path = fields.absolute_path(request, "task")
        self._drop_candidate()
        task = load_task(path)
        try:
            self.candidate = load_candidate(request.get("candidate"))
        except BaseException:
            release_task(task)
            raise
        self.task = task
        return {}

    def run(self, request):
        task, candidate = self._require_candidate()
        case = task.cases[fields.case_index(request, task)]
        s, out = fields.seed(request), fields.absolute_path(request, "out")
        fn = execution.candidate_forward(task, candidate, case, s, self.device)
        inputs = execution.make_inputs(case, s, self.device)
        pristine = pristine_copy(inputs)
        digest = input_digest(pristine)
        started = time.perf_counter()
        output = execution.call_candidate(fn, inputs, s, self.device)
        seconds = time.perf_counter() - started
        with attributed(RUNTIME_ERROR, "the candidate's output cannot be captured"):
            captured = capture(output)
        with attributed(RUNTIME_ERROR, "the candidate left its inputs unreadable"):
            modified = modified_inputs(pristine, inputs)
        del output, fn, inputs, pristine
        _write_output(out, captured)
        return {"input_digest": digest, "inputs_modified": modified, "seconds": seconds}

    def time(self, request):
        task, candidate = self._require_candidate()
        cases = fields.case_list(request, task)
        s = fields.seed(request)
        settings = timing.Settings(
            warmup_ms=fields.number(request, "warmup_ms", 50),
            min_samples=fields.integer(request, "min_samples", 10, minimum=1),
            max_samples=fields.integer(request, "max_samples", 100, minimum=1),
            max_ms=fields.number(request, "max_ms", 2000),
            flush=fields.boolean(request, "flush", True))
        if settings.max_samples < settings.min_samples:
            raise bad_request("max_samples must be >= min_samples")
        try:
            method, rows = timing.time_cases(task, candidate, cases, s, self.device,
                                             l2_bytes(self.device), settings)
        finally:
            self.device.release_memory()
        return {"method": method, "timings": rows}

    def unload(self, request):
        self._drop_candidate()
        return {}

    def shutdown(self, request):
        self.finished = True
        return {}

    def _drop_candidate(self):
        release_candidate(self.candidate)
        release_task(self.task)
        self.candidate = self.task = None
        gc.collect()
        if self.device is not None:
            self.device.release_memory()


def describe_task(task):
    """The `task` object of the describe response. Checks every case's inputs."""
    cpu = Device("cpu", 0)
    for case in task.cases:
        execution.make_inputs(case, 1, cpu)  # raises task_error on bad inputs
    probe = execution.build_model(task.model_class, execution.init_inputs(task.cases[0], 1), 1,
                                  cpu.torch_device, TASK_ERROR, "Model")
    return {"name": task.name, "has_twin": task.has_twin,
            "num_parameters": execution.count_parameters(probe),
            "cases": [case.to_json() for case in task.cases], "meta": task.meta.to_json()}


def _write_output(path, captured):
    try:
        write(path, captured)
    except OSError as e:
        raise WorkerError(INTERNAL, "cannot write %s: %s" % (path, e)) from None
