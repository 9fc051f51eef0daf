#!/usr/bin/env python3
"""What the sandbox's private scratch, IPC namespace and hidden cache cost per worker
start (docs/sandbox.md, "Tests and cost").

  python3 bench/sandbox_cost.py --kvault build/kvault [--starts 40]

1. `kvault sandbox-exec PLAN -- /bin/true`, started N times, with the plan of before
   (namespaces, read-only root, the reference cache hidden, /dev/shm and the cache's
   tmp/ writable) and with today's candidate plan (also an IPC namespace, a private
   /dev/shm with home/ and tmp/, the cache hidden but build/ and the worker's folder).
2. The zygote's part of a fork (python/kvault_worker/zygote.py): new PID, mount and IPC
   namespaces, the worker's /proc, with and without private_mounts (the zygote's folder
   covered but the worker's, a fresh /dev/shm), N times. Needs root or the sandbox's
   user namespace (uid 0 with capabilities).
Prints one line per measurement: median and mean milliseconds per start.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def plan(cache, private, new):
    p = {"mode": "auto", "pid_namespace": True, "network_namespace": True, "mount_namespace": True,
         "limits": {"cpu_seconds": 7200, "address_space_bytes": 0, "file_size_bytes": 1 << 34,
                    "open_files": 4096, "processes": 0, "no_core_dumps": True},
         "private_dir": private, "scrub_environment": True, "env_allow": ["PATH"], "env_set": [],
         "fresh_proc": True, "syscall_filter": True}
    if new:
        p.update(ipc_namespace=True, private_scratch_bytes=1 << 30, hidden=[cache],
                 visible=[cache + "/build"], writable=[])
    else:
        p.update(hidden=[cache + "/refs"], writable=[cache + "/tmp", "/dev", "/dev/shm"])
    return json.dumps(p)


def time_starts(argv, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def time_forks(root, n, private):
    from kvault_worker import zygote
    times = []
    for i in range(n):
        folder = os.path.join(root, "w%d" % i)
        os.makedirs(folder)
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # the keeper
            code = 1
            try:
                zygote._check(zygote._libc.unshare(zygote.CLONE_NEWPID | zygote.CLONE_NEWNS | zygote.CLONE_NEWIPC),
                              "unshare")
                init = os.fork()
                if init == 0:
                    try:
                        zygote.mount_own_proc()
                        if private:
                            zygote.private_mounts(root, folder, 1 << 30)
                        os._exit(0)
                    except BaseException as e:
                        print(e, file=sys.stderr)
                        os._exit(1)
                code = os.waitstatus_to_exitcode(os.waitpid(init, 0)[1])
            finally:
                os._exit(code)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        times.append((time.perf_counter() - t0) * 1000)
        if status != 0:
            raise SystemExit("the fork's setup failed")
    return times


def report(what, times):
    print("%-60s median %6.2f ms  mean %6.2f ms  (%d)" % (what, statistics.median(times), statistics.mean(times),
                                                          len(times)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvault", required=True)
    ap.add_argument("--starts", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        cache = os.path.join(d, "cache")
        for sub in ("build", "refs", "tmp/worker-x"):
            os.makedirs(os.path.join(cache, sub))
        private = os.path.join(cache, "tmp/worker-x")
        report("plain /bin/true", time_starts(["/bin/true"], args.starts))
        for new in (False, True):
            argv = [args.kvault, "sandbox-exec", plan(cache, private, new), "--", "/bin/true"]
            report("sandbox-exec /bin/true, %s plan" % ("new" if new else "old"), time_starts(argv, args.starts))
        if os.geteuid() == 0:
            for private_mounts in (False, True):
                root = os.path.join(d, "zygote-%d" % private_mounts)
                os.makedirs(root)
                report("zygote fork setup%s" % (", private_mounts" if private_mounts else ""),
                       time_forks(root, args.starts, private_mounts))
        else:
            print("zygote fork setup: skipped (needs root)")


if __name__ == "__main__":
    main()
