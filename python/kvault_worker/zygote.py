"""The worker zygote: `python -m kvault_worker.zygote` (docs/worker-protocol.md, "Zygote").

Starting a worker costs a second or more of imports (PyTorch above all), which used
to be paid again for every candidate. The zygote pays it once per lane: it imports
the worker's modules, then forks one fresh worker per candidate on request. It runs
no task or candidate code itself, never touches a GPU (a CUDA context does not
survive fork) and never runs a PyTorch operator (an OpenMP pool does not either).

The engine talks to it over a SOCK_SEQPACKET socket on fd KVAULT_ZYGOTE_FD; every
message is one JSON object:
  zygote -> engine, once: {"ready": true, "pid_namespace": bool, "pid": N}
  engine -> zygote: {"op": "fork", "name": "c17"} with four descriptors attached:
      requests (read end), responses (write end), log (write end), status (write end)
  zygote -> engine: {"pid": N} with a pidfd of the new process attached, or
      {"error": "..."} without one.
End of input on the socket ends the zygote.

Each fork makes a "keeper" process, the one the engine holds a pidfd of. Where the
zygote may (in the sandbox's user namespace), the keeper makes new PID, mount and IPC
namespaces; their init forks the worker, reaps everything and, when the worker ends,
writes its wait status (4 bytes, native int) on the status descriptor and exits: the
kernel then kills everything the candidate started, even processes that left its
process group.
That init also mounts a /proc of the new namespace (in a mount namespace of its own):
the worker's pids and /proc must agree, or CUDA's initialisation fails (error 304,
measured on the H200), and the worker sees no other process of the sandbox.
Without that namespace the keeper itself forks and waits for the worker. The engine
kills a worker by killing the keeper through the pidfd; the rest follows by
parent-death signals (and by the namespace's end).

That init also makes the worker's private mounts (docs/sandbox.md, "Workers forked
by the zygote"): the zygote's folder shows only the worker's own folder (named by the
engine in the fork request: {"op": "fork", "folder": ...}; the worker writes its
outputs there), and /dev/shm is a fresh bounded tmpfs holding HOME and TMPDIR. Nothing
a worker writes is seen by another, and it all ends with the worker.

The worker closes what it must not keep, works in its own folder (the working
directory), drops every capability and every writable folder from sys.path before it
reads its first request.
"""
import ctypes
import ctypes.util
import importlib
import json
import os
import shutil
import signal
import socket
import struct
import sys
import tempfile

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    0x1, 0x2, 0x4, 0x8, 0x20, 0x1000, 0x4000, 0x40000)
O_PATH = 0o10000000
# A worker's own scratch and, in it, its HOME and TMPDIR (as src/sandbox/policy.h).
PRIVATE_SCRATCH, PRIVATE_HOME, PRIVATE_TMP = "/dev/shm", "/dev/shm/home", "/dev/shm/tmp"
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
NR_CAPSET = {"x86_64": 126, "aarch64": 91}
MAX_MESSAGE = 1 << 16
EXIT_SETUP_FAILED = 125

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def prctl(option, arg2=0, arg3=0):
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), ctypes.c_ulong(arg3),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), "prctl(%d)" % option)


def drop_capabilities():
    """Empties the ambient, bounding, effective, permitted and inheritable sets and
    sets no_new_privs: the worker cannot undo the sandbox's mounts or gain privilege.
    Raises OSError when the kernel refuses."""
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        last = 63
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass  # kernels before 4.3 have no ambient set
    for cap in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            _check(-1, "drop capability %d from the bounding set" % cap)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    header = struct.pack("Ii", LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two __user_cap_data_struct, all zero
    nr = NR_CAPSET.get(os.uname().machine)
    if nr is None:
        raise OSError(0, "capset: unknown syscall number on %s" % os.uname().machine)
    _check(_libc.syscall(ctypes.c_long(nr), ctypes.c_char_p(header), ctypes.c_char_p(data)), "capset")
    # Read back: a bit left anywhere must not pass (one left in the bounding set would
    # come back with the next exec of a program).
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if name in fields and int(fields[name].strip(), 16) != 0:
            raise OSError(0, "%s still %s after dropping every capability" % (name, fields[name].strip()))


def mount_own_proc():
    """In the init of a new PID namespace that has a new mount namespace too: keeps
    later mounts to this namespace and mounts a /proc of the PID namespace on /proc.
    Raises OSError when the kernel refuses."""
    _check(_libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "make mounts private")
    _check(_libc.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOEXEC), None),
           "mount /proc")


