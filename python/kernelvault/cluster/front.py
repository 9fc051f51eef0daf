"""The cluster's HTTP front: `kvault serve`'s protocols (docs/serve.md) answered by the
router, so a trainer points KVAULT_URL (or AMD's clients) at the cluster unchanged.

Native API: POST /v1/verify and /v1/batches are split into groups by the router;
GET /v1/batches/{id} (wait_s), /stream and DELETE are answered from the router's
calls. AMD's /run_code_batch, /run_code and /evaluate go whole to the least loaded
node (its serve translates them). /v1/health and /metrics describe the cluster.
A bearer token is required when bound to anything but loopback, as with serve.
"""
import json
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..client import MAX_BATCH, MAX_WAIT_S, problem_of
from ..errors import InfrastructureError

FORWARDED = ("/run_code_batch", "/run_code", "/evaluate")
MAX_BODY_BYTES = 32 << 20
STREAM_POLL_S = 0.5
RETRY_AFTER_S = "5"


def _status_of(result):
    """The HTTP status of /v1/verify for a result (docs/serve.md, "Endpoints")."""
    return {None: 200, "bad_request": 400, "task": 422, "unsupported": 422, "deadline": 504}.get(problem_of(result), 503)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kvault-cluster"

    # ---- plumbing ---------------------------------------------------------------

    def log_message(self, *args):  # quiet: the router's stats say what happened
        pass

    def _send(self, status, payload, ctype="application/json", headers=()):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status, kind, message, headers=()):
        self._send(status, {"error": {"kind": kind, "message": message}}, headers=headers)

    def _authorized(self, path):
        token = self.server.token
        if not token or path in ("/health", "/v1/health"):
            return True
        if self.headers.get("Authorization", "") == "Bearer " + token:
            return True
        self._error(401, "unauthorized", "a bearer token is required")
        return False

    def _body(self):
        length = self.headers.get("Content-Length")
        if length is None:
            self._error(411, "length_required", "a POST body needs Content-Length")
            return None
        if int(length) > MAX_BODY_BYTES:
            self._error(413, "too_large", "the body is over %d bytes" % MAX_BODY_BYTES)
            return None
        return self.rfile.read(int(length))

    def _json_body(self):
        raw = self._body()
        if raw is None:
            return None
        try:
            body = json.loads(raw)
        except ValueError as e:
            self._error(400, "bad_request", "the body is not JSON: %s" % e)
            return None
        if not isinstance(body, dict):
            self._error(400, "bad_request", "the body is not a JSON object")
            return None
        return body

    def _call(self, method, *args):
        import ray
        return ray.get(getattr(self.server.router, method).remote(*args))

    # ---- routes -------------------------------------------------------------------

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if not self._authorized(url.path):
            return
        if url.path in ("/health", "/v1/health"):
            return self._health()
        if url.path == "/metrics":
            return self._send(200, self._metrics().encode(), "text/plain; version=0.0.4")
        parts = url.path.strip("/").split("/")
        if len(parts) in (3, 4) and parts[:2] == ["v1", "batches"]:
            if len(parts) == 4 and parts[3] == "stream":
                return self._stream(parts[2])
            if len(parts) == 3:
                query = urllib.parse.parse_qs(url.query)
                wait_s = min(float(query.get("wait_s", ["0"])[0] or 0), MAX_WAIT_S)
                return self._poll(parts[2], wait_s)
        self._error(404, "not_found", "no such path: %s" % url.path)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if not self._authorized(url.path):
            return
        if url.path in FORWARDED:
            raw = self._body()
            if raw is not None:
                status, ctype, payload = self._call("forward", "POST", self.path, raw)
                self._send(status, payload, ctype)
            return
        if url.path not in ("/v1/verify", "/v1/batches"):
            return self._error(404, "not_found", "no such path: %s" % url.path)
        body = self._json_body()
        if body is None:
            return
        if url.path == "/v1/verify":
            result = self._call("verify_batch", [body], None)[0]
            status = _status_of(result)
            return self._send(status, result, headers=[("Retry-After", RETRY_AFTER_S)] if status == 503 else [])
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests or len(requests) > MAX_BATCH \
                or not all(isinstance(r, dict) for r in requests):
            return self._error(400, "bad_request", "requests: a list of 1 to %d request objects" % MAX_BATCH)
        batch_id = self._call("submit", requests)
        self._send(202, {"batch_id": batch_id, "size": len(requests)})

    def do_DELETE(self):
        url = urllib.parse.urlsplit(self.path)
        if not self._authorized(url.path):
            return
        parts = url.path.strip("/").split("/")
        if len(parts) != 3 or parts[:2] != ["v1", "batches"]:
            return self._error(404, "not_found", "no such path: %s" % url.path)
        try:
            self._send(200, {"cancelled": self._call("cancel", parts[2])})
        except KeyError:
            self._error(404, "unknown_batch", "no batch %s" % parts[2])

    # ---- answers ------------------------------------------------------------------

    def _snapshot(self, batch_id, wait_s):
        try:
            return self._call("poll", batch_id, wait_s)
        except KeyError:
            self._error(404, "unknown_batch",
                        "no batch %s (unknown, finished over an hour ago, or the front restarted)" % batch_id)
            return None

    def _poll(self, batch_id, wait_s):
        snapshot = self._snapshot(batch_id, wait_s)
        if snapshot is not None:
            self._send(200, {"batch_id": batch_id, **snapshot})

    def _stream(self, batch_id):
        snapshot = self._snapshot(batch_id, 0)
        if snapshot is None:
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Connection", "close")
        self.end_headers()
        sent = set()
        while True:
            for i, result in enumerate(snapshot["results"]):
                if result is not None and i not in sent:
                    sent.add(i)
                    self.wfile.write((json.dumps({"index": i, "result": result}) + "\n").encode())
            self.wfile.flush()
            if snapshot["done"] >= snapshot["size"]:
                break
            snapshot = self._call("poll", batch_id, STREAM_POLL_S)
        self.wfile.write(b'{"done": true}\n')
        self.close_connection = True

    def _health(self):
        stats = self._call("stats")
        lanes = sum(n["lanes"] for n in stats["nodes"].values())
        body = {"status": "ok" if lanes else "unavailable", "backend": "cluster", "nodes": len(stats["nodes"]),
                "lanes": lanes, "lanes_ready": lanes, "queue_depth": stats["queued"], "starting": stats["starting"]}
        self._send(200 if lanes else 503, body)

    def _metrics(self):
        stats = self._call("stats")
        lines = ["# TYPE kvault_cluster_nodes gauge", "kvault_cluster_nodes %d" % len(stats["nodes"]),
                 "# TYPE kvault_cluster_queue_depth gauge", "kvault_cluster_queue_depth %d" % stats["queued"]]
        for name in ("delivered", "resubmitted", "nodes_lost", "imported_rows"):
            lines += ["# TYPE kvault_cluster_%s_total counter" % name,
                      "kvault_cluster_%s_total %d" % (name, stats[name])]
        lines.append("# TYPE kvault_cluster_node_inflight_groups gauge")
        for node_id, node in sorted(stats["nodes"].items()):
            lines.append('kvault_cluster_node_inflight_groups{node="%s"} %d' % (node_id[:16], node["inflight_groups"]))
        return "\n".join(lines) + "\n"


def serve_front(router, host="127.0.0.1", port=8470, token=None, ready=None):
    """Serves the front until interrupted. `ready(url)` is called once it listens."""
    if host not in ("127.0.0.1", "localhost", "::1") and not token:
        raise ValueError("a host other than loopback needs a token (--token-file or $KVAULT_SERVE_TOKEN)")
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.router, server.token = router, token
    url = "http://%s:%d" % (host, server.server_address[1])
    if ready:
        ready(url)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
    return url


def wait_for_nodes(router, count=1, timeout_s=600):
    """Blocks until `count` node services answer; InfrastructureError naming the nodes
    and why when no node can serve (router.unservable), TimeoutError after timeout_s."""
    import ray
    deadline = time.monotonic() + timeout_s
    stats = ray.get(router.stats.remote())
    while len(stats["nodes"]) < count:
        if stats["unservable"]:
            raise InfrastructureError(stats["unservable"])
        if time.monotonic() > deadline:
            raise TimeoutError("fewer than %d node services answered in %d s; nodes not serving: %s"
                               % (count, timeout_s, stats["lost"] or "none reported"))
        time.sleep(0.5)
        stats = ray.get(router.stats.remote())
