"""Client of the reward service `kvault serve` (docs/serve.md, native API version 1).

    from kernelvault import Client
    kv = Client()                                   # $KVAULT_URL or http://127.0.0.1:8470
    result = kv.verify(task_source=open("relu.py").read(), completion=answer)
    result["reward"]["value"]                       # a float: the candidate was judged

    results = kv.verify_batch([{"task_source": t, "completion": a} for t, a in pairs])

Contract:
- A judged candidate (passed, mismatch, compile_error, ...) is a result dict with a
  reward. Anything else raises (errors.py): an infrastructure failure is retried
  with bounded exponential backoff (honouring Retry-After) and then raised as
  InfrastructureError; it is never returned as a result, so it can never become a
  reward of 0.
- Every request carries an `idempotency_key` (a uuid4-based one when the caller
  gives none), so a retried or resubmitted request is verified once and answered
  with the first verification's result.
- Thread-safe: a Client holds no connection between calls (each call opens its
  own), so one Client may serve many threads. `AsyncClient` runs the same calls on
  a thread pool of its own.
- Stdlib only.
"""
import http.client
import json
import os
import random
import time
import urllib.parse
import uuid
from email.utils import parsedate_to_datetime

from . import __version__
from .errors import (
    BatchCancelledError,
    BatchNotFoundError,
    DeadlineError,
    InfrastructureError,
    KernelVaultError,
    RequestError,
    TaskError,
    UnsupportedError,
)

DEFAULT_URL = "http://127.0.0.1:8470"
MAX_BATCH = 4096          # most requests in one POST /v1/batches
MAX_WAIT_S = 300          # most a GET /v1/batches/{id}?wait_s= may wait


def new_idempotency_key():
    """A fresh key: "kv-" and 32 hex digits of a uuid4."""
    return "kv-" + uuid.uuid4().hex


def problem_of(result):
    """Why a result has no reward: None for a judged candidate, else "task",
    "infrastructure", "deadline", "cancelled", "unsupported" (a request the server's
    backend cannot run) or "bad_request" (one the server refused as malformed): a cluster
    answers those two per request (refused_result, docs/cluster.md). An unknown kind
    the server marks retryable counts as "infrastructure"."""
    error = result.get("error") if isinstance(result, dict) else None
    if isinstance(error, dict) and error.get("kind"):
        kind = str(error["kind"])
        if kind in ("task", "infrastructure", "deadline", "cancelled", "unsupported", "bad_request"):
            return kind
        return "infrastructure" if error.get("retry", True) else "task"
    status = result.get("status") if isinstance(result, dict) else None
    if status == "task_error":
        return "task"
    if status == "infra_error":
        return "infrastructure"
    return None


def error_for(result, where=""):
    """The exception that a result without a reward stands for."""
    kind = problem_of(result)
    error = result.get("error") if isinstance(result.get("error"), dict) else {}
    message = error.get("message") or result.get("message") or "no reward"
    text = "%s%s" % (where + ": " if where else "", message)
    if kind == "task":
        return TaskError(text, kind=kind, result=result)
    if kind == "deadline":
        return DeadlineError(text, kind=kind, result=result)
    if kind == "cancelled":
        return BatchCancelledError(text, kind=kind, result=result)
    if kind == "unsupported":
        return UnsupportedError(text, kind=kind, result=result)
    if kind == "bad_request":
        return RequestError(text, kind=kind, result=result)
    return InfrastructureError(text, kind=kind, result=result)


def refused_result(error):
    """The result of a request the server refused (a RequestError: 422 `unsupported`,
    its backend cannot run it; 400, malformed), where a batch answers it per request:
    no reward, never retried. Status `unsupported`, else `bad_request`."""
    kind = "unsupported" if isinstance(error, UnsupportedError) else "bad_request"
    return {"status": kind, "compiled": False, "correct": False, "reward": None, "message": error.server_message,
            "error": {"kind": kind, "message": error.server_message, "retry": False}}


