"""Processes the candidate's code starts while its calls are observed under an observed
policy (custom_kernel, fused; op_policy.Enforcer).

The operator observer sees every operator dispatched in the worker's process, on any
thread; a process of the candidate's making is out of its sight: a fork of the worker
computes with PyTorch in its own copy of memory and hands the product back through
shared memory (`matmul_kernel.fork`), another Python interpreter computes it and hands
it back through a file (`matmul_kernel.subprocess`): both passed custom_kernel before.
An honest candidate starts no process in its calls but a compiler's (Triton builds its
kernels and launcher on first use: the C compiler, ptxas; ldconfig to find the driver).

So every process start in the window is noted: Python's audit events (os.fork,
os.forkpty, os.exec*, os.posix_spawn*, os.spawn*, os.system, subprocess.Popen) and
`_posixsubprocess.fork_exec`, wrapped here, which subprocess and multiprocessing's
spawn and forkserver call without an audit event. A fork, or a program that is not a
compiler or one of its tools, or a compiler given an option that runs other code (a
wrapper, a plugin, a response file, `-B`, a specs file), is a violation (`judge`).

Not seen: fork or exec called from native code (an extension, ctypes), a fresh copy of
the `_posixsubprocess` module made by the candidate, processes started outside an
observed call (the timed calls are not observed: docs/adversarial.md, "Policy").
"""
import os
import sys

# Basenames of the programs an honest call may start (a JIT's build on first use); a
# versioned compiler (gcc-12, clang-17) too.
TOOLS = frozenset(("cc", "gcc", "g++", "c++", "clang", "clang++", "ld", "ld.lld", "lld", "as", "ldconfig",
                   "ptxas", "nvcc", "cicc", "fatbinary", "nvlink", "nvdisasm", "cuobjdump", "hipcc",
                   "ld.gold", "ld.bfd", "x86_64-linux-gnu-gcc", "x86_64-linux-gnu-g++", "rocm_agent_enumerator",
                   "rocminfo"))
_VERSIONED = ("gcc-", "g++-", "clang-", "clang++-", "x86_64-linux-gnu-gcc-", "x86_64-linux-gnu-g++-")
# Options through which a compiler or linker runs code of the caller's choosing: a
# wrapper around its passes, a plugin, a response file of more options, a folder its
# passes are taken from, a specs file; nvcc's host compiler (-ccbin), options file and
# --run (the program it built); clang's linker (--ld-path).
_RUNS_CODE = ("-wrapper", "-B", "-plugin", "--plugin", "-specs", "--specs", "-ccbin", "--compiler-bindir",
              "-optf", "--options-file", "-run", "--run", "--ld-path")
_RUNS_CODE_PREFIXES = ("-wrapper=", "@", "-fplugin", "-B", "-plugin=", "--plugin=", "-specs=", "--specs=",
                       "-ccbin=", "--compiler-bindir=", "-optf=", "--options-file=", "--run-args", "--ld-path=")
# Options that hand a comma-separated list of options on to another program (nvcc's to
# the host compiler, ptxas, nvlink and the linker; g++'s to ld, as and cpp): each item
# is judged as an option of its own, whether the list is joined (`-Xcompiler=-B/x`,
# `-Wl,-plugin,p.so`) or the next argument (`-Xcompiler -B/x`).
_FORWARDS = ("-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options", "-Xptxas", "--ptxas-options",
             "-Xnvlink", "--nvlink-options", "-Xarchive", "--archive-options", "-Xassembler", "-Xpreprocessor")
_FORWARDS_JOINED = tuple(f + "=" for f in _FORWARDS) + ("-Wl,", "-Wa,", "-Wp,")
_FORKS = ("os.fork", "os.forkpty")
_STARTS = {"os.exec": 0, "os.posix_spawn": 0, "os.spawn": 1, "subprocess.Popen": 0}

_WATCHING = []  # non-empty while a call is observed
STARTED = []    # (what, program, arguments) of each start noted while watching


def _audit(event, args):
    if not _WATCHING:
        return
    if event in _FORKS:
        STARTED.append((event, None, ()))
    elif event == "os.system":
        STARTED.append((event, "/bin/sh", tuple(args)))
    elif event in _STARTS:
        program = args[_STARTS[event]] if len(args) > _STARTS[event] else None
        argv = args[_STARTS[event] + 1] if len(args) > _STARTS[event] + 1 else ()
        if event == "subprocess.Popen" and program is None and argv:
            program = argv[0] if isinstance(argv, (list, tuple)) else argv
        STARTED.append((event, program, _strings(argv)))


def _strings(argv):
    if isinstance(argv, (str, bytes, os.PathLike)):
        return (os.fsdecode(argv),)
    try:
        return tuple(os.fsdecode(a) if isinstance(a, (str, bytes, os.PathLike)) else repr(a) for a in argv)
    except TypeError:
        return ()


sys.addaudithook(_audit)

try:
    import _posixsubprocess
    _fork_exec = _posixsubprocess.fork_exec

    def _noted_fork_exec(*args, **kwargs):
        if _WATCHING:
            programs = args[1] if len(args) > 1 else None
            program = programs[0] if isinstance(programs, (list, tuple)) and programs else None
            STARTED.append(("fork_exec", os.fsdecode(program) if isinstance(program, (str, bytes)) else None,
                            _strings(args[0]) if args else ()))
        return _fork_exec(*args, **kwargs)

    _posixsubprocess.fork_exec = _noted_fork_exec
except (ImportError, AttributeError):  # not a POSIX system
    pass


class watching:
    """Notes the process starts inside the block (STARTED is emptied first)."""

    def __enter__(self):
        del STARTED[:]
        _WATCHING.append(True)
        return self

    def __exit__(self, *exc):
        _WATCHING.pop()
        return False


def judge(started=None):
    """Why the starts noted break the policy, or None."""
    for what, program, argv in STARTED if started is None else started:
        if what in _FORKS:
            return "the candidate forked its worker (%s): the copy's operators are out of the observer's " \
                   "sight" % what
        name = os.path.basename(os.fsdecode(program)) if isinstance(program, (str, bytes, os.PathLike)) else None
        if name is None or not (name in TOOLS or name.startswith(_VERSIONED)):
            return "the candidate started a program (%s) whose work is out of the operator observer's " \
                   "sight; only a compiler's build may start one" % (name or "unknown")
        if any(a in _RUNS_CODE or a.startswith(_RUNS_CODE_PREFIXES) for a in _options(argv[1:])):
            return "the candidate started %s with an option that runs other code (a wrapper, a plugin, " \
                   "a response file, a program prefix, a specs file or another compiler)" % name
    return None


def _options(arguments):
    """The arguments, and each item of a list another program is handed (_FORWARDS)."""
    forwarded = False
    for a in arguments:
        yield a
        joined = next((f for f in _FORWARDS_JOINED if a.startswith(f)), None)
        if forwarded or joined:
            yield from a[len(joined or ""):].split(",")
        forwarded = a in _FORWARDS
