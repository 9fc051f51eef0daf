"""What the session's parts share: the device `hello` chose, the timed case of
either side, and the writing of output files."""
import gc
from typing import NamedTuple

from kvault_worker.errors import INTERNAL, WorkerError, bad_request
from kvault_worker.tasks import release_task
from kvault_worker.tensorfile import write


class SessionState:
    """The base of the session's parts (reference.py, candidate.py, timed.py)."""

    def __init__(self):
        self.device = None  # chosen by hello, for the worker's life
        self.timed = None  # the TimedCase between time_start and time_finish

    def _require_device(self):
        if self.device is None:
            raise bad_request("no backend selected: send hello first")
        return self.device

    def _drop_timed(self):
        if self.timed is not None:
            self.timed.release()
            self.timed = None
            if self.device is not None:
                self.device.release_memory()


class NewSide(NamedTuple):
    """A role's part of time_start when it builds a side: the forward, its inputs,
    the case (whose inputs of other seeds the side makes) and whom its failures
    blame (an error kind, and a label for messages)."""
    forward: object
    inputs: list
    case: object
    kind: str
    label: str


class TimedCase:
    """What a worker holds between time_start and time_finish: the side, the
    digest of its inputs when made, the task file it loaded and the key it may be
    kept under (reference side)."""

    def __init__(self, owned_task, digest, kept_key, seed):
        self.owned_task, self.digest, self.side = owned_task, digest, None
        self.kept_key, self.seed = kept_key, seed
        self.modified = False  # a sample's call changed the inputs it was given
        self.kept_samples = {}  # time_sample's `keep_as` -> the sample's output, until time_output

    def release(self):
        self.kept_samples = {}
        if self.side is not None:
            self.side.release()
        release_task(self.owned_task)
        self.side = self.owned_task = None
        gc.collect()


def write_output(path, captured, sha256=False):
    """Writes `captured` to `path`; with `sha256`, returns the digest of what it wrote."""
    try:
        return write(path, captured, sha256)
    except OSError as e:
        raise WorkerError(INTERNAL, "cannot write %s: %s" % (path, e)) from None
