"""A scripted stand-in for `kvault serve` (docs/serve.md) on loopback, for the tests
of the kernelvault package: it records every request and answers from a small model
of the service (verify, batches, stream, health, metrics) unless a test scripts the
answer of the next matching request.

The model judges a request by markers in its text (`judge`):
  completion holding GOOD -> passed (paper 1.4), WRONG -> mismatch (0.4),
  BROKEN -> compile_error (0); a task_source holding TASKERR -> task_error,
  INFRA -> infra_error. Results are kept by idempotency key, as the server does: a
  key seen before gets the first judged result (infrastructure results are not kept).
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

PAPER = {"passed": 1.4, "mismatch": 0.4, "compile_error": 0.0}


def result_for(request, status, message=""):
    """A result object as the server writes it."""
    if status in ("task_error", "infra_error"):
        kind = "task" if status == "task_error" else "infrastructure"
        return {"id": "c-x", "status": status, "compiled": False, "correct": False, "speedup": None,
                "reference_ms": None, "candidate_ms": None, "message": message or kind, "reward": None,
                "error": {"kind": kind, "message": message or kind, "retry": kind == "infrastructure"}}
    value = PAPER[status]
    reward = {"kind": request.get("reward", "paper"), "value": value, "paper": value, "hip_rl": 0.0}
    if request.get("previous_rewards"):
        turns = list(request["previous_rewards"]) + [value]
        d = request.get("discount", 0.6)
        reward["return"] = sum(r * d ** k for k, r in enumerate(turns))
    return {"id": "c-x", "status": status, "compiled": status != "compile_error", "correct": status == "passed",
            "speedup": 1.0 if status == "passed" else None, "reference_ms": 2.0,
            "candidate_ms": 2.0 if status == "passed" else None, "message": message or status,
            "reward": reward, "from_store": False}


def judge(request):
    task, answer = request.get("task_source", ""), request.get("completion") or request.get("code") or ""
    if "TASKERR" in task:
        return result_for(request, "task_error", "the reference raised")
    if "INFRA" in task:
        return result_for(request, "infra_error", "the worker died")
    if "GOOD" in answer:
        return result_for(request, "passed")
    if "WRONG" in answer:
        return result_for(request, "mismatch")
    return result_for(request, "compile_error")


class Reply:
    """A scripted answer: status, JSON body (or raw bytes, or a list of JSON lines), headers.
    drop=True closes the connection without answering."""

    def __init__(self, status=200, body=None, headers=None, drop=False):
        self.status, self.body, self.headers, self.drop = status, body, dict(headers or {}), drop


class FakeKvault:
    def __init__(self, port=0):
        self.requests = []        # (method, path, headers, body)
        self.judged = []          # the keys the model judged, in order
        self.script = []          # [(method, path prefix, Reply or callable(body) -> Reply)]
        self.batches = {}
        self.results_by_key = {}
        self.judge = judge
        self.visible = None       # how many results of a batch a GET shows (None: all)
        self.lock = threading.Lock()
        self._counter = 0
        self.port = port
        self.server = None

    # ---- lifecycle ----
    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with fake.lock:
                    fake.requests.append((self.command, self.path, dict(self.headers), body))
                reply = fake._reply(self.command, self.path, body)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self._write(reply)

            def _write(self, reply):
                if isinstance(reply.body, list):   # JSON lines, until the connection closes
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/x-ndjson")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for line in reply.body:
                        self.wfile.write((json.dumps(line) + "\n").encode())
                        self.wfile.flush()
                    self.close_connection = True
                    return
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _handle

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 resets some of a burst of connections

        self.server = Server(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    # ---- scripting and inspection ----
    def then(self, method, prefix, reply):
        """Answers the next request matching method and path prefix with `reply`."""
        self.script.append((method, prefix, reply))

    def bodies(self, method, prefix):
        return [b for m, p, _, b in self.requests if m == method and p.startswith(prefix)]

    def restart(self):
        """What a restarted server forgets: its batches (the store keeps results by key)."""
        with self.lock:
            self.batches.clear()

    # ---- the model ----
    def _reply(self, method, path, body):
        scripted = None
        with self.lock:
            for n, (m, prefix, reply) in enumerate(self.script):
                if m == method and path.startswith(prefix):
                    scripted = self.script.pop(n)[2]
                    break
        if scripted is not None:
            return scripted(body) if callable(scripted) else scripted
        parts = urlsplit(path)
        route = parts.path
        if method == "POST" and route == "/v1/verify":
            result = self._verify(body)
            code = {"task_error": 422, "infra_error": 503}.get(result["status"], 200)
            return Reply(code, result, {"Retry-After": "0"} if code == 503 else None)
        if method == "POST" and route == "/v1/batches":
            results = [self._verify(r) for r in body["requests"]]
            with self.lock:
                self._counter += 1
                batch_id = "b-%d" % self._counter
                self.batches[batch_id] = results
            return Reply(202, {"batch_id": batch_id, "size": len(body["requests"])})
        if route.startswith("/v1/batches/"):
            rest = route[len("/v1/batches/"):]
            batch_id, _, tail = rest.partition("/")
            with self.lock:
                results = self.batches.get(batch_id)
            if results is None:
                return Reply(404, {"error": {"kind": "unknown_batch", "message": "unknown batch " + batch_id}})
            if method == "DELETE":
                return Reply(200, {"cancelled": 0})
            shown = results if self.visible is None else results[:self.visible]
            if tail == "stream":
                return Reply(200, [{"index": i, "result": r} for i, r in enumerate(shown)] + [{"done": True}])
            wait = parse_qs(parts.query).get("wait_s")
            padded = shown + [None] * (len(results) - len(shown))
            return Reply(200, {"batch_id": batch_id, "size": len(results), "done": len(shown),
                               "results": padded, "wait_s": wait})
        if route == "/v1/health":
            return Reply(200, {"status": "ok", "version": "fake", "backend": "cpu", "lanes": 1, "lanes_ready": 1,
                               "devices": [0], "queue_depth": 0, "queue_capacity": 4096})
        if route == "/metrics":
            return Reply(200, b"kvault_queue_depth 0\n")
        return Reply(404, {"error": {"kind": "not_found", "message": "unknown path " + route}})

    def _verify(self, request):
        key = request.get("idempotency_key")
        with self.lock:
            if key and key in self.results_by_key:
                return dict(self.results_by_key[key], from_store=True)
        result = self.judge(request)
        with self.lock:
            self.judged.append(key)
            if key and result.get("status") != "infra_error":
                self.results_by_key[key] = result
        return result


@pytest.fixture
def fake(monkeypatch):
    """A started FakeKvault at $KVAULT_URL; the adapters' shared clients retry twice
    and record their waits in fake.sleeps instead of sleeping."""
    from kernelvault import shared as kv_shared
    from kernelvault import AsyncClient, Client

    server = FakeKvault().start()
    server.sleeps = []
    monkeypatch.setenv("KVAULT_URL", server.url)
    monkeypatch.delenv("KVAULT_TOKEN", raising=False)
    kv_shared._shared.clear()
    kv_shared.set_shared_client(Client(server.url, retries=2, sleep=server.sleeps.append))
    kv_shared.set_shared_client(AsyncClient(server.url, retries=2, sleep=server.sleeps.append))
    yield server
    server.stop()
    for shared in kv_shared._shared.values():
        shared.close()
    kv_shared._shared.clear()
