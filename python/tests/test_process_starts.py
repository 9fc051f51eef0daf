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


def test_options_handed_on_to_another_program_are_judged_too():
    # nvcc hands -Xcompiler's items to g++, g++ hands -Wl's to ld: a program prefix, a
    # wrapper or a plugin there runs code as surely as on the command line itself.
    for argv in (("nvcc", "-Xcompiler=-B/tmp/passes", "x.cu"), ("nvcc", "-Xcompiler", "-O3,-wrapper", "x.cu"),
                 ("nvcc", "--compiler-options=-O3,-fplugin=./p.so", "x.cu"), ("nvcc", "-Xlinker", "-plugin,p.so"),
                 ("gcc", "-Wl,-plugin,./p.so", "x.c"), ("gcc", "-Wl,--plugin=./p.so", "x.c"),
                 ("nvcc", "-Xptxas=@opts", "x.cu"), ("gcc", "-Wp,@opts", "x.c"),
                 ("nvcc", "-ccbin", "/tmp/cc", "x.cu"), ("nvcc", "--compiler-bindir=/tmp", "x.cu"),
                 ("nvcc", "-run", "x.cu"), ("nvcc", "--run-args=1", "x.cu"), ("nvcc", "-optf", "opts"),
                 ("clang", "--ld-path=/tmp/ld", "x.c")):
        assert "runs other code" in process_starts.judge([("subprocess.Popen", argv[0], argv)]), argv
    # What a JIT's own build passes stays a compiler's build.
    for argv in (("gcc", "x.c", "-O3", "-shared", "-fPIC", "-Wl,-rpath,/usr/lib", "-o", "x.so", "-lcuda"),
                 ("nvcc", "-Xcompiler", "-fPIC,-O3", "-Xptxas=-v", "-c", "x.cu", "-o", "x.o"),
                 ("ptxas", "-lineinfo", "-v", "--gpu-name=sm_90", "x.ptx", "-o", "x.o")):
        assert process_starts.judge([("subprocess.Popen", argv[0], argv)]) is None, argv
