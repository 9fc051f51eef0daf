#!/usr/bin/env python3
"""A stand-in for `kvault serve` that checks run_step.py's side of the HTTP
exchange (selftest.sh): it speaks the native API of docs/serve.md (health, batches,
stream, cancel, metrics) and answers each candidate with the status the step's
manifest expects (matched by the SHA-256 of its code; "passed" for code it does not
know, such as warm-up candidates), after a short random delay. It verifies nothing.

  fake_serve.py serve [--port 0] [--lanes-per-device N] [other kvault serve flags, ignored]

Environment: FAKE_SERVE_MANIFEST (the step's manifest.json), FAKE_SERVE_FLIP (index
of a candidate whose status is answered wrong), FAKE_SERVE_DIE_AFTER (exit after that
many results), FAKE_SERVE_STORE (index answered with from_store true),
FAKE_SERVE_DELAY (seconds per candidate, default 0.05).
"""
import hashlib
import http.server
import json
import os
import random
import signal
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

STATE = {"batches": {}, "lock": threading.Lock(), "finished": 0}


def env_int(name):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else None


def verdict(code, index):
    expected = STATE["by_sha"].get(hashlib.sha256(code.encode()).hexdigest())
    status = expected["expected"] if expected else "passed"
    if expected and env_int("FAKE_SERVE_FLIP") == expected["index"]:
        status = "mismatch" if status == "passed" else "passed"
    phases = {"build": 0.01, "worker_start": 0.01, "correctness": 0.02}
    if status == "passed":
        phases.update(timing_wait=0.01, timing=0.02)
    return {"id": "c-%d" % index, "status": status, "compiled": status != "compile_error",
            "correct": status == "passed", "speedup": 1.0 if status == "passed" else None,
            "message": "fake", "reward": {"kind": "paper", "value": 0.0}, "seconds": 0.05, "phases": phases,
            "from_store": expected is not None and env_int("FAKE_SERVE_STORE") == expected["index"]}


def work(batch, i):
    if batch["cancelled"]:
        batch["results"][i] = {"status": None, "error": {"kind": "cancelled", "message": "cancelled"}}
    else:
        time.sleep(random.uniform(0, 2 * float(os.environ.get("FAKE_SERVE_DELAY", "0.05"))))
        batch["results"][i] = verdict(batch["requests"][i].get("code", ""), i)
    with STATE["lock"]:
        batch["order"].append(i)
        STATE["finished"] += 1
        die = env_int("FAKE_SERVE_DIE_AFTER")
        if die is not None and STATE["finished"] >= die:
            os._exit(3)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        parts = url.path.strip("/").split("/")
        if url.path == "/v1/health":
            return self.answer(200, {"status": "ok", "version": "fake", "backend": "fake", "lanes": LANES,
                                     "lanes_ready": LANES, "devices": [0], "queue_depth": 0, "queue_capacity": 4096})
        if url.path == "/metrics":
            data = ("kvault_finished_total %d\n" % STATE["finished"]).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return self.wfile.write(data)
        if len(parts) >= 3 and parts[:2] == ["v1", "batches"] and parts[2] in STATE["batches"]:
            batch = STATE["batches"][parts[2]]
            if len(parts) == 4 and parts[3] == "stream":
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.end_headers()
                sent = 0
                while sent < len(batch["requests"]):
                    while sent < len(batch["order"]):
                        i = batch["order"][sent]
                        self.wfile.write((json.dumps({"index": i, "result": batch["results"][i]}) + "\n").encode())
                        self.wfile.flush()
                        sent += 1
                    time.sleep(0.01)
                self.wfile.write(b'{"done": true}\n')
                return
            done = sum(r is not None for r in batch["results"])  # counts the results present
            return self.answer(200, {"batch_id": parts[2], "size": len(batch["requests"]), "done": done,
                                     "results": batch["results"]})
        return self.answer(404, {"error": {"kind": "not_found", "message": url.path}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path != "/v1/batches":
            return self.answer(404, {"error": {"kind": "not_found", "message": self.path}})
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests or any("task_source" not in r for r in requests):
            return self.answer(400, {"error": {"kind": "bad_request", "message": "requests"}})
        batch_id = "b-%d" % len(STATE["batches"])
        batch = {"requests": requests, "results": [None] * len(requests), "order": [], "cancelled": False}
        STATE["batches"][batch_id] = batch
        for i in range(len(requests)):
            POOL.submit(work, batch, i)
        return self.answer(202, {"batch_id": batch_id, "size": len(requests)})

    def do_DELETE(self):
        parts = self.path.strip("/").split("/")
        batch = STATE["batches"].get(parts[-1])
        if batch is None:
            return self.answer(404, {"error": {"kind": "not_found", "message": self.path}})
        batch["cancelled"] = True
        return self.answer(200, {"cancelled": sum(r is None for r in batch["results"])})


def main(argv):
    global LANES, POOL
    if argv[:1] == ["--version"]:
        print("fake_serve (bench/rl_step)")
        return 0
    args = dict(zip(argv[1::2], argv[2::2])) if argv and argv[0] == "serve" else {}
    LANES = int(args.get("--lanes-per-device", 4))
    POOL = ThreadPoolExecutor(max_workers=LANES)
    manifest = json.load(open(os.environ["FAKE_SERVE_MANIFEST"])) if os.environ.get("FAKE_SERVE_MANIFEST") else {}
    STATE["by_sha"] = {c["sha256"]: c for c in manifest.get("candidates", [])}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(args.get("--port", 0))), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print(json.dumps({"listening": "http://127.0.0.1:%d" % server.server_address[1], "lanes": LANES,
                      "devices": [0]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
