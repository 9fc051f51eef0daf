"""The `kvault serve` side of the RL-step benchmark: start the server, talk to its
native API (docs/serve.md) with the standard library only, stop it.

Every failure of the server or of the HTTP exchange raises ServeError: the benchmark
reports it and exits non-zero, never as a candidate's outcome.
"""
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request


class ServeError(Exception):
    pass


class Server:
    """A `kvault serve` process of our own (its own session, so that stop() can end it
    and its workers together)."""

    def __init__(self, argv, env, log_path):
        self.argv, self.env, self.log_path = argv, env, log_path
        self.proc, self.url, self.hello = None, None, None

    def start(self, timeout_s=180):
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=self.log, env=self.env,
                                     text=True, start_new_session=True)
        line = [None]

        def first_line():
            line[0] = self.proc.stdout.readline()

        reader = threading.Thread(target=first_line, daemon=True)
        reader.start()
        reader.join(timeout_s)
        if not line[0]:
            self.stop()
            raise ServeError("kvault serve printed no first line in %d s (exit %s); its log: %s\n%s" % (
                timeout_s, self.proc.returncode, self.log_path, tail(self.log_path)))
        try:
            self.hello = json.loads(line[0])
            self.url = self.hello["listening"].rstrip("/")
        except (ValueError, KeyError, TypeError):
            self.stop()
            raise ServeError("kvault serve's first line is not {\"listening\": ...}: %r" % line[0][:300])
        # keep draining stdout so that the server never blocks on a full pipe
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
        return self.hello

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self):
        if not self.alive():
            raise ServeError("kvault serve exited (status %s); its log: %s\n%s" % (
                self.proc.returncode if self.proc else None, self.log_path, tail(self.log_path)))

    def stop(self, grace_s=30):
        """SIGTERM (the server lets running verifications end), then SIGKILL to its
        session after `grace_s`. Returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(30)
        if getattr(self, "log", None):
            self.log.close()
        return self.proc.returncode


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def http(method, url, body=None, timeout=60, expect=(200,), raw=False):
    """(status, decoded JSON or text). A status outside `expect` raises ServeError."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            code, text = resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:
        raise ServeError("%s %s: %s" % (method, url, e))
    if code not in expect:
        raise ServeError("%s %s: HTTP %d: %s" % (method, url, code, text[:800]))
    if raw:
        return code, text
    try:
        return code, json.loads(text)
    except ValueError:
        raise ServeError("%s %s: HTTP %d with a body that is not JSON: %r" % (method, url, code, text[:300]))


def wait_ready(server, timeout_s=300):
    """The health answer once every lane is ready."""
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        server.check_alive()
        try:
            code, last = http("GET", server.url + "/v1/health", expect=(200, 503), timeout=10)
            if code == 200 and last.get("status") == "ok" and last.get("lanes_ready") == last.get("lanes"):
                return last
        except ServeError:
            pass
        time.sleep(1)
    raise ServeError("kvault serve not ready in %d s; last health: %s" % (timeout_s, last))


def batch_done(body, size):
    """Whether a GET /v1/batches/{id} answer holds every result (`done` counts the
    results present; a boolean is taken as it is)."""
    done = body.get("done")
    if isinstance(done, bool):
        return done
    return isinstance(done, (int, float)) and done >= size


class BatchWatch:
    """Results of one batch as they arrive, with the second each one arrived (from
    the submission). Reads the stream; where the stream ends early, polls."""

    def __init__(self, server, batch_id, size, t_submit):
        self.server, self.batch_id, self.size, self.t0 = server, batch_id, size, t_submit
        self.arrived = {}  # index -> seconds after submission
        self.results = [None] * size
        self.done = threading.Event()
        self.stream_error = None
        self.lock = threading.Lock()

    def _record(self, index, result, when=None):
        with self.lock:
            if result is not None and self.results[index] is None:
                self.results[index] = result
                self.arrived[index] = round((when or time.monotonic()) - self.t0, 3)

    def stream(self, read_timeout):
        url = "%s/v1/batches/%s/stream" % (self.server.url, self.batch_id)
        try:
            with urllib.request.urlopen(url, timeout=read_timeout) as resp:
                for raw in resp:
                    line = raw.decode("utf-8", "replace").strip()
                    if not line:
                        continue
                    item = json.loads(line)
                    if item.get("done"):
                        self.done.set()
                        return
                    self._record(int(item["index"]), item.get("result"))
            self.stream_error = "the stream ended without {\"done\": true}"
        except Exception as e:  # noqa: BLE001 - reported, then the batch is polled
            self.stream_error = "%s: %s" % (type(e).__name__, e)

    def poll_once(self):
        _, body = http("GET", "%s/v1/batches/%s" % (self.server.url, self.batch_id), timeout=120)
        now = time.monotonic()
        for i, r in enumerate(body.get("results") or []):
            if i < self.size:
                self._record(i, r, now)
        if batch_done(body, self.size):
            self.done.set()
        return body

    def wait(self, limit_s, poll_s=2.0):
        """Waits until every result arrived or `limit_s` after submission; True when done."""
        reader = threading.Thread(target=self.stream, args=(max(60.0, limit_s),), daemon=True)
        reader.start()
        deadline = self.t0 + limit_s
        while not self.done.is_set() and time.monotonic() < deadline:
            self.server.check_alive()
            if not reader.is_alive():  # the stream broke: poll instead
                self.poll_once()
                self.done.wait(poll_s)
            else:
                self.done.wait(min(poll_s, max(0.0, deadline - time.monotonic())))
        return self.done.is_set()
