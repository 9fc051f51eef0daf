"""The zygote's process-level helpers (the fork protocol itself is tested from the
engine side: src/worker/zygote_test.cc)."""
import os

import pytest

from kvault_worker import zygote


def _in_child(fn):
    """Runs fn() in a forked child; its return value (a small int) is the exit code."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        except BaseException:
            os._exit(99)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _status_field(name):
    for line in open("/proc/self/status"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return None


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="dropping from the bounding set needs CAP_SETPCAP (root, or uid 0 of the "
                           "sandbox's user namespace, where the zygote's workers run)")
def test_drop_capabilities_empties_every_set_and_sets_no_new_privs():
    def child():
        zygote.drop_capabilities()
        ok = all(int(_status_field(f), 16) == 0 for f in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
        return 0 if ok and _status_field("NoNewPrivs") == "1" else 1

    assert _in_child(child) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a private mount namespace")
def test_after_the_drop_mounting_is_refused():
    def child():
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        # A private mount namespace first: were the drop to fail, the mount below
        # would land there, not on the machine.
        if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
            return 77
        if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) != 0:  # MS_REC | MS_PRIVATE
            return 77
        zygote.drop_capabilities()
        rc = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
        return 0 if rc != 0 and ctypes.get_errno() == 1 else 1  # EPERM

    code = _in_child(child)
    if code == 77:
        pytest.skip("no private mount namespace here")
    assert code == 0
