"""The worker's session: one handler per protocol op (docs/worker-protocol.md).

A handler takes the request dict and returns the response fields besides `id`
and `ok`, or raises WorkerError. A worker is not told its role: the engine sends
hello to both of its workers and every other op to the one whose role it concerns
(docs/worker-protocol.md, "Requests"), and every worker answers them all. The
handlers live by role:

  reference.py  the reference worker, which runs trusted task code only: describe,
                reference, its side of a timed case (kept between candidates),
                its output offered on the device (handoff_compare, handoff_release)
  candidate.py  the candidate worker: record_inline, load, run, write_outputs, unload, its side of
                a timed case, its outputs delivered into an offer
  timed.py      the time_* requests, for the side time_start built
  state.py      what they share: the device, the timed case, output files

Session joins them in one object, whose table of handlers and methods the
harness integrity check watches (integrity.py).
"""
import gc

# The roles first: they import op_policy before the harness snapshot is taken
# (integrity.py; op_policy.py says why).
from kvault_worker.session.candidate import CandidateRole
from kvault_worker.session.reference import ReferenceRole
from kvault_worker.session.timed import TimedRequests

from kvault_worker import PROTOCOL_VERSION, devmem, held_out
from kvault_worker import request_fields as fields
from kvault_worker.build_info import build_info
from kvault_worker.device import BACKENDS, backend_availability, device_info, open_device, python_info
from kvault_worker.errors import INTERNAL, attributed, bad_request
from kvault_worker.integrity import SNAPSHOT


class Session(ReferenceRole, CandidateRole, TimedRequests):
    def __init__(self):
        super().__init__()
        self.finished = False  # shutdown ends the request loop
        yielding = self._yielding_kept_sides  # retried without kept reference sides on OOM
        self.handlers = {
            # Either worker.
            "hello": self.hello,
            "shutdown": self.shutdown,
            # The reference worker (reference.py); describe needs no hello.
            "describe": yielding(self.describe),
            "reference": trimming(self, yielding(self.reference)),
            "handoff_compare": self.handoff_compare,
            "handoff_release": self.handoff_release,
            # The candidate worker (candidate.py).
            "load": self.load,
            "record_inline": self.record_inline,
            "run": self.run,
            "write_outputs": self.write_outputs,
            "unload": self.unload,
            # Either worker, for the side time_start names (timed.py).
            "time_start": yielding(self.time_start),
            "time_warmup": self.time_warmup,
            "time_graph": self.time_graph,
            "time_flush": self.time_flush,
            "time_sample": self.time_sample,
            "time_burst": self.time_burst,
            "time_output": self.time_output,
            "time_finish": trimming(self, self.time_finish),
        }

    def hello(self, request):
        backend = fields.string(request, "backend")
        index = fields.integer(request, "device_index", 0, minimum=0)
        if backend not in BACKENDS:
            raise bad_request("unknown backend %r (expected cpu, cuda or hip)" % backend)
        if self.device is not None and (self.device.backend, self.device.index) != (backend, index):
            raise bad_request("this worker already runs on %s:%d" % (self.device.backend, self.device.index))
        device = self.device or open_device(backend, index)
        # The larger held-out case's sizes are drawn from it (held_out.py).
        held_out.set_key(fields.string(request, "held_out_key", ""))
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
        # Every sample ends at the device's synchronisation: no instance attribute may
        # hide it (or another method of the device), nor may the device's class change.
        SNAPSHOT.guard("device", device, ("torch_device", "is_gpu"))
        # What is alive now (PyTorch and the harness) stays for the worker's life:
        # the collections that free each case's tensors then skip it (about 50 ms
        # each with PyTorch imported, a few after this).
        gc.freeze()
        return response

    def shutdown(self, request):
        self._close_offer()
        self.buffer_pool.release()
        self.finished = True
        return {}


def trimming(session, handler):
    """`handler`, then the device memory PyTorch keeps cached beyond what a worker may
    keep given back (Device.release_memory), however the request ended. The requests
    after which a reference worker may sit idle between verifications (a reference run
    written to a file, a timed side kept) end so: the engine's memory lease counts no
    more of an idle worker than that (docs/timing.md, "Memory is shared")."""
    def run(request):
        try:
            return handler(request)
        finally:
            if session.device is not None:
                session.device.release_memory()
    return run
