#!/usr/bin/env python3
"""`/v1/health` beside many slow connections (docs/serve.md, "Slow and many
connections"): N clients from one address each send part of a request head, then a
header byte every few seconds (slowloris), and open again at once when the server
closes them. Meanwhile one honest client asks `/v1/health` (its head sent at once)
every half second; printed: how many of its answers were 200, their latency, and the
longest stretch of answers that were not 200.

    source scripts/env.sh
    python3 bench/serve_slow_connections.py [--kvault build/kvault] [--slow 2048] [--seconds 30]
                                            [--reopen-per-s 0]

The server's connection bound is 1024 (HttpSettings::max_connections): the default
--slow is twice that. Needs about 2 x --slow open files (ulimit -n).
"""
import argparse
import json
import os
import random
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start(kvault, folder):
    env = dict(os.environ, KVAULT_CACHE_DIR=str(folder / "cache"))
    process = subprocess.Popen([kvault, "serve", "--backend", "cpu", "--port", "0", "--lanes-per-device", "1",
                                "--db", str(folder / "s.db")], cwd=str(ROOT), env=env,
                               stdout=subprocess.PIPE, stderr=open(folder / "serve.log", "w"), text=True)
    line = process.stdout.readline()
    if not line:
        sys.exit("kvault serve printed nothing; see %s" % (folder / "serve.log"))
    return process, json.loads(line)["listening"]


class Slowloris:
    """`count` slow connections, kept open: a new one for each the server closes."""

    def __init__(self, host, port, count, every_s, reopen_per_s):
        self.host, self.port, self.count, self.every_s = host, port, count, every_s
        self.reopen_gap = 1.0 / reopen_per_s if reopen_per_s > 0 else 0.0
        self.sel = selectors.DefaultSelector()
        self.next_byte = {}
        self.opened = self.closed = 0
        self.stop = threading.Event()

    def open_one(self):
        try:
            s = socket.create_connection((self.host, self.port), timeout=5)
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            return False
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ)
        self.next_byte[s] = time.monotonic() + random.uniform(0, self.every_s)
        self.opened += 1
        return True

    def drop(self, s, by_server=True):
        self.sel.unregister(s)
        del self.next_byte[s]
        s.close()
        self.closed += by_server

    def run(self):
        next_open = 0.0
        while not self.stop.is_set():
            while len(self.next_byte) < self.count and not self.stop.is_set():
                if self.opened >= self.count and time.monotonic() < next_open:
                    break  # reopening at --reopen-per-s at most
                if not self.open_one():
                    time.sleep(0.05)
                    break
                next_open = time.monotonic() + self.reopen_gap
            for key, _ in self.sel.select(timeout=0.1):
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                if not data or b"HTTP/1.1 503" in data:  # closed, cut off, or refused (then closed)
                    self.drop(key.fileobj)
            now = time.monotonic()
            for s, at in list(self.next_byte.items()):
                if at <= now:
                    try:
                        s.send(b"X")  # a header never finished
                        self.next_byte[s] = now + self.every_s
                    except OSError:
                        self.drop(s)
        for s in list(self.next_byte):
            self.drop(s, by_server=False)


def probe(url):
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url + "/v1/health", timeout=30) as r:
            code = r.status
    except urllib.error.HTTPError as e:
        code = e.code
    except OSError:
        code = 0  # reset or timed out
    return code, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvault", default=str(ROOT / "build" / "kvault"))
    ap.add_argument("--slow", type=int, default=2048)
    ap.add_argument("--every", type=float, default=3.0, help="seconds between a slow client's bytes")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--reopen-per-s", type=float, default=0,
                    help="at most this many new slow connections a second once all are open (0: no bound, a flood)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start(args.kvault, Path(tmp))
        try:
            host, port = url.split("//")[1].split(":")
            slow = Slowloris(host, int(port), args.slow, args.every, args.reopen_per_s)
            thread = threading.Thread(target=slow.run, daemon=True)
            thread.start()
            while len(slow.next_byte) < min(args.slow, 1024):
                time.sleep(0.1)
            time.sleep(2)  # past the grace of the first ones
            results = []
            until = time.monotonic() + args.seconds
            while time.monotonic() < until:
                results.append(probe(url))
                time.sleep(0.5)
            slow.stop.set()
            thread.join()
        finally:
            process.terminate()
            process.wait(timeout=60)
    ok = [t for code, t in results if code == 200]
    worst, run = 0, 0
    for code, _ in results:
        run = 0 if code == 200 else run + 1
        worst = max(worst, run)
    print(json.dumps({
        "slow": args.slow, "reopen_per_s": args.reopen_per_s, "probes": len(results), "ok": len(ok),
        "codes": sorted({code for code, _ in results}),
        "ok_ms_median": round(statistics.median(ok) * 1000, 1) if ok else None,
        "ok_ms_max": round(max(ok) * 1000, 1) if ok else None,
        "longest_not_ok_probes": worst,
        "slow_opened": slow.opened, "slow_closed_by_server": slow.closed}))


if __name__ == "__main__":
    main()
