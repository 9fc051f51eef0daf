"""The KernelVault service of one node: a Ray actor that runs and supervises one
`kvault serve` with the node's devices (docs/cluster.md, "One service per node").

The actor is the only way the router talks to a node: it verifies batches through
its loopback `kvault serve` (so no port or token crosses the network) and hands back,
with the results, the store rows they were recorded as (`kvault export`), which the
router imports into the driver's store (`kvault import`). Its serve writes a store of
its own on the node's disk; that store answers work a restarted serve finished before.

Supervision: a thread polls the serve process; one that exits is started again on
the same store (with backoff), and calls made meanwhile get InfrastructureError, which
the kernelvault Client retries. The serve process dies with the actor (parent-death
signal), so a node that Ray removes leaves nothing running.
"""
import ctypes
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

from concurrent.futures import ThreadPoolExecutor

from ..client import Client, refused_result
from ..errors import InfrastructureError, RequestError, TaskError
from .paths import kvault_binary, kvault_env

ONE_BY_ONE_THREADS = 32    # requests of a refused batch sent again at once, each alone
START_TIMEOUT_S = 300       # a serve that has not printed its listening line by then failed
READY_TIMEOUT_S = 120       # a serve none of whose lanes started its workers by then cannot verify
SUPERVISE_EVERY_S = 0.5     # how often the supervisor looks at the serve process
RESTART_BACKOFF_S = (1, 2, 5, 10, 30)


class NodeNotReadyError(InfrastructureError):
    """The node's serve runs, but none of its lanes started its workers within
    READY_TIMEOUT_S (a worker Python without torch, a device that cannot be used): the
    router leaves the node out, as one whose service could not be made."""