class _Retry(Exception):
    """Internal: a failure worth another attempt, with the server's Retry-After."""

    def __init__(self, error, retry_after=None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


def _retry_after_s(value):
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _decode(raw):
    try:
        return json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
        return None


def _server_message(payload, raw, status):
    """The message of the server's error JSON ({"error": {"kind", "message"}}) or of a result."""
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"]), error.get("kind")
        if isinstance(error, str):
            return error, None
        if payload.get("message"):
            return str(payload["message"]), None
    # Not kvault serve's error: a proxy's page, or another server at this URL. Said so,
    # on one line, instead of a page of HTML.
    text = " ".join(raw.decode("utf-8", "replace").split())[:300] if raw else ""
    return ("no error of kvault serve in the answer (a proxy, or no kvault serve at this URL?)%s"
            % (": " + text if text else ", an empty body")), None


class Client:
    """Synchronous client of `kvault serve`.

    url: the server (default $KVAULT_URL, else http://127.0.0.1:8470); a path in it is
        kept as a prefix (a server behind a proxy).
    token: bearer token (default $KVAULT_TOKEN); sent as `Authorization: Bearer`.
    timeout_s: socket timeout of one HTTP call; a verification answers only when it is
        done, so this bounds one candidate's verification. Default 1800.
    connect_timeout_s: how long a connection may take to open; a host that does not
        answer (down, firewalled, a full accept queue) is then a connection failure,
        retried like a refused one, instead of a wait of timeout_s. Default 10.
    retries: how many times a retriable failure is tried again (per call, and per
        candidate for results of kind "infrastructure") before it is raised. Default 6.
    backoff_s, max_backoff_s: the n-th retry waits backoff_s * 2**n (with jitter), at
        least the server's Retry-After, at most max_backoff_s. Defaults 1 and 60.
    poll_s: how long one GET of a batch waits for it to finish (verify_batch). Default 60.
    sleep: the function that waits (tests pass a recorder).
    """

    def __init__(self, url=None, token=None, timeout_s=1800.0, retries=6, *, connect_timeout_s=10.0, backoff_s=1.0,
                 max_backoff_s=60.0, poll_s=60.0, sleep=time.sleep):
        self.url = (url or os.environ.get("KVAULT_URL") or DEFAULT_URL).rstrip("/")
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("kernelvault: the server URL must be http(s)://host[:port], got %r" % self.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self.token = token if token is not None else os.environ.get("KVAULT_TOKEN") or None
        self.timeout_s = float(timeout_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.poll_s = float(poll_s)
        self._sleep = sleep

    def __repr__(self):
        return "Client(%r)" % self.url

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Nothing to release (no connection outlives a call); for symmetry with AsyncClient."""

    # ---- the API ---------------------------------------------------------------

    def verify(self, request=None, **fields):
        """POST /v1/verify: one candidate -> its result dict (with a reward).

        The request is a dict of the fields of docs/serve.md ("The request of one
        candidate"), or those fields as keyword arguments (they override the dict's):
        `sample="relu.v2.cu"` names which sample of its task the candidate is, as
        `kvault eval` names a candidate file (identical bytes of two samples are then
        two store rows, scored as two samples).
        Raises TaskError (422), DeadlineError (504), RequestError (other 4xx), and
        InfrastructureError once `retries` retries of 503/429/5xx/connection failures
        (or of results of kind "infrastructure") are spent.
        """
        body = dict(request or {})
        body.update(fields)
        body.setdefault("idempotency_key", new_idempotency_key())
        attempt = 0
        while True:
            result = self._call("POST", "/v1/verify", body)
            if not isinstance(result, dict):
                raise InfrastructureError("POST /v1/verify: the answer is not a JSON object")
            if problem_of(result) != "infrastructure":
                break
            if attempt >= self.retries:
                raise error_for(result, "POST /v1/verify, %d attempts" % (attempt + 1))
            self._sleep(self._delay(attempt, None))
            attempt += 1
        if problem_of(result) is not None:
            raise error_for(result, "POST /v1/verify")
        return result

    def submit_batch(self, requests):
        """POST /v1/batches -> the batch id. At most 4096 requests; a request without
        an `idempotency_key` is sent with a fresh one (the caller's dicts are not
        changed). 429 (queue full) is retried after Retry-After."""
        body = {"requests": [_keyed(r) for r in requests]}
        if not body["requests"] or len(body["requests"]) > MAX_BATCH:
            raise ValueError("kernelvault: a batch holds 1 to %d requests, got %d" % (MAX_BATCH, len(body["requests"])))
        answer = self._call("POST", "/v1/batches", body)
        if not isinstance(answer, dict) or "batch_id" not in answer:
            raise InfrastructureError("POST /v1/batches: the answer has no batch_id")
        return answer["batch_id"]

    def get_batch(self, batch_id, wait_s=None):
        """GET /v1/batches/{id}[?wait_s=N] -> {"batch_id", "size", "done", "results"}
        (results in request order, None where not finished; "done" is how many are).
        wait_s: wait up to that long (at most 300 s) for the batch to finish.
        Raises BatchNotFoundError for an unknown id."""
        path = "/v1/batches/" + urllib.parse.quote(str(batch_id), safe="")
        timeout = None
        if wait_s is not None:
            wait_s = max(0.0, min(float(wait_s), MAX_WAIT_S))
            path += "?wait_s=%g" % wait_s
            timeout = max(self.timeout_s, wait_s + 30.0)
        return self._call("GET", path, batch=True, timeout=timeout)

    def stream_batch(self, batch_id):
        """GET /v1/batches/{id}/stream: yields each JSON line as a dict,
        {"index": i, "result": {...}} per finished candidate, the last one
        {"done": true}. A stream that breaks before "done" raises InfrastructureError."""
        path = "/v1/batches/" + urllib.parse.quote(str(batch_id), safe="") + "/stream"
        conn, response = self._with_retries(lambda: self._open("GET", path, None, batch=True))
        try:
            while True:
                try:
                    line = response.readline()
                except (OSError, http.client.HTTPException) as e:
                    raise InfrastructureError("GET %s: the stream broke: %s" % (path, e)) from e
                if not line:
                    raise InfrastructureError("GET %s: the stream ended before {\"done\": true}" % path)
                line = line.strip()
                if not line:
                    continue
                item = _decode(line)
                if not isinstance(item, dict):
                    raise InfrastructureError("GET %s: a line is not a JSON object: %r" % (path, line[:200]))
                yield item
                if item.get("done"):
                    return
        finally:
            conn.close()

    def verify_batch(self, requests):
        """Verifies every request; returns their results in request order.

        Submits batches of at most 4096, then waits for each (long-polling GET with
        wait_s). Results of kind "infrastructure" are resubmitted with the same
        idempotency key, at most `retries` times per request, then raised. When the
        server loses a batch (restarted: the id is unknown, 404) the requests without
        a result are resubmitted with their keys, so every result arrives exactly
        once; a restart that makes no progress `retries` times in a row is raised.

        Results of kind "task" (reward None, status task_error) are returned as they
        are: the caller decides (a trainer's "not applicable", or raise). Deadline,
        cancelled, unsupported and refused (bad_request) results raise DeadlineError /
        BatchCancelledError / UnsupportedError / RequestError.
        """
        keyed = [_keyed(r) for r in requests]
        results = [None] * len(keyed)
        infra_attempts = [0] * len(keyed)
        todo = list(range(len(keyed)))
        stalled = 0
        while todo:
            resubmit, progressed, infra_seen = [], False, False
            for start in range(0, len(todo), MAX_BATCH):
                chunk = todo[start:start + MAX_BATCH]
                batch_id = self.submit_batch([keyed[i] for i in chunk])
                got = self._wait_for_batch(batch_id, len(chunk))
                for j, i in enumerate(chunk):
                    result = got[j] if j < len(got) else None
                    if result is None:          # the batch was lost before this one finished
                        resubmit.append(i)
                        continue
                    kind = problem_of(result)
                    if kind == "infrastructure":
                        infra_seen = True
                        infra_attempts[i] += 1
                        if infra_attempts[i] > self.retries:
                            raise error_for(result, "request %d, %d attempts" % (i, infra_attempts[i]))
                        resubmit.append(i)
                        continue
                    if kind in ("deadline", "cancelled", "unsupported", "bad_request"):
                        raise error_for(result, "request %d" % i)
                    results[i] = result
                    progressed = True
            stalled = 0 if progressed else stalled + 1
            if resubmit and stalled > self.retries:
                raise InfrastructureError("verify_batch: %d requests got no result in %d rounds"
                                          % (len(resubmit), stalled))
            if resubmit and (infra_seen or not progressed):
                self._sleep(self._delay(max(stalled - 1, 0), None))
            todo = resubmit
        return results

    def cancel_batch(self, batch_id):
        """DELETE /v1/batches/{id} -> {"cancelled": n}."""
        path = "/v1/batches/" + urllib.parse.quote(str(batch_id), safe="")
        return self._call("DELETE", path, batch=True)

    def health(self):
        """GET /v1/health -> its JSON, also when 503 ("status": "unavailable"). One
        attempt: a server that cannot be reached raises InfrastructureError."""
        try:
            return self._once("GET", "/v1/health", None, accept=(200, 503))
        except _Retry as e:
            raise e.error from None

    def metrics(self):
        """GET /metrics -> the Prometheus text."""
        return self._call("GET", "/metrics", text=True)

    # ---- HTTP and retries --------------------------------------------------------

    def _delay(self, attempt, retry_after):
        """Bounded exponential backoff with jitter, never shorter than Retry-After."""
        backoff = self.backoff_s * (2 ** min(attempt, 30)) * random.uniform(0.5, 1.0)
        return min(self.max_backoff_s, max(backoff, retry_after or 0.0))

    def _with_retries(self, attempt_fn):
        attempt = 0
        while True:
            try:
                return attempt_fn()
            except _Retry as e:
                if attempt >= self.retries:
                    error = e.error
                    error.message = "%s (%d attempts)" % (error.message, attempt + 1)
                    error.args = (error.message,)
                    raise error from None
                self._sleep(self._delay(attempt, e.retry_after))
                attempt += 1

    def _call(self, method, path, body=None, *, batch=False, text=False, timeout=None):
        return self._with_retries(lambda: self._once(method, path, body, batch=batch, text=text, timeout=timeout))

    def _headers(self, has_body):
        headers = {"Accept": "application/json", "User-Agent": "kernelvault/" + __version__,
                   "Connection": "close"}
        if has_body:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        return headers

    def _send(self, method, path, body, timeout):
        """Sends one request -> (connection, response), the body not read yet.
        A failure to connect, send or read the status raises _Retry."""
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=min(self.connect_timeout_s, timeout or self.timeout_s))
        try:
            # JSON has no NaN or infinity: Python's json would send them as invalid JSON.
            data = json.dumps(body, allow_nan=False).encode("utf-8") if body is not None else None
        except ValueError as e:
            raise RequestError("%s %s: the request holds a number JSON cannot carry (NaN or infinity): %s"
                               % (method, path, e)) from None
        try:
            conn.connect()
            conn.sock.settimeout(timeout or self.timeout_s)
            conn.request(method, self._prefix + path, body=data, headers=self._headers(data is not None))
            return conn, conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise _Retry(self._unreachable(method, path, e)) from e

    def _unreachable(self, method, path, e):
        return InfrastructureError("%s %s at %s: %s" % (method, self._prefix + path, self.url,
                                                        str(e) or type(e).__name__))

    def _read(self, method, path, conn, response):
        try:
            return response.read()
        except (OSError, http.client.HTTPException) as e:
            raise _Retry(self._unreachable(method, path, e)) from e
        finally:
            conn.close()

    def _open(self, method, path, body, *, batch=False):
        """(connection, response) of a 2xx answer, its body left to the caller."""
        conn, response = self._send(method, path, body, None)
        if 200 <= response.status < 300:
            return conn, response
        raw = self._read(method, path, conn, response)
        self._fail("%s %s" % (method, self._prefix + path), response.status, raw,
                   response.getheader("Retry-After"), batch)

    def _once(self, method, path, body, *, batch=False, text=False, timeout=None, accept=()):
        """One attempt: the decoded answer of a 2xx (or `accept`ed) status."""
        conn, response = self._send(method, path, body, timeout)
        raw = self._read(method, path, conn, response)
        status = response.status
        if 200 <= status < 300 or status in accept:
            if text:
                return raw.decode("utf-8", "replace")
            payload = _decode(raw)
            if payload is None:
                raise _Retry(InfrastructureError("%s %s: HTTP %d with a body that is not JSON"
                                                 % (method, self._prefix + path, status), status=status))
            return payload
        self._fail("%s %s" % (method, self._prefix + path), status, raw, response.getheader("Retry-After"), batch)

    @staticmethod
    def _fail(where, status, raw, retry_after, batch):
        """Raises what an error status stands for (docs/serve.md, "Endpoints")."""
        payload = _decode(raw)
        message, kind = _server_message(payload, raw, status)
        text = "%s: HTTP %d: %s" % (where, status, message)
        result = payload if isinstance(payload, dict) and "status" in payload else None
        said = dict(status=status, server_message=message)
        if status == 422 and kind == "unsupported":  # a result when a lane found it so
            raise UnsupportedError(text, kind=kind, result=result, **said)
        if status == 422:
            raise TaskError(text, kind=kind or "task", result=result, **said)
        if status == 504 and kind == "deadline":  # the request's deadline_s (a proxy's 504 is retried)
            raise DeadlineError(text, kind=kind, result=result, **said)
        if status == 429 or status >= 500:
            raise _Retry(InfrastructureError(text, kind=kind, result=result, **said), _retry_after_s(retry_after))
        if status == 404 and batch and kind in (None, "", "unknown_batch"):
            raise BatchNotFoundError(text, kind=kind, **said)
        if 400 <= status < 500:
            raise RequestError(text, kind=kind, **said)
        raise KernelVaultError(text, kind=kind, **said)

    def _wait_for_batch(self, batch_id, size):
        """Results of one batch (None where none arrived): polls until it is done,
        or returns what it had when the server lost the batch."""
        have = [None] * size
        while True:
            try:
                snapshot = self.get_batch(batch_id, wait_s=self.poll_s)
            except BatchNotFoundError:
                return have
            for j, result in enumerate(snapshot.get("results") or []):
                if j < size and result is not None and have[j] is None:
                    have[j] = result
            # Finished when every result is there (the server's "done" counts them).
            if all(result is not None for result in have):
                return have


def _keyed(request):
    """A copy of the request with an idempotency key (the caller's, or a fresh one)."""
    if not isinstance(request, dict):
        raise TypeError("kernelvault: a request is a dict, got %s" % type(request).__name__)
    copy = dict(request)
    if not copy.get("idempotency_key"):
        copy["idempotency_key"] = new_idempotency_key()
    return copy
