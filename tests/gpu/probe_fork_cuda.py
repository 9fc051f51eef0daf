"""Which step of the worker zygote's fork path leaves CUDA unusable in the forked
worker? Each variant runs in a fresh interpreter: it imports (torch alone, or the
whole worker as the zygote does), then forks a child that optionally enters a new
PID namespace (and a new mount namespace with its own /proc) and drops every
capability, as the zygote's keeper and worker do, and the child asks
torch.cuda.is_available(), printing PyTorch's warnings.

    python3 tests/gpu/probe_fork_cuda.py            (repository root, on a GPU machine)
"""
import ctypes
import os
import subprocess
import sys

CLONE_NEWNS, CLONE_NEWPID = 0x00020000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
VARIANTS = {
    "torch-only": ("torch", []),
    "worker": ("worker", []),
    "worker+pidns": ("worker", ["pidns"]),
    "worker+pidns+proc": ("worker", ["pidns", "proc"]),
    "worker+dropcaps": ("worker", ["dropcaps"]),
    "worker+pidns+dropcaps": ("worker", ["pidns", "dropcaps"]),
    "worker+pidns+proc+dropcaps": ("worker", ["pidns", "proc", "dropcaps"]),
}


def run_variant(name):
    what, steps = VARIANTS[name]
    sys.path.insert(0, os.path.join(os.getcwd(), "python"))
    import torch  # noqa: F401
    if what == "worker":
        import kvault_worker.session  # noqa: F401
    libc = ctypes.CDLL(None, use_errno=True)
    maps = open("/proc/self/maps").read()
    print("%s: parent has libcuda mapped: %s" % (name, "libcuda" in maps), flush=True)
    if "pidns" in steps:
        flags = CLONE_NEWPID | (CLONE_NEWNS if "proc" in steps else 0)
        if libc.unshare(flags) != 0:
            print("%s: unshare failed: %s" % (name, os.strerror(ctypes.get_errno())))
            return 1
    pid = os.fork()
    if pid == 0:
        try:
            if "proc" in steps:
                libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)
                if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
                    print("%s: mount proc failed: %s" % (name, os.strerror(ctypes.get_errno())))
            if "dropcaps" in steps:
                from kvault_worker.zygote import drop_capabilities
                drop_capabilities()
            import warnings
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ok = torch.cuda.is_available()
                count = torch.cuda.device_count()
            print("%s: child pid %d available=%s count=%d warnings=%s" % (
                name, os.getpid(), ok, count, [str(w.message)[:300] for w in caught]), flush=True)
        except BaseException as e:
            print("%s: child error %r" % (name, e), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(run_variant(sys.argv[1]))
    for variant in VARIANTS:
        subprocess.run([sys.executable, __file__, variant], timeout=120)
