"""Error kinds of the worker protocol and the mapping of exceptions onto them.

Every failed response carries one kind (docs/worker-protocol.md, "Error kinds"),
a one-line message and a traceback bounded to 8 KiB. Code that runs task or
candidate code wraps it in `attributed(kind, what)`, which turns *any* exception
(SystemExit included, KeyboardInterrupt excluded) into a WorkerError of that kind,
except that memory exhaustion always becomes `oom`.
"""
import re
import traceback

TASK_ERROR = "task_error"
LOAD_ERROR = "load_error"
UNSUPPORTED = "unsupported"
RUNTIME_ERROR = "runtime_error"
COMPILE_ERROR = "compile_error"  # a Triton kernel failed to compile at its first launch
OOM = "oom"
MISMATCH = "mismatch"  # the output breaks the output contract (e.g. a tensor subclass)
POLICY_VIOLATION = "policy_violation"  # forbidden operators or a patched harness
BAD_REQUEST = "bad_request"
INTERNAL = "internal"

MESSAGE_LIMIT = 2000  # characters
TRACEBACK_LIMIT = 8192  # bytes of UTF-8
_TRACEBACK_HEAD = 2048  # bytes kept from the start when the traceback is cut


class WorkerError(Exception):
    """A failure to report to the engine as {"ok": false, "kind": ...}."""

    def __init__(self, kind, message, traceback_text=None):
        super().__init__(message)
        self.kind = kind
        self.message = one_line(message)
        self.traceback_text = traceback_text

    def to_response(self):
        body = {"ok": False, "kind": self.kind, "message": self.message}
        if self.traceback_text:
            body["traceback"] = bound_traceback(self.traceback_text)
        return body


def one_line(text, limit=MESSAGE_LIMIT):
    """Collapses all whitespace runs (newlines included) and bounds the length."""
    text = re.sub(r"\s+", " ", str(text)).strip()
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def bound_traceback(text, limit=TRACEBACK_LIMIT):
    """Keeps the head and the tail (where the exception is) of a long traceback."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    marker = "\n... [%d bytes omitted] ...\n" % (len(data) - limit)
    tail = limit - _TRACEBACK_HEAD - len(marker.encode())
    head = data[:_TRACEBACK_HEAD].decode("utf-8", "ignore")
    rest = data[len(data) - tail:].decode("utf-8", "ignore")
    return head + marker + rest


def describe_exception(exc):
    """`TypeName: message`, e.g. `RuntimeError: CUDA error: ...`."""
    if isinstance(exc, SystemExit):
        return "SystemExit(%r): the code called sys.exit" % (exc.code,)
    text = str(exc)
    name = type(exc).__name__
    return "%s: %s" % (name, text) if text else name


def format_traceback(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def is_out_of_memory(exc):
    if isinstance(exc, MemoryError):
        return True
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is always present in a worker
        return False
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    if not isinstance(exc, RuntimeError):
        return False
    text = str(exc).lower()
    return any(marker in text for marker in _OOM_MARKERS)


# How PyTorch's allocators word exhaustion: CUDA/HIP ("out of memory") and the CPU
# allocator ("can't allocate memory", "not enough memory").
_OOM_MARKERS = ("out of memory", "can't allocate memory", "not enough memory")


def error_from(kind, exc, what):
    """The WorkerError for `exc` raised while doing `what` on behalf of `kind`."""
    if is_out_of_memory(exc):
        kind = OOM
    elif kind == RUNTIME_ERROR and _is_triton_compile_error(exc):
        kind = COMPILE_ERROR
    return WorkerError(kind, "%s: %s" % (what, describe_exception(exc)), format_traceback(exc))


class attributed:
    """Context manager: exceptions inside become WorkerError(kind) (see module doc).

    WorkerErrors raised inside pass through unchanged, so nested attributions
    keep the innermost (most precise) kind.
    """

    def __init__(self, kind, what):
        self.kind = kind
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or isinstance(exc, (WorkerError, KeyboardInterrupt)):
            return False
        raise error_from(self.kind, exc, self.what) from None


def _is_triton_compile_error(exc):
    from kvault_worker.triton_support import is_compile_error
    return is_compile_error(exc)


def bad_request(message):
    return WorkerError(BAD_REQUEST, message)
