"""Running the trusted tests of an imported GEAK-eval task (docs/geak-formats.md).

Task files made by `kvault import-geak` call `run_reference` (the task's own
implementation) and candidates call `run_candidate` (the candidate's module globals);
both run the same trusted test code and return its outputs, which the engine compares
like any other output. Any exception from the tests is the caller's failure: a call
that does not succeed.

tritonbench-g: the test code runs as a module in a copy of the implementation's
  namespace; the outputs are its `result_gold` variable, or else the return value of
  its only `test_*` function.
rocmbench: every pytest-style `test_*` function is called once per combination of its
  `pytest.mark.parametrize` values, with `request` (`request.node.name` is pytest's id,
  e.g. `test_add[1024-float32]`) and `tmp_path` (a folder) when it asks for them; each
  call saves a dict with `_CALL_SUCCESS_` to a .pt file in tmp_path. The outputs are
  {file stem: dict without _CALL_SUCCESS_}; a missing or false _CALL_SUCCESS_ raises.
"""
import inspect
import itertools
import os
import pathlib
import tempfile
import types

import torch

TRITONBENCH_G = "tritonbench-g"
ROCMBENCH = "rocmbench"
CALL_SUCCESS = "_CALL_SUCCESS_"


class GeakTestFailure(Exception):
    """The trusted tests ran but report that the implementation's call failed."""


def run_reference(fmt, implementation, tests):
    """Executes the task's implementation in a fresh namespace, then its tests."""
    _prepare_interpreter()
    namespace = {"__name__": "kvault_geak_reference", "__builtins__": __builtins__}
    _exec_from_file(implementation, "reference_implementation", namespace)
    return _run(fmt, namespace, tests)


def _exec_from_file(source, stem, namespace):
    """Runs `source` from a real .py file in a private temporary folder: Triton's
    @jit reads a kernel's source with inspect, which needs a file (Triton 3.6 refuses
    code compiled from a string)."""
    folder = tempfile.mkdtemp(prefix="kvault-geak-")
    path = os.path.join(folder, stem + ".py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    namespace["__file__"] = path
    exec(compile(source, path, "exec"), namespace)


def run_candidate(fmt, candidate_globals, tests):
    """Runs the tests on the candidate's implementation (a copy of its globals)."""
    return _run(fmt, dict(candidate_globals), tests)


def _prepare_interpreter():
    # The reference worker runs trusted Triton code too: without a GPU it needs
    # Triton's interpreter, switched on before @triton.jit decorates the kernels.
    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


def _run(fmt, namespace, tests):
    if fmt == TRITONBENCH_G:
        return _run_tritonbench_g(namespace, tests)
    if fmt == ROCMBENCH:
        return _run_rocmbench(namespace, tests)
    raise ValueError("unknown GEAK format %r" % (fmt,))


def _run_tritonbench_g(namespace, tests):
    _exec_from_file(tests, "trusted_tests", namespace)
    if "result_gold" in namespace:
        return namespace["result_gold"]
    functions = _test_functions(namespace)
    if len(functions) != 1:
        raise GeakTestFailure("the tests define no result_gold and %d test_* functions "
                              "(need exactly one)" % len(functions))
    return functions[0][1]()


def _run_rocmbench(namespace, tests):
    _ensure_pytest()
    _exec_from_file(tests, "trusted_tests", namespace)
    functions = _test_functions(namespace)
    if not functions:
        raise GeakTestFailure("the tests define no test_* function")
    outputs = {}
    with tempfile.TemporaryDirectory(prefix="kvault-rocmbench-") as tmp:
        for name, fn in functions:
            for node_name, kwargs in _parametrized_calls(name, fn):
                _call_test(fn, node_name, kwargs, tmp)
        for file in sorted(os.listdir(tmp)):
            if file.endswith(".pt"):
                outputs[file[:-3]] = _saved_outputs(os.path.join(tmp, file))
    if not outputs:
        raise GeakTestFailure("the tests saved no .pt output files")
    return outputs


def _ensure_pytest():
    """The tests `import pytest` for its marks; where pytest is not installed, a
    stand-in module offers pytest.mark.<name>(*args) marks, which is all they use."""
    import sys
    try:
        import pytest  # noqa: F401
        return
    except ImportError:
        pass

    class _Mark:
        def __init__(self, name, args):
            self.name, self.args = name, args

        def __call__(self, fn):
            fn.pytestmark = getattr(fn, "pytestmark", []) + [self]
            return fn

    class _Marks:
        def __getattr__(self, name):
            return lambda *args, **kwargs: _Mark(name, args)

    sys.modules["pytest"] = types.SimpleNamespace(mark=_Marks())


def _test_functions(namespace):
    return sorted((k, v) for k, v in namespace.items()
                  if k.startswith("test_") and isinstance(v, types.FunctionType))


def _parametrized_calls(name, fn):
    """(pytest-style node name, keyword arguments) for each parameter combination."""
    axes = []
    for mark in getattr(fn, "pytestmark", []):  # the bottom decorator first, as in pytest ids
        if getattr(mark, "name", None) != "parametrize":
            continue
        argnames, argvalues = mark.args[0], mark.args[1]
        names = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
        rows = [tuple(v) if len(names) > 1 else (v,) for v in argvalues]
        axes.append((names, rows))
    calls = []
    for combo in itertools.product(*[rows for _, rows in axes]):
        kwargs, ids = {}, []
        for (names, _), row in zip(axes, combo):
            kwargs.update(zip(names, row))
            ids.extend(str(v) for v in row)
        calls.append(("%s[%s]" % (name, "-".join(ids)) if ids else name, kwargs))
    return calls


def _call_test(fn, node_name, kwargs, tmp):
    wanted = inspect.signature(fn).parameters
    if "request" in wanted:
        kwargs["request"] = types.SimpleNamespace(node=types.SimpleNamespace(name=node_name))
    if "tmp_path" in wanted:
        kwargs["tmp_path"] = pathlib.Path(tmp)
    fn(**kwargs)


def _saved_outputs(path):
    saved = torch.load(path)
    name = os.path.basename(path)
    if not isinstance(saved, dict):
        raise GeakTestFailure("%s does not hold a dict" % name)
    if saved.get(CALL_SUCCESS) is not True:
        raise GeakTestFailure("%s: %s is %r, not True" % (name, CALL_SUCCESS, saved.get(CALL_SUCCESS)))
    return {k: v for k, v in saved.items() if k != CALL_SUCCESS}
