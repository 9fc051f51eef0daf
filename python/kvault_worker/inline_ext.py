"""KernelBench candidates' `load_inline` modules, built by the engine
(docs/toolchains.md, "load_inline candidates").

A ModelNew file typically builds its kernel at import time with
`torch.utils.cpp_extension.load_inline`, which runs PyTorch's ninja build in a
temporary folder on every run. Instead:

1. `record` (the `record_inline` request) executes the file once in a worker that
   is thrown away afterwards, with a `load_inline` that only notes each call's
   arguments (`normalized_call`) and returns a placeholder module, then constructs
   ModelNew with each case's init inputs (files that build in the constructor) and,
   when nothing was noted yet, calls the first model once (files that build at the
   first forward); the first use of a placeholder ends the execution. The engine
   builds each noted call through its compile cache.
2. `replaying` patches `load_inline` while the candidate is loaded for real (in a
   fresh worker) and for as long as it stays loaded: a call whose normalized
   arguments have the digest of a call the engine built returns that module; any
   other call runs PyTorch's own `load_inline`, as if nothing were patched. So the
   candidate always gets what its arguments ask for: the fast path can only make it
   faster.

Only files whose text mentions `load_inline` are touched (importing
torch.utils.cpp_extension costs time).
"""
import contextlib
import hashlib
import inspect
import json

from kvault_worker import fresh_module
from kvault_worker.errors import describe_exception, one_line

MARKER = "load_inline"
MAX_RECORDED_CALLS = 16
MAX_RECORDED_BYTES = 4 << 20  # of the recorded calls as JSON (the reply stays far below its limit)

# What decides the built module, as `normalized_call` writes it. The other
# arguments (name, build_directory, verbose, keep_intermediates, use_pch) change
# where and how PyTorch builds, not what (the name is noted beside the digest, for the
# engine to check); any other argument the installed PyTorch
# knows is noted under `other` when it is not at its default (the engine then
# leaves the call to PyTorch).
_SOURCE_LISTS = ("cpp_sources", "cuda_sources")
_FLAG_LISTS = ("extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths")
_FLAGS = ("with_cuda", "is_python_module", "with_pytorch_error_handling")
_WHERE_AND_HOW = ("name", "build_directory", "verbose", "keep_intermediates", "use_pch")


class _Recorded(BaseException):
    """Ends the recording execution: the first use of a placeholder module, or the
    bound on what is recorded."""

    def __init__(self, why="the file used a module load_inline returned"):
        super().__init__(why)


def _string_list(value, what):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError("%s must be a string or a list of strings" % what)


