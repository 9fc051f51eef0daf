"""Processes started in an observed call (process_starts.py): a fork of the worker or a
program that is not a compiler is a violation; a compiler's build is not."""
import os
import subprocess
import sys

from kvault_worker import process_starts


def test_a_fork_and_an_interpreter_are_violations_a_compiler_is_not():
    with process_starts.watching():
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    assert "forked" in process_starts.judge()

    with process_starts.watching():
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert "python" in process_starts.judge()

    with process_starts.watching():
        subprocess.run(["cc", "--version"], check=True, capture_output=True)
    assert process_starts.judge() is None

    with process_starts.watching():
        subprocess.run(["cc", "-wrapper", "/bin/true", "--version"], capture_output=True)
    assert "runs other code" in process_starts.judge()

    # Outside the window nothing is noted.
    noted = list(process_starts.STARTED)
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert process_starts.STARTED == noted


def test_programs_are_judged_by_name():
    assert process_starts.judge([("subprocess.Popen", "/usr/bin/gcc-12", ("gcc-12", "-c", "x.c"))]) is None
    assert process_starts.judge([("subprocess.Popen", "/usr/bin/ptxas", ("ptxas", "@opts"))])
    assert process_starts.judge([("os.system", "/bin/sh", ("python -c 1",))])
    for option in ("-fplugin=./p.so", "-B/tmp/passes", "-specs=x", "--plugin=./p.so"):
        assert process_starts.judge([("subprocess.Popen", "gcc", ("gcc", option, "x.c"))]), option
    assert process_starts.judge([("fork_exec", None, ())])