def _mount(source, target, fstype, flags, data, what):
    def enc(v):
        return None if v is None else v.encode()
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), what)


def private_mounts(root, folder, scratch_bytes):
    """In the worker's own mount namespace (after mount_own_proc): the zygote's folder
    `root` shows only the worker's `folder` (writable; every other worker's folder is
    gone), and /dev/shm is a fresh tmpfs of `scratch_bytes` with home/ and tmp/ (the
    worker's HOME and TMPDIR), which ends with the namespace. Raises OSError when the
    kernel refuses."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | O_PATH | os.O_CLOEXEC)
    try:
        hidden = MS_NOSUID | MS_NODEV | MS_NOEXEC
        _mount("tmpfs", root, "tmpfs", hidden, "size=64k,mode=711", "hide the zygote's folder")
        os.mkdir(os.path.join(root, os.path.basename(folder)), 0o711)
        _mount("/proc/self/fd/%d" % fd, folder, None, MS_BIND, None, "keep the worker's folder")
    finally:
        os.close(fd)
    _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | hidden, None, "the zygote's folder read-only")
    _mount("tmpfs", PRIVATE_SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV,
           "size=%d,nr_inodes=65536,mode=1777" % scratch_bytes, "private tmpfs on " + PRIVATE_SCRATCH)
    for path in (PRIVATE_HOME, PRIVATE_TMP):
        os.mkdir(path, 0o700)


def scrub_sys_path(cwd):
    """Drops every sys.path entry a worker could plant a module in: the working
    directory ('' included) always, and, where the root is read-only (the harness is
    not writable), every writable folder or file. Returns the dropped entries."""
    harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    read_only_root = not os.access(harness, os.W_OK)
    here = os.path.realpath(cwd)
    kept, dropped = [], []
    for entry in sys.path:
        full = os.path.realpath(entry or cwd)
        if full == here or (read_only_root and os.access(full, os.W_OK)):
            dropped.append(entry)
        else:
            kept.append(entry)
    sys.path[:] = kept
    sys.path_importer_cache.clear()
    return dropped


def can_make_pid_namespace():
    """True when a child may create PID, mount and IPC namespaces and mount that
    namespace's /proc in it (throwaway forks try): without its own /proc, a worker in
    a PID namespace cannot start CUDA, so it gets no namespace at all."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if _libc.unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC) == 0:
                init = os.fork()
                if init == 0:
                    try:
                        mount_own_proc()
                        os._exit(0)
                    except BaseException:
                        os._exit(1)
                _, status = os.waitpid(init, 0)
                code = os.waitstatus_to_exitcode(status)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _worker(fds, status_w, folder, private):
    """The worker process: protocol fds on 3 and 4, log on 1 and 2. `private`: /dev/shm
    is its own (private_mounts). Never returns."""
    requests, responses, log = fds
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.close(status_w)
        null = os.open(os.devnull, os.O_RDONLY)
        for src, dst in ((null, 0), (log, 1), (log, 2), (requests, 3), (responses, 4)):
            os.dup2(src, dst)
        os.closerange(5, 1 << 16)
        os.makedirs(folder, exist_ok=True)
        os.chdir(folder)
        # HOME, scratch and the build caches: in its own /dev/shm, else in its own folder.
        # Never shared with another worker: a build planted under another candidate's
        # module name would be loaded.
        home, tmp = (PRIVATE_HOME, PRIVATE_TMP) if private else (folder, folder)
        os.environ.update(HOME=home, TMPDIR=tmp, TORCH_EXTENSIONS_DIR=os.path.join(tmp, "torch_extensions"),
                          TRITON_CACHE_DIR=os.path.join(tmp, "triton"), KVAULT_WORKER_FDS="3,4")
        for name in ("KVAULT_ZYGOTE_FD", "KVAULT_ZYGOTE_DROP_CAPS", "KVAULT_SANDBOX_SCRATCH_BYTES"):
            os.environ.pop(name, None)
        if DROP_CAPS:
            drop_capabilities()
        scrub_sys_path(folder)
        prctl(PR_SET_DUMPABLE, 1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        import tempfile
        tempfile.tempdir = None
        code = ENTRY[0]()
    except BaseException as e:  # setup failed: say why on the log, exit distinctly
        try:
            os.write(2, ("kvault zygote: cannot start the worker: %s\n" % e).encode())
        except OSError:
            pass
        code = EXIT_SETUP_FAILED
    from kvault_worker.protocol import flush_stdio
    flush_stdio()
    os._exit(code)


def _supervise(fds, folder, private=False):
    """Forks the worker and waits for it, reaping every other process that ends
    meanwhile (as the init of a PID namespace must); writes the worker's wait status
    on the status descriptor. Never returns."""
    requests, responses, log, status_w = fds
    status = EXIT_SETUP_FAILED << 8
    try:
        pid = os.fork()
        if pid == 0:
            _worker((requests, responses, log), status_w, folder, private)
        for fd in (requests, responses, log):
            os.close(fd)
        while True:
            done, st = os.waitpid(-1, 0)
            if done == pid:
                status = st
                break
    except BaseException as e:
        try:
            os.write(log, ("kvault zygote: cannot fork the worker: %s\n" % e).encode())
        except OSError:
            pass
    try:
        os.write(status_w, struct.pack("i", status))
    except OSError:
        pass
    os._exit(0)


def _keeper(fds, new_pid_namespace, root, folder):
    """The zygote's child, the process the engine holds a pidfd of. With a PID
    namespace, its child is that namespace's init, which supervises the worker (the
    worker itself must not be init: init ignores signals it sends itself, such as a
    candidate's own SIGSEGV). Never returns."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.setsid()
        os.makedirs(folder, 0o700, exist_ok=True)
        if new_pid_namespace:
            _check(_libc.unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC),
                   "unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC)")
            pid = os.fork()
            if pid == 0:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                try:
                    mount_own_proc()
                    if TMP_BYTES > 0:
                        private_mounts(root, folder, TMP_BYTES)
                except BaseException as e:
                    os.write(fds[2], ("kvault zygote: cannot make the worker's mounts: %s\n" % e).encode())
                    os._exit(EXIT_SETUP_FAILED)
                _supervise(fds, folder, TMP_BYTES > 0)
            for fd in fds:
                os.close(fd)
            os.waitpid(pid, 0)
            os._exit(0)
    except BaseException as e:
        try:
            os.write(fds[2], ("kvault zygote: cannot make the worker's namespace: %s\n" % e).encode())
        except OSError:
            pass
        os._exit(EXIT_SETUP_FAILED)
    _supervise(fds, folder)


class Zygote:
    def __init__(self, sock):
        self.sock = sock
        self.root = os.getcwd()
        self.children = {}  # keeper pid -> its worker's folder
        self.serial = 0
        self._private_root = None  # made on first need (private_root), removed by serve's end

    def worker_folder(self, named):
        """The folder of the next worker: the one the engine named, directly in the
        zygote's own; else one the zygote picks. Without a name (the sandbox off: the
        zygote's folder is the engine's working directory, shared with other lanes'
        zygotes) it goes in a private folder of this zygote's, so that no zygote
        removes another's worker's folder."""
        if not named:
            return os.path.join(self.private_root(), "w%d" % self.serial)
        if not isinstance(named, str) or os.path.dirname(os.path.realpath(named)) != os.path.realpath(self.root):
            return os.path.join(self.root, "w%d" % self.serial)
        return named

    def private_root(self):
        if self._private_root is None:
            self._private_root = tempfile.mkdtemp(prefix="kvault-zygote-")
        return self._private_root

    def reap(self):
        """Reaps finished keepers and removes their workers' folders."""
        while self.children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            shutil.rmtree(self.children.pop(pid, ""), ignore_errors=True)

    def fork(self, request, fds):
        if request.get("op") != "fork" or len(fds) != 4:
            for fd in fds:
                os.close(fd)
            return {"error": "expected a fork request with 4 descriptors"}, None
        self.serial += 1
        # The engine names the folder: it reads the worker's outputs there.
        folder = self.worker_folder(request.get("folder"))
        pid = os.fork()
        if pid == 0:
            self.sock.close()
            _keeper(fds, self.new_pid_namespace, self.root, folder)
        for fd in fds:
            os.close(fd)
        self.children[pid] = folder
        return {"pid": pid}, os.pidfd_open(pid)

    def serve(self):
        try:
            return self._serve()
        finally:
            if self._private_root is not None:
                shutil.rmtree(self._private_root, ignore_errors=True)

    def _serve(self):
        self.new_pid_namespace = can_make_pid_namespace()
        self.send({"ready": True, "pid_namespace": self.new_pid_namespace, "pid": os.getpid(),
                   "private_scratch": self.new_pid_namespace and TMP_BYTES > 0})
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 4)
            except InterruptedError:
                continue
            if not message:
                return 0
            self.reap()
            try:
                request = json.loads(message)
            except ValueError:
                request = {}
            reply, pidfd = self.fork(request if isinstance(request, dict) else {}, fds)
            self.send(reply, pidfd)

    def send(self, reply, fd=None):
        data = json.dumps(reply).encode()
        if fd is None:
            self.sock.send(data)
        else:
            socket.send_fds(self.sock, [data], [fd])
            os.close(fd)


