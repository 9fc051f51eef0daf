"""Triton candidates: the interpreter switch and the compile/runtime split.

On the cpu backend a Triton candidate runs under Triton's interpreter: TRITON_INTERPRET=1
must be in the environment when `@triton.jit` decorates the kernels (Triton reads it
there), so `prepare` sets it before the candidate file is executed. Only the candidate
worker loads Triton candidates, so the reference worker is never switched.

Triton compiles a kernel at its first launch, inside the candidate's forward, so a
compile error arrives as an exception of the call. `is_compile_error` tells them apart:
- compiled (GPU): any triton.compiler.errors.CompilationError (CompileTimeAssertionFailure
  and UnsupportedLanguageConstruct are subclasses);
- interpreter: Triton wraps every exception raised inside a kernel in InterpreterError;
  the cause is a compile error when it is one the compiler's front end raises for the
  same code (an unknown name or attribute, a wrong type or value given to a
  triton.language function, a failed tl.static_assert). Other causes (a failed
  tl.device_assert, arithmetic errors) are runtime errors.
"""
import importlib
import os
import sys

from kvault_worker.errors import INTERNAL, WorkerError

_FRONT_END_ERRORS = (NameError, AttributeError, TypeError, ValueError, SyntaxError,
                     NotImplementedError)


def prepare(backend):
    """Makes Triton importable for a candidate on `backend` (raises internal if not)."""
    if backend == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        importlib.import_module("triton")
    except Exception as e:  # a missing Triton is the machine's fault, not the kernel's
        raise WorkerError(INTERNAL, "Triton candidates need the triton package in the worker's "
                          "Python (%s): %s" % (sys.executable, e)) from None


def is_compile_error(exc):
    """True when `exc`, raised by a call into a Triton candidate, is a compile error."""
    if "triton" not in sys.modules:
        return False
    errors = _module("triton.compiler.errors")
    compilation_error = getattr(errors, "CompilationError", None)
    if compilation_error is not None and isinstance(exc, compilation_error):
        return True
    interpreter_error = getattr(_module("triton.runtime.errors"), "InterpreterError", None)
    if interpreter_error is None or not isinstance(exc, interpreter_error):
        return False
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return False
    if compilation_error is not None and isinstance(cause, compilation_error):
        return True
    if isinstance(cause, AssertionError):
        return _raised_in(cause, "static_assert")  # the interpreter's is _new_static_assert
    return isinstance(cause, _FRONT_END_ERRORS)


def _module(name):
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def _raised_in(exc, name_part):
    tb = exc.__traceback__
    while tb is not None:
        if name_part in tb.tb_frame.f_code.co_name:
            return True
        tb = tb.tb_next
    return False
