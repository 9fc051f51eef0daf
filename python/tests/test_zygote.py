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


def _own_mount_namespace():
    """In a forked child: a private mount namespace, so that a mount lands there and
    not on the machine. False where the kernel refuses."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return (libc.unshare(0x00020000) == 0  # CLONE_NEWNS
            and libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) == 0)  # MS_REC | MS_PRIVATE


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
        if not _own_mount_namespace():
            return 77
        zygote.drop_capabilities()
        rc = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
        return 0 if rc != 0 and ctypes.get_errno() == 1 else 1  # EPERM

    code = _in_child(child)
    if code == 77:
        pytest.skip("no private mount namespace here")
    assert code == 0


def test_scrub_sys_path_drops_the_working_directory_always(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.path", ["", str(tmp_path), "/usr/lib/python3/dist-packages"])
    dropped = zygote.scrub_sys_path(str(tmp_path))
    import sys
    assert dropped == ["", str(tmp_path)]
    assert sys.path == ["/usr/lib/python3/dist-packages"]


def test_scrub_sys_path_drops_writable_entries_under_a_read_only_root(tmp_path, monkeypatch):
    """Where the harness is read-only (the sandbox's root), a writable entry is one a
    worker could plant a module in; where the harness is writable (no sandbox) nothing
    can be told apart and only the working directory goes."""
    import sys
    writable, read_only, cwd = tmp_path / "w", tmp_path / "ro", tmp_path / "cwd"
    for d in (writable, read_only, cwd):
        d.mkdir()
    harness = os.path.dirname(os.path.dirname(os.path.abspath(zygote.__file__)))
    for harness_writable in (False, True):
        def access(path, mode, harness_writable=harness_writable):
            if os.path.realpath(path) == os.path.realpath(harness):
                return harness_writable
            return os.path.realpath(path) == str(writable.resolve())
        monkeypatch.setattr(zygote.os, "access", access)
        monkeypatch.setattr("sys.path", [str(writable), str(read_only), str(cwd)])
        zygote.scrub_sys_path(str(cwd))
        expected = [str(writable), str(read_only)] if harness_writable else [str(read_only)]
        assert sys.path == expected, harness_writable


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a private mount namespace")
def test_private_mounts_show_only_the_workers_folder_and_a_bounded_scratch(tmp_path):
    root = tmp_path / "zygote"
    (root / "w1").mkdir(parents=True)
    (root / "w2").mkdir()
    (root / "w2" / "answers").write_text("another worker's")
    marker = "/dev/shm/kvault-zygote-test-%d" % os.getpid()
    open(marker, "w").close()

    def child():
        import errno
        if not _own_mount_namespace():
            return 77
        zygote.private_mounts(str(root), str(root / "w1"), 1 << 20)
        problems = 0
        problems |= (sorted(os.listdir(root)) != ["w1"]) << 0
        problems |= os.path.exists(root / "w2" / "answers") << 1
        with open(root / "w1" / "out.kvt", "w") as f:  # its own folder stays writable
            f.write("output")
        try:
            open(root / "planted.py", "w").close()
            problems |= 1 << 2
        except OSError as e:
            problems |= (e.errno != errno.EROFS) << 2
        problems |= (sorted(os.listdir("/dev/shm")) != ["home", "tmp"]) << 3
        try:
            with open("/dev/shm/tmp/fill", "wb") as f:
                f.write(b"\0" * (2 << 20))
            problems |= 1 << 4
        except OSError as e:
            problems |= (e.errno != errno.ENOSPC) << 4
        open("/dev/shm/home/left", "w").close()
        return problems

    try:
        code = _in_child(child)
        if code == 77:
            pytest.skip("no private mount namespace here")
        assert code == 0, "problem bits %s" % bin(code)
        assert (root / "w1" / "out.kvt").read_text() == "output"  # reached the host
        assert os.path.exists(marker) and not os.path.exists("/dev/shm/home/left")
        assert sorted(os.listdir(root)) == ["w1", "w2"]  # the host's view unchanged
    finally:
        os.unlink(marker)


def test_unnamed_worker_folders_are_private_to_each_zygote(tmp_path, monkeypatch):
    """With the sandbox off the engine names no folder and every lane's zygote shares
    the engine's working directory: two zygotes must not pick the same folder (one
    would remove the other's worker's outputs when its own worker ends)."""
    monkeypatch.chdir(tmp_path)
    a, b = zygote.Zygote(sock=None), zygote.Zygote(sock=None)
    a.serial = b.serial = 1
    fa, fb = a.worker_folder(None), b.worker_folder("")
    assert fa != fb
    assert not fa.startswith(str(tmp_path)) and not fb.startswith(str(tmp_path))
    named = str(tmp_path / "w7")
    assert a.worker_folder(named) == named  # the engine's name, in the zygote's folder
    assert a.worker_folder("/elsewhere/w7") == str(tmp_path / "w1")
    roots = [a.private_root(), b.private_root()]
    for z in (a, b):
        z._serve = lambda: 0
        z.serve()
    assert not any(os.path.exists(r) for r in roots)