def _functions(value):
    """[[name, docstring], ...] in the caller's order, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [[v, v] for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return [[k, v] for k, v in value.items()]
    raise TypeError("functions must be a list of names or a dict of names to docstrings")


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


def normalized_call(signature, args, kwargs):
    """The arguments of one load_inline call as plain JSON data, with its digest
    under "digest". Raises TypeError for arguments PyTorch would reject too."""
    bound = signature.bind(*args, **kwargs)
    given = bound.arguments
    call = {name: _string_list(given.get(name), name) for name in _SOURCE_LISTS}
    call.update({name: _string_list(given.get(name), name) for name in _FLAG_LISTS})
    call["functions"] = _functions(given.get("functions"))
    for name in _FLAGS:
        default = signature.parameters[name].default if name in signature.parameters else None
        call[name] = _jsonable(given.get(name, default))
    other = {}
    for name, parameter in signature.parameters.items():
        if name in call or name in _WHERE_AND_HOW or name not in given:
            continue
        try:
            differs = given[name] is not parameter.default and bool(given[name] != parameter.default)
        except Exception:  # an object that does not compare: not the default
            differs = True
        if differs:
            other[name] = _jsonable(given[name])
    call["other"] = other
    call["digest"] = hashlib.sha256(json.dumps(call, sort_keys=True).encode()).hexdigest()
    # Not what is built (outside the digest), but PyTorch's own build writes it unquoted
    # into the line a shell runs (-DTORCH_EXTENSION_NAME=<name>): the engine checks it.
    if isinstance(given.get("name"), str):
        call["name"] = given["name"]
    return call


def _cpp_extension():
    from torch.utils import cpp_extension  # noqa: PLC0415 (slow: only when a file needs it)
    return cpp_extension


@contextlib.contextmanager
def _patched(replacement):
    cpp_extension = _cpp_extension()
    original = cpp_extension.load_inline
    cpp_extension.load_inline = replacement
    try:
        yield original
    finally:
        cpp_extension.load_inline = original


class _Placeholder:
    """What a recorded call returns: any use ends the recording."""

    def __getattr__(self, name):
        raise _Recorded()

    def __call__(self, *args, **kwargs):
        raise _Recorded()


def mentions_load_inline(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return MARKER in f.read(1 << 22)
    except OSError:
        return False


def record(path, construct=None):
    """Executes the candidate file at `path` with a load_inline that notes its
    calls, then `construct(module, calls)` (constructs ModelNew: construct_models;
    `calls` are those noted so far). Returns
    {"calls": [...], "stopped": why the execution ended early} (no "stopped" when
    both ran to their end). A call noted already is not noted again."""
    calls, size, digests = [], [0], set()
    response = {"calls": calls}
    cpp_extension = _cpp_extension()
    signature = inspect.signature(cpp_extension.load_inline)

    def recording_load_inline(*args, **kwargs):
        call = normalized_call(signature, args, kwargs)
        seen = (call["digest"], call.get("name"))  # a name the engine has not checked is noted too
        if seen in digests:
            return _Placeholder()
        digests.add(seen)
        size[0] += len(json.dumps(call))
        if len(calls) >= MAX_RECORDED_CALLS or size[0] > MAX_RECORDED_BYTES:
            raise _Recorded("more load_inline calls than are noted (%d calls, %d bytes at most)"
                            % (MAX_RECORDED_CALLS, MAX_RECORDED_BYTES))
        calls.append(call)
        return _Placeholder()

    module = None
    with _patched(recording_load_inline):
        try:
            module = fresh_module.exec_file(path, "record")
            if construct is not None:
                construct(module, calls)
        except _Recorded as e:
            response["stopped"] = str(e)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # the load itself will report it as the candidate's
            response["stopped"] = one_line(describe_exception(e), 500)
        finally:
            fresh_module.release(module)
    return response


def construct_models(module, init_inputs):
    """Constructs the module's ModelNew, if it has that class, once for each
    distinct argument list in `init_inputs` (a list of callables returning one).
    Returns the models, in that order."""
    model_new = getattr(module, "ModelNew", None)
    if not isinstance(model_new, type):
        return []
    seen, models = [], []
    for make in init_inputs:
        args = make()
        if any(_same_arguments(args, other) for other in seen):
            continue
        seen.append(args)
        models.append(model_new(*args))
    return models


def _same_arguments(a, b):
    try:
        return len(a) == len(b) and all(type(x) is type(y) and bool(x == y) for x, y in zip(a, b))
    except Exception:  # tensors and other values that do not compare to one bool
        return False


def _load_built(entry):
    return fresh_module.exec_extension(entry["path"], entry["module"])


@contextlib.contextmanager
def replaying(built):
    """While active, load_inline returns the module in `built` (a list of {digest,
    path, module}) whose digest its arguments have, else runs PyTorch's own."""
    by_digest = {entry["digest"]: entry for entry in built}
    loaded = {}
    pytorchs = _cpp_extension().load_inline
    signature = inspect.signature(pytorchs)

    def replaying_load_inline(*args, **kwargs):
        try:
            digest = normalized_call(signature, args, kwargs)["digest"]
        except TypeError:
            digest = None  # PyTorch's own load_inline says what is wrong
        if digest not in by_digest:
            return pytorchs(*args, **kwargs)
        if digest not in loaded:
            loaded[digest] = _load_built(by_digest[digest])
        return loaded[digest]

    with _patched(replaying_load_inline):
        yield


def built_entries(spec):
    """The candidate object's "inline" list, checked: [{digest, path, module}]."""
    entries = spec.get("inline", [])
    if not isinstance(entries, list):
        raise ValueError("'inline' must be a list")
    for e in entries:
        if not (isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("digest", "path", "module"))
                and e["module"].isidentifier()):
            raise ValueError("each 'inline' entry needs strings digest, path and module (an identifier)")
    return entries
