"""Executes a Python file as a new, uniquely named module; loads a compiled
extension module from its path (exec_extension).

Task and candidate files are never imported through the normal import system:
each load compiles the file's current text (no bytecode cache is read or
written) into a module named `_kvault_<role>_<n>_<stem>` that no other load
shares. The module is registered in sys.modules only while it is in use
(some libraries look classes up there, e.g. inspect.getsource); `release`
removes it again.
"""
import importlib.machinery
import importlib.util
import itertools
import re
import sys
import types
from pathlib import Path

_counter = itertools.count(1)


def _unique_name(role, path):
    stem = re.sub(r"\W", "_", Path(path).stem) or "module"
    return "_kvault_%s_%d_%s" % (role, next(_counter), stem)


def exec_file(path, role, code=None):
    """Runs the file at `path` (or `code`, compiled from it) in a fresh module and
    returns the module.

    Raises whatever reading, compiling or executing the file raises; the
    module is then not left in sys.modules.
    """
    name = _unique_name(role, path)
    if code is None:
        code = compile(Path(path).read_bytes(), str(path), "exec", dont_inherit=True)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def release(module):
    """Forgets a module made by exec_file (idempotent; None is ignored)."""
    if module is not None and sys.modules.get(module.__name__) is module:
        del sys.modules[module.__name__]


def exec_extension(path, name):
    """The compiled extension module at `path`, initialised as `name` (its PyInit_
    name), without the import system's search. Raises whatever loading raises."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