ENTRY = [None]  # the worker's main function, imported before any fork
DROP_CAPS = os.environ.get("KVAULT_ZYGOTE_DROP_CAPS") == "1"
# Size of each worker's own /dev/shm (the engine's KVAULT_SANDBOX_SCRATCH_MB);
# 0: none (the sandbox is off or has no mount namespace).
try:
    TMP_BYTES = int(os.environ.get("KVAULT_SANDBOX_SCRATCH_BYTES", "0"))
except ValueError:
    TMP_BYTES = 0


def _preload_cpp_extension_imports():
    """The bulk of importing torch.utils.cpp_extension (hello's build paths, KernelBench
    candidates' load_inline: inline_ext.py), 1 s of a worker's time otherwise: its
    hipify tables and setuptools. Not the module itself: on some PyTorch versions its
    import initializes CUDA, after which no forked worker can use the GPU."""
    for name in ("setuptools", "torch.utils.hipify.hipify_python"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (an optional speed-up; the worker imports what it needs)
            pass


def main():
    # Imports first: every worker forked later starts with them done.
    # KVAULT_ZYGOTE_ENTRY ("module:function") replaces the worker in tests.
    module, _, function = os.environ.pop("KVAULT_ZYGOTE_ENTRY", "kvault_worker.protocol:main").partition(":")
    ENTRY[0] = getattr(importlib.import_module(module), function)
    if module == "kvault_worker.protocol":
        try:
            import kvault_worker.session  # noqa: F401  (PyTorch and the whole worker)
            _preload_cpp_extension_imports()
        except ImportError:
            pass  # each worker reports it (protocol.UnusableSession)

    prctl(PR_SET_DUMPABLE, 0)  # candidates may not ptrace or read the zygote
    sock = socket.socket(fileno=int(os.environ.get("KVAULT_ZYGOTE_FD", "3")))
    return Zygote(sock).serve()


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
