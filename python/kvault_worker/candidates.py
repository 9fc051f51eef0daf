"""Loading candidates (the `load` request of docs/worker-protocol.md).

Two formats:
- extension: a compiled Python extension (.so) exposing a callable `forward`,
  loaded under its module name with importlib's ExtensionFileLoader;
- kernelbench: a Python file defining `class ModelNew`, executed as a fresh module.
Import failures are load_error; a malformed candidate description is bad_request.
"""
import importlib.machinery
import importlib.util
import os
from dataclasses import dataclass
from typing import Callable, Optional

import torch  # noqa: F401  (extensions link against torch: it must be loaded first)

from kvault_worker import fresh_module
from kvault_worker.errors import LOAD_ERROR, WorkerError, attributed, bad_request

EXTENSION = "extension"
KERNELBENCH = "kernelbench"


@dataclass
class Candidate:
    format: str
    path: str
    module: object
    forward: Optional[Callable] = None  # extension format
    model_new: Optional[type] = None  # kernelbench format


def load_candidate(spec):
    """Loads the candidate described by the request's `candidate` object."""
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
        return _load_kernelbench(path)
    raise bad_request("unknown candidate format %r (expected extension or kernelbench)" % (fmt,))


def release_candidate(candidate):
    if candidate is not None and candidate.format == KERNELBENCH:
        fresh_module.release(candidate.module)


def _load_extension(path, name):
    with attributed(LOAD_ERROR, "extension module does not load"):
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    forward = getattr(module, "forward", None)
    if not callable(forward):
        raise WorkerError(LOAD_ERROR, "extension module has no forward")
    return Candidate(EXTENSION, path, module, forward=forward)


def _load_kernelbench(path):
    with attributed(LOAD_ERROR, "candidate does not import"):
        module = fresh_module.exec_file(path, "candidate")
    model_new = getattr(module, "ModelNew", None)
    if not isinstance(model_new, type):
        fresh_module.release(module)
        if model_new is None:
            raise WorkerError(LOAD_ERROR, "candidate defines no class ModelNew")
        raise WorkerError(LOAD_ERROR, "ModelNew must be a class, got %s" % type(model_new).__name__)
    return Candidate(KERNELBENCH, path, module, model_new=model_new)
