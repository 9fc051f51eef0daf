"""Compile errors vs runtime errors of Triton candidates under the interpreter.

Needs triton in this Python (scripts/setup.sh installs it into .venv; run with
`.venv/bin/python -m pytest`); skipped with that reason otherwise.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYTHON_DIR = str(Path(__file__).resolve().parents[1])

SCRIPT = textwrap.dedent('''
    import sys
    sys.path.insert(0, %r)
    from kvault_worker import triton_support
    from kvault_worker.errors import RUNTIME_ERROR, error_from
    triton_support.prepare("cpu")
    import torch, triton, triton.language as tl

    @triton.jit
    def not_constexpr(x, n, BLOCK: tl.constexpr):
        tl.store(x + tl.arange(0, n), 1.0)

    @triton.jit
    def static_fails(x, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK %% 3 == 0)

    @triton.jit
    def device_fails(x, BLOCK: tl.constexpr):
        tl.device_assert(tl.arange(0, BLOCK) < 0, "negative")

    x = torch.zeros(16)
    for name, launch in [("not_constexpr", lambda: not_constexpr[(1,)](x, 16, BLOCK=16)),
                         ("static_fails", lambda: static_fails[(1,)](x, BLOCK=16)),
                         ("device_fails", lambda: device_fails[(1,)](x, BLOCK=16)),
                         ("missing_arg", lambda: static_fails[(1,)](BLOCK=16))]:
        try:
            launch()
            print(name, "ran")
        except Exception as e:
            print(name, error_from(RUNTIME_ERROR, e, "call").kind)
''' % PYTHON_DIR)


def test_front_end_errors_are_compile_errors_and_the_rest_runtime_errors():
    try:
        import triton  # noqa: F401
    except ImportError:
        pytest.skip("no triton in %s (scripts/setup.sh installs it into .venv)" % sys.executable)
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    kinds = dict(line.split() for line in out.stdout.splitlines())
    assert kinds == {"not_constexpr": "compile_error", "static_fails": "compile_error",
                     "device_fails": "runtime_error", "missing_arg": "runtime_error"}
