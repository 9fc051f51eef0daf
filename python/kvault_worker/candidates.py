"""Loading candidates (the `load` request of docs/worker-protocol.md).

Three formats:
- extension: a compiled Python extension (.so) exposing a callable `forward`,
  loaded under its module name with importlib's ExtensionFileLoader;
- kernelbench: a Python file defining `class ModelNew`, executed as a fresh module
  (its load_inline calls answered with the modules the engine built: inline_ext.py);
- native: a plain shared library exporting `kvault_forward` (native.py);
- triton: a Python file with `@triton.jit` kernels and `class ModelNew` or a
  `module_fn` entry, executed as a fresh module after triton_support.prepare
  (the interpreter on the cpu backend).
Import failures are load_error; a malformed candidate description is bad_request.
"""
import contextlib
import os
from dataclasses import dataclass
from typing import Callable, Optional

import torch  # noqa: F401  (extensions link against torch: it must be loaded first)

from kvault_worker import fresh_module, inline_ext, native, triton_support
from kvault_worker.errors import LOAD_ERROR, WorkerError, attributed, bad_request

EXTENSION = "extension"
KERNELBENCH = "kernelbench"
NATIVE = "native"
TRITON = "triton"


@dataclass
class Candidate:
    format: str
    path: str
    module: object
    forward: Optional[Callable] = None  # extension format
    model_new: Optional[type] = None  # kernelbench format; triton with ModelNew
    library: Optional[native.NativeLibrary] = None  # native format
    # kernelbench: keeps load_inline answering with the engine's builds while the
    # candidate is loaded (its constructor may call it on every run)
    replay: Optional[contextlib.ExitStack] = None


def load_candidate(spec, backend="cpu"):
    """Loads the candidate described by the request's `candidate` object for a
    worker on `backend`."""
    if not isinstance(spec, dict):
        raise bad_request("'candidate' must be an object")
    fmt, path = spec.get("format"), spec.get("path")
    if not isinstance(path, str) or not os.path.isabs(path):
        raise bad_request("candidate 'path' must be an absolute path")
    if fmt == EXTENSION:
        name = spec.get("module")
        if not isinstance(name, str) or not name.isidentifier():
            raise bad_request("extension candidate needs 'module', a Python identifier")
        return _load_extension(path, name)
    if fmt == KERNELBENCH:
        try:
            built = inline_ext.built_entries(spec)
        except ValueError as e:
            raise bad_request(str(e))
        return _load_kernelbench(path, built)
    if fmt == TRITON:
        return _load_triton(path, backend)
    if fmt == NATIVE:
        library = native.NativeLibrary(path)
        return Candidate(NATIVE, path, library.lib, library=library)
    raise bad_request("unknown candidate format %r (expected extension, kernelbench, native "
                      "or triton)" % (fmt,))


def release_candidate(candidate):
    if candidate is not None and candidate.format in (KERNELBENCH, TRITON):
        fresh_module.release(candidate.module)
    if candidate is not None and candidate.replay is not None:
        candidate.replay.close()


def _load_extension(path, name):
    with attributed(LOAD_ERROR, "extension module does not load"):
        module = fresh_module.exec_extension(path, name)
    forward = getattr(module, "forward", None)
    if not callable(forward):
        raise WorkerError(LOAD_ERROR, "extension module has no forward")
    return Candidate(EXTENSION, path, module, forward=forward)


def _load_kernelbench(path, built=()):
    """`built`: the modules the engine built for the file's load_inline calls
    (inline_ext.py), returned when a call asks for one of them, at import and for
    as long as the candidate stays loaded (ModelNew's constructor runs per run)."""
    replay = contextlib.ExitStack()
    try:
        if built:
            replay.enter_context(inline_ext.replaying(built))
        with attributed(LOAD_ERROR, "candidate does not import"):
            module = fresh_module.exec_file(path, "candidate")
    except BaseException:
        replay.close()
        raise
    model_new = getattr(module, "ModelNew", None)
    if not isinstance(model_new, type):
        fresh_module.release(module)
        replay.close()
        if model_new is None:
            raise WorkerError(LOAD_ERROR, "candidate defines no class ModelNew")
        raise WorkerError(LOAD_ERROR, "ModelNew must be a class, got %s" % type(model_new).__name__)
    return Candidate(KERNELBENCH, path, module, model_new=model_new, replay=replay)


def _load_triton(path, backend):
    """A Triton candidate: ModelNew (called like KernelBench's) or module_fn (called like
    an extension's forward). Its kernels compile at their first launch, not here."""
    triton_support.prepare(backend)
    with attributed(LOAD_ERROR, "candidate does not import"):
        module = fresh_module.exec_file(path, "candidate")
    model_new, module_fn = getattr(module, "ModelNew", None), getattr(module, "module_fn", None)
    if isinstance(model_new, type):
        return Candidate(TRITON, path, module, model_new=model_new)
    if callable(module_fn):
        return Candidate(TRITON, path, module, forward=module_fn)
    fresh_module.release(module)
    raise WorkerError(LOAD_ERROR, "Triton candidate defines neither class ModelNew nor a "
                      "callable module_fn")
