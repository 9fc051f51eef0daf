"""KVAULT_WORKER_PROFILE=DIR: where a worker's time goes, request by request (a
diagnostic for benchmarks, bench/worker_profile.py; docs/worker-protocol.md).

Each request runs under cProfile; its profile goes to DIR/<worker>-<n>-<op>.prof and
a line {"worker", "n", "op", "wall_s", "start_s", "at"} is appended to DIR/<worker>.jsonl:
<worker> is the pid and a random tag (pids repeat across PID namespaces), n counts
the worker's requests from 1, start_s is seconds since the worker's first request,
`at` the request's start in Unix seconds (to line workers up with each other).
The worker must be able to write DIR: with the sandbox on, a worker sees no folder
but its own, so profile with KVAULT_SANDBOX=off.
A folder that cannot be written turns profiling off, silently: the diagnostic must
never change a verification's outcome.
"""
import cProfile
import json
import os
import time

ENV = "KVAULT_WORKER_PROFILE"


class RequestProfiler:
    def __init__(self, folder):
        self.folder = folder
        self.count = 0
        self.worker = "%d_%s" % (os.getpid(), os.urandom(3).hex())
        self.t0 = None

    def call(self, op, handle):
        """handle() under cProfile, its profile and wall time written out."""
        if self.folder is None:
            return handle()
        self.count += 1
        profile = cProfile.Profile()
        at = time.time()
        started = time.perf_counter()
        if self.t0 is None:
            self.t0 = started
        try:
            return profile.runcall(handle)
        finally:
            wall = time.perf_counter() - started
            self._write(op, profile, wall, started - self.t0, at)

    def _write(self, op, profile, wall, start, at):
        name = "%s-%d-%s" % (self.worker, self.count, "".join(c for c in str(op) if c.isalnum() or c == "_")[:32])
        try:
            profile.dump_stats(os.path.join(self.folder, name + ".prof"))
            with open(os.path.join(self.folder, "%s.jsonl" % self.worker), "a") as f:
                f.write(json.dumps({"worker": self.worker, "n": self.count, "op": op, "wall_s": wall,
                                    "start_s": start, "at": at}) + "\n")
        except OSError:
            self.folder = None


def from_environment():
    """A RequestProfiler writing to $KVAULT_WORKER_PROFILE; one that only calls when unset."""
    folder = os.environ.get(ENV) or None
    if folder is not None:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            folder = None
    return RequestProfiler(folder)