def _die_with_parent():
    """preexec_fn: SIGKILL when the actor's process dies (Linux prctl PR_SET_PDEATHSIG)."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


class NodeService:
    """One `kvault serve` on this node.

    serve_args: the flags of `kvault serve` besides --port, --db and --devices
        (--backend, --no-timing, --policy, --run, ...).
    devices: device indexes for --devices (Ray sets CUDA_VISIBLE_DEVICES to the GPUs
        it gave the actor, so these are 0..n-1); empty on a CPU node.
    folder: where the node's store and logs live (default: a folder under the
        node's temporary directory).
    """

    def __init__(self, serve_args, devices=(), folder=None):
        self.serve_args = list(serve_args)
        self.devices = list(devices)
        self.folder = os.path.abspath(folder or tempfile.mkdtemp(prefix="kvault-node-"))
        os.makedirs(self.folder, exist_ok=True)
        self.db = os.path.join(self.folder, "node.db")
        self._lock = threading.Lock()          # guards _process, _url, restarts
        self._process = None
        self._url = None
        self.restarts = 0
        self._start()
        threading.Thread(target=self._supervise, name="kvault-serve-supervisor", daemon=True).start()

    # ---- what the router calls ----------------------------------------------------

    def info(self):
        """{"node_id", "url", "db", "lanes", "devices", "restarts"} once a lane of the
        node's serve is ready (its workers started); NodeNotReadyError, with the last
        thing serve logged, if none is within READY_TIMEOUT_S."""
        import ray
        deadline = time.monotonic() + READY_TIMEOUT_S
        health = self._client().health()
        while not health.get("lanes_ready"):
            if time.monotonic() > deadline:
                log_path = os.path.join(self.folder, "serve.log")
                raise NodeNotReadyError("no lane of its kvault serve became ready in %d s: %s (%s)"
                                        % (READY_TIMEOUT_S, _last_line(log_path, 0), log_path))
            time.sleep(0.5)
            health = self._client().health()
        return {"node_id": ray.get_runtime_context().get_node_id(), "url": self._url, "db": self.db,
                "lanes": int(health.get("lanes") or 1), "devices": self.devices, "restarts": self.restarts,
                "queue_depth": health.get("queue_depth", 0)}

    def verify_batch(self, requests):
        """Verifies `requests` (dicts of the native API, each with its idempotency key)
        -> (results in request order, the store rows of those results as export JSON
        lines, seconds spent in serve). Results without a reward are returned as they
        are: the router decides."""
        start = time.monotonic()
        try:
            results = self._client().verify_batch(requests) if requests else []
        except RequestError:
            # serve refuses a whole batch for one request it cannot run (a HIP file on
            # CPU nodes) or cannot read (400): each on its own, so the others are
            # verified and the refused ones answered as such, never retried.
            with ThreadPoolExecutor(max_workers=min(len(requests), ONE_BY_ONE_THREADS)) as pool:
                results = list(pool.map(self._verify_one, requests))
        serve_s = time.monotonic() - start
        keys = {(r.get("task_hash"), r.get("candidate_hash")) for r in results if isinstance(r, dict)}
        candidates = sorted({c for _, c in keys if c})
        rows = self._rows(["--candidate=" + c for c in candidates], db=self.db) if candidates else []
        return results, [line for line in rows if _key(line) in keys], serve_s

    def _verify_one(self, request):
        """One request's result as verify_batch gives it: a task error's result as it
        is, a refused request's refused_result."""
        try:
            return self._client().verify(request)
        except RequestError as e:
            return refused_result(e)
        except TaskError as e:
            if isinstance(e.result, dict):
                return e.result
            raise

    def forward(self, method, path, body):
        """One HTTP call of AMD's protocols (or any path of serve's API) passed to the
        node's serve as it came -> (status, content type, body bytes, store rows
        written during the call)."""
        import http.client
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
        parts = self._url.split("//", 1)[1]
        host, port = parts.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=3600)
        try:
            headers = {"Content-Type": "application/json", "Connection": "close"}
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            status, ctype = response.status, response.getheader("Content-Type", "application/json")
        except OSError as e:
            raise InfrastructureError("node serve at %s: %s" % (self._url, e)) from e
        finally:
            conn.close()
        return status, ctype, payload, self._rows(["--since=" + since], db=self.db)

    def health(self):
        return self._client().health()

    def metrics(self):
        return self._client().metrics()

    def run_command(self, argv, stdin_text=None, timeout_s=None):
        """Runs a kvault subcommand on this node (`kvault gen` of a campaign unit) ->
        (exit code, stdout, the last 4000 characters of stderr)."""
        run = subprocess.run([kvault_binary()] + list(argv), input=stdin_text, capture_output=True, text=True,
                             env=kvault_env(), timeout=timeout_s)
        return run.returncode, run.stdout, run.stderr[-4000:]

    def run_gen(self, task_name, task_source, gen_flags, run):
        """One task of a gen campaign: `kvault gen` on a suite of that task alone,
        recorded in a store of that task on this node (again with --resume, when the
        task was tried here before) -> (exit code, the task's attempts as export rows,
        the end of gen's stderr)."""
        suite = tempfile.mkdtemp(prefix="kvault-gen-", dir=self.folder)
        # At its path below the campaign's suite (`level1/19_ReLU`): gen names it so.
        path = os.path.join(suite, *task_name.split("/")) + ".py"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(task_source)
        db = os.path.join(self.folder, "gen-%s.db" % task_name.replace("/", "__"))
        again = ["--resume"] if os.path.exists(db) else []
        code, _, err = self.run_command(["gen", "--suite", suite, "--db", db, "--run", run] + again + list(gen_flags))
        rows = [line for line in self._rows([], db=db) if json.loads(line).get("run") == run] \
            if os.path.exists(db) else []
        return code, rows, err

    def stop(self):
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()

    # ---- the serve process --------------------------------------------------------

    def _client(self):
        with self._lock:
            url = self._url
        if url is None:
            raise InfrastructureError("the node's kvault serve is restarting")
        return Client(url, retries=3, backoff_s=0.5, max_backoff_s=5, poll_s=30)

    def _command(self):
        argv = [kvault_binary(), "serve", "--port", "0", "--db", self.db]
        if self.devices:
            argv += ["--devices", ",".join(str(d) for d in self.devices)]
        return argv + self.serve_args

    def _start(self):
        """Starts serve and waits for its listening line; InfrastructureError with the
        last line serve logged (why it stopped) if it fails."""
        log_path = os.path.join(self.folder, "serve.log")
        with open(log_path, "a") as log:
            logged_before = log.tell()
            try:
                process = subprocess.Popen(self._command(), stdout=subprocess.PIPE, stderr=log, text=True,
                                           env=kvault_env(), cwd=self.folder, preexec_fn=_die_with_parent)
            except OSError as e:  # no kvault binary (paths.py says what it tried), or one that cannot run
                raise InfrastructureError("starting kvault serve: %s" % e) from None
        first = {}
        reader = threading.Thread(target=lambda: first.setdefault("line", process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=START_TIMEOUT_S)
        try:
            url = json.loads(first.get("line") or "")["listening"]
        except (ValueError, KeyError, TypeError):
            process.kill()
            process.wait()
            raise InfrastructureError("kvault serve did not start (exit %s): %s (%s)"
                                      % (process.poll(), _last_line(log_path, logged_before), log_path)) from None
        with self._lock:
            self._process, self._url = process, url

    def _supervise(self):
        failures = 0
        while True:
            time.sleep(SUPERVISE_EVERY_S)
            with self._lock:
                process = self._process
                if process is None:
                    return                       # stopped
                if process.poll() is None:
                    failures = 0
                    continue
                self._url = None
            time.sleep(RESTART_BACKOFF_S[min(failures, len(RESTART_BACKOFF_S) - 1)])
            try:
                self._start()
                self.restarts += 1
            except InfrastructureError:
                failures += 1

    def _rows(self, selection, db):
        """Export JSON lines of the rows of store `db` that `kvault export`'s
        selection flags (--candidate, --since, --run) pick: a batch's rows, not the
        whole store."""
        code, out, err = self.run_command(["export", "--db", db] + selection)
        if code != 0:
            raise InfrastructureError("kvault export on the node: %s" % err.strip())
        return [line for line in out.splitlines() if line.strip()]


REQUEST_LOG_PREFIX = "kvault serve: request "   # serve's line per request answered (docs/serve.md)


def _last_line(path, offset):
    """The last line written to the file `path` after `offset`, its request lines aside."""
    with open(path, errors="replace") as f:
        f.seek(offset)
        lines = [line.strip() for line in f.read().splitlines()
                 if line.strip() and not line.startswith(REQUEST_LOG_PREFIX)]
    return lines[-1][:500] if lines else "it logged nothing"


def _key(line):
    row = json.loads(line)
    return row.get("task_hash"), row.get("candidate_hash")
