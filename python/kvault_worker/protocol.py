"""The request loop: line-JSON requests on one fd, responses on another.

main() first moves the protocol fds (KVAULT_WORKER_FDS, e.g. "3,4") to high,
close-on-exec descriptors and closes the originals, so nothing a task or
candidate does with fds 3/4 or with child processes can reach the engine's
pipes. Then, per request line, exactly one response line, in order, echoing
the request's `id`. Output of tasks and candidates goes to fds 1/2 as usual.
"""
import fcntl
import json
import os
import sys

from kvault_worker import profiling
from kvault_worker.errors import BAD_REQUEST, INTERNAL, WorkerError, error_from

HIGH_FD = 100  # protocol fds are moved to this number or above
EXIT_BAD_ENVIRONMENT = 2


def parse_fds(text):
    """"3,4" -> (3, 4); raises ValueError when malformed."""
    parts = [int(p) for p in (text or "").split(",")]
    if len(parts) != 2 or parts[0] == parts[1] or min(parts) < 0:
        raise ValueError("KVAULT_WORKER_FDS must be 'READ_FD,WRITE_FD', got %r" % (text,))
    return parts[0], parts[1]


def move_high(fd):
    """A close-on-exec duplicate of `fd` numbered >= HIGH_FD; closes `fd`."""
    try:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, HIGH_FD)
    except OSError:  # e.g. a low RLIMIT_NOFILE: any free number will do
        moved = os.dup(fd)  # os.dup makes non-inheritable fds
    os.set_inheritable(moved, False)
    os.close(fd)
    return moved


class Channel:
    """Reads request lines from one fd and writes response lines to another."""

    def __init__(self, read_fd, write_fd):
        self._reader = open(read_fd, "rb", buffering=1 << 16, closefd=True)
        self._write_fd = write_fd

    def lines(self):
        """Request lines until the engine closes its end."""
        while True:
            line = self._reader.readline()
            if not line:
                return
            if line.strip():
                yield line

    def send(self, response):
        data = (json.dumps(response, allow_nan=False, separators=(",", ":")) + "\n").encode("ascii")
        view = memoryview(data)
        while view:
            written = os.write(self._write_fd, view)
            view = view[written:]


def handle_line(session, line, profiler=None):
    """The response to one request line (never raises, except KeyboardInterrupt).
    `profiler`: a profiling.RequestProfiler the handler runs under."""
    try:
        request = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return {"id": None, "ok": False, "kind": BAD_REQUEST, "message": "malformed JSON: %s" % e}
    if not isinstance(request, dict):
        return {"id": None, "ok": False, "kind": BAD_REQUEST, "message": "a request must be a JSON object"}
    request_id = request.get("id")
    op = request.get("op")
    handler = session.handlers.get(op) if isinstance(op, str) else None
    if handler is None:
        body = WorkerError(BAD_REQUEST, "unknown op %r" % (op,)).to_response()
    else:
        try:
            result = profiler.call(op, lambda: handler(request)) if profiler else handler(request)
            body = {"ok": True, **result}
        except WorkerError as e:
            body = e.to_response()
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # a bug in the worker itself
            body = error_from(INTERNAL, e, "worker error in %s" % op).to_response()
    return {"id": request_id, **body}


class UnusableSession:
    """Stands in when PyTorch cannot be imported: every request but `shutdown` is
    answered with an internal error that says why, so the engine can report it."""

    def __init__(self, reason):
        self.reason = reason
        self.finished = False
        self.handlers = _EveryOp(self._refuse, shutdown=self._shutdown)

    def _refuse(self, request):
        raise WorkerError(INTERNAL, self.reason)

    def _shutdown(self, request):
        self.finished = True
        return {}


class _EveryOp(dict):
    """A handler table that answers every op it does not hold with one handler: no
    list of op names to keep in step with Session's."""

    def __init__(self, fallback, **handlers):
        super().__init__(handlers)
        self.fallback = fallback

    def get(self, op, default=None):
        return super().get(op, self.fallback)


def encode_safely(channel, response):
    """Sends the response; one that cannot be encoded becomes an internal error."""
    try:
        channel.send(response)
    except (TypeError, ValueError) as e:
        channel.send({"id": response.get("id"), "ok": False, "kind": INTERNAL,
                      "message": "worker produced an unencodable response: %s" % e})


def flush_stdio():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def main():
    try:
        read_fd, write_fd = parse_fds(os.environ.get("KVAULT_WORKER_FDS", "3,4"))
        read_fd, write_fd = move_high(read_fd), move_high(write_fd)
    except (ValueError, OSError) as e:
        print("kvault_worker: cannot use the protocol fds: %s" % e, file=sys.stderr)
        return EXIT_BAD_ENVIRONMENT
    channel = Channel(read_fd, write_fd)
    try:
        from kvault_worker.session import Session  # imports torch: after the fds are safe

        session = Session()
    except ImportError as e:
        session = UnusableSession("%s cannot import what the worker needs: %s (set KVAULT_PYTHON to a Python "
                                  "with PyTorch; `kvault doctor` shows what it finds)" % (sys.executable, e))
    else:
        from kvault_worker.integrity import SNAPSHOT
        SNAPSHOT.watch("channel", channel)
        SNAPSHOT.watch("session", session)
    profiler = profiling.from_environment()
    try:
        for line in channel.lines():
            response = handle_line(session, line, profiler)
            flush_stdio()
            encode_safely(channel, response)
            if session.finished:
                break
    except BrokenPipeError:
        return 0  # the engine went away
    flush_stdio()
    return 0
