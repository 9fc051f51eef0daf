"""Probe: can a process in other user, PID and mount namespaces (like a sandboxed
candidate worker) map device memory that this process exported as a file
descriptor (python/kvault_worker/devmem.py)? Prints one JSON line per check.

    python3 bench/probe_devmem.py [--gb 3.2]
"""
import argparse
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def child(sock, nbytes):
    # New namespaces first (no CUDA yet in this process), then a fork: the grandchild
    # is pid 1 of its PID namespace and mounts its own /proc, as the sandbox does.
    os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWPID | os.CLONE_NEWNS)
    pid = os.fork()
    if pid:
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status))
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None)  # MS_REC | MS_PRIVATE
    libc.mount(b"proc", b"/proc", b"proc", 0, None)
    import torch
    from kvault_worker import devmem
    torch.cuda.init()
    t0 = time.perf_counter()
    _, fds = devmem.receive_fds(sock, 1, 60)
    m = devmem.import_fd(fds[0], nbytes, 0)
    os.close(fds[0])
    t_map = time.perf_counter() - t0
    out = m.tensor(torch.float32, (nbytes // 4,), torch.device("cuda", 0))
    src = torch.arange(nbytes // 4, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    out.copy_(src)
    torch.cuda.synchronize()
    t_copy = time.perf_counter() - t1
    del out
    m.close()
    sock.sendall(json.dumps({"pid_in_ns": os.getpid(), "map_s": t_map, "copy_s": t_copy}).encode())
    os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=3.2)
    args = ap.parse_args()
    nbytes = int(args.gb * 1e9) // 4 * 4
    parent_sock, child_sock = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent_sock.close()
        try:
            child(child_sock, nbytes)
        except BaseException as e:  # report, then exit
            try:
                child_sock.sendall(json.dumps({"error": repr(e)}).encode())
            finally:
                os._exit(1)
    child_sock.close()
    import torch
    from kvault_worker import devmem
    dev = torch.device("cuda", 0)
    print(json.dumps({"available": devmem.available(dev)}), flush=True)
    t0 = time.perf_counter()
    m, fd = devmem.allocate(nbytes, 0)
    t_alloc = time.perf_counter() - t0
    devmem.send_fds(parent_sock, [fd])
    os.close(fd)
    parent_sock.settimeout(120)
    reply = json.loads(parent_sock.recv(65536).decode() or "{}")
    _, status = os.waitpid(pid, 0)
    view = m.tensor(torch.float32, (nbytes // 4,), dev)
    expected = torch.arange(nbytes // 4, device=dev, dtype=torch.float32)
    same = bool(torch.equal(view, expected))
    del view
    m.close()
    print(json.dumps({"bytes": nbytes, "alloc_export_s": t_alloc, "child": reply,
                      "child_status": os.waitstatus_to_exitcode(status), "parent_sees_child_writes": same}))


if __name__ == "__main__":
    main()
