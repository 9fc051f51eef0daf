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
zygote may (in the sandbox's user namespace), the keeper makes a new PID namespace
whose init forks the worker, reaps everything and, when the worker ends, writes its
wait status (4 bytes, native int) on the status descriptor and exits: the kernel then
kills everything the candidate started, even processes that left its process group.
That init also mounts a /proc of the new namespace (in a mount namespace of its own):
the worker's pids and /proc must agree, or CUDA's initialisation fails (error 304,
measured on the H200), and the worker sees no other process of the sandbox.
Without that namespace the keeper itself forks and waits for the worker. The engine
kills a worker by killing the keeper through the pidfd; the rest follows by
parent-death signals (and by the namespace's end).

The worker closes what it must not keep, works in its own folder (HOME, TMPDIR, the
working directory) and drops every capability before it reads its first request.
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

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
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


def can_make_pid_namespace():
    """True when a child may create a PID namespace with a mount namespace and mount
    that namespace's /proc in it (throwaway forks try): without its own /proc, a
    worker in a PID namespace cannot start CUDA, so it gets no namespace at all."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if _libc.unshare(CLONE_NEWPID | CLONE_NEWNS) == 0:
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


def _worker(fds, status_w, folder):
    """The worker process: protocol fds on 3 and 4, log on 1 and 2. Never returns."""
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
        os.environ.update(HOME=folder, TMPDIR=folder, KVAULT_WORKER_FDS="3,4")
        for name in ("KVAULT_ZYGOTE_FD", "KVAULT_ZYGOTE_DROP_CAPS"):
            os.environ.pop(name, None)
        if DROP_CAPS:
            drop_capabilities()
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


def _supervise(fds, folder):
    """Forks the worker and waits for it, reaping every other process that ends
    meanwhile (as the init of a PID namespace must); writes the worker's wait status
    on the status descriptor. Never returns."""
    requests, responses, log, status_w = fds
    status = EXIT_SETUP_FAILED << 8
    try:
        pid = os.fork()
        if pid == 0:
            _worker((requests, responses, log), status_w, folder)
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


def _keeper(fds, new_pid_namespace, folder):
    """The zygote's child, the process the engine holds a pidfd of. With a PID
    namespace, its child is that namespace's init, which supervises the worker (the
    worker itself must not be init: init ignores signals it sends itself, such as a
    candidate's own SIGSEGV). Never returns."""
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        os.setsid()
        if new_pid_namespace:
            _check(_libc.unshare(CLONE_NEWPID | CLONE_NEWNS), "unshare(CLONE_NEWPID | CLONE_NEWNS)")
            pid = os.fork()
            if pid == 0:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                try:
                    mount_own_proc()
                except BaseException as e:
                    os.write(fds[2], ("kvault zygote: cannot mount the worker's /proc: %s\n" % e).encode())
                    os._exit(EXIT_SETUP_FAILED)
                _supervise(fds, folder)
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
        folder = os.path.join(self.root, "w%d" % self.serial)
        pid = os.fork()
        if pid == 0:
            self.sock.close()
            _keeper(fds, self.new_pid_namespace, folder)
        for fd in fds:
            os.close(fd)
        self.children[pid] = folder
        return {"pid": pid}, os.pidfd_open(pid)

    def serve(self):
        self.new_pid_namespace = can_make_pid_namespace()
        self.send({"ready": True, "pid_namespace": self.new_pid_namespace, "pid": os.getpid()})
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


def main():
    # Imports first: every worker forked later starts with them done.
    # KVAULT_ZYGOTE_ENTRY ("module:function") replaces the worker in tests.
    module, _, function = os.environ.pop("KVAULT_ZYGOTE_ENTRY", "kvault_worker.protocol:main").partition(":")
    ENTRY[0] = getattr(importlib.import_module(module), function)
    if module == "kvault_worker.protocol":
        try:
            import kvault_worker.session  # noqa: F401  (PyTorch and the whole worker)
        except ImportError:
            pass  # each worker reports it (protocol.UnusableSession)

    prctl(PR_SET_DUMPABLE, 0)  # candidates may not ptrace or read the zygote
    sock = socket.socket(fileno=int(os.environ.get("KVAULT_ZYGOTE_FD", "3")))
    return Zygote(sock).serve()


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
