"""The router: spreads verification requests over the node services of a Ray
cluster and gathers their results into one store (docs/cluster.md).

    router = Router(db="/data/kvault.db", serve_args=["--no-timing"])
    results = router.verify_batch(requests)      # native API requests, results in order

Scheduling. Requests wait in one queue, grouped by task (the hash of the task's
source). A node has `slots` groups in flight (2 per lane of its serve); when a slot is
free it takes, in this order, a group of a task it holds warm, a group of a task no
node holds, or a group of a task whose warm nodes are all full. So the candidates of a
task stay where its reference is prepared, and an idle node takes work from a busy one.
New nodes are found every `discover_s` seconds and get work as soon as their serve
answers.

Failures. A node whose actor dies (the node was removed or crashed) loses nothing:
its groups in flight go back to the front of the queue, with the same idempotency
keys, and another node verifies them. A result whose error is of kind
"infrastructure" is retried the same way, at most `max_attempts` times, then
delivered as it is (the caller's client raises it, never scores it). A node whose
service raised while it was made (no kvault binary, a serve that exits at start), or
whose serve started no lane's workers (node.NodeNotReadyError), is not asked again:
made again, it would fail again. It is reported (stats "failed");
when every node that should take the work is such a node, nothing could ever verify
the queue, so each queued request is delivered an infra_error naming the nodes and
why (`unservable`), and so is every request submitted while it lasts.

Recording. A group's results are delivered only after their store rows, which the
node hands back with them, are imported into the driver's store (`kvault import`,
recorder.py). The store's key (run, task, sample, candidate, backend, arch) makes a
row imported again one attempt; rows of a node that died before answering are never
imported, and its work is verified once more elsewhere.

Thread safety: every public method may be called from any thread (the Ray actor
wrapping a Router is threaded). One dispatcher thread owns the nodes and the futures.
"""
import hashlib
import json
import re
import threading
import time
import uuid
from collections import OrderedDict, deque

from ..client import _keyed, problem_of
from .node import NodeNotReadyError
from .recorder import Recorder

GROUP_SIZE = 8          # most candidates of one task sent to a node in one call
SLOTS_PER_LANE = 2      # groups in flight per lane of a node's serve
DISCOVER_S = 2.0        # how often the cluster's node list is read
MAX_ATTEMPTS = 5        # tries of a request whose node failed it, or lost it
KEEP_CALL_S = 3600      # a finished call can be polled this long (as serve keeps a batch)
MAX_CALLS = 10000       # calls kept at most; the oldest is forgotten first


def task_key(request):
    """The affinity key of a request: its task's source, hashed."""
    source = request.get("task_source") or ""
    return hashlib.sha256(source.encode("utf-8", "replace")).hexdigest()[:16]


def _gpus(node):
    return int((node.get("Resources") or {}).get("GPU", 0))


def infrastructure_result(message):
    """The result of a request the cluster could not get verified."""
    return {"status": "infra_error", "reward": None, "message": message,
            "error": {"kind": "infrastructure", "message": message, "retry": True}}


class _Item:
    """One request on its way through the router."""
    __slots__ = ("request", "task", "call", "index", "attempts")

    def __init__(self, request, call, index):
        self.request, self.task, self.call, self.index, self.attempts = request, task_key(request), call, index, 0


class _Call:
    """The requests of one submit, and their results as they arrive."""

    def __init__(self, size):
        self.results = [None] * size
        self.done = 0
        self.created = time.monotonic()
        self.finished = None if size else self.created   # monotonic time of the last result
        self.cancelled = False
        self.changed = threading.Condition()


class _Node:
    def __init__(self, node_id, handle, info):
        self.node_id, self.handle = node_id, handle
        self.lanes = max(1, int(info.get("lanes") or 1))
        self.slots = self.lanes * SLOTS_PER_LANE
        self.inflight = 0           # groups sent and not answered
        self.verified = 0
        self.warm = set()           # task keys sent here


class Router:
    """db: the driver's store; serve_args: flags for every node's `kvault serve`
    (a CPU node gets `--backend cpu` whatever they say); resource: only nodes that
    offer this Ray custom resource get a service (default: every node);
    node_folder: where each node keeps its store and log (default: its temp dir)."""

    def __init__(self, db, serve_args=(), *, resource=None, node_folder=None, group_size=GROUP_SIZE,
                 discover_s=DISCOVER_S, max_attempts=MAX_ATTEMPTS):
        self.db, self.serve_args, self.resource = db, list(serve_args), resource
        self.node_folder, self.group_size = node_folder, group_size
        self.discover_s, self.max_attempts = discover_s, max_attempts
        self._recorder = Recorder(db)
        self._lock = threading.Lock()            # guards _pending, _calls
        self._pending = OrderedDict()            # task key -> deque of _Item
        self._calls = {}                         # call id -> _Call
        self._nodes = {}                         # node id -> _Node (dispatcher thread only)
        self._starting = {}                      # info() future -> (node id, handle)
        self._inflight = {}                      # verify future -> (node id, [items], sent at)
        self._overhead_s, self._overhead_requests = 0.0, 0  # dispatcher thread only
        self.lost_why = {}                       # node id -> why it was last taken out
        self.failed = {}                         # node id -> why its service could not be made (not asked again)
        self._eligible = {}                      # node id -> address: the nodes for this work, at the last discovery
        self.kind = None                         # "gpu" | "cpu" (placement.work_kind), at first discovery
        self.counters = {"delivered": 0, "resubmitted": 0, "nodes_lost": 0, "imported_rows": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._dispatch_loop, name="kvault-router", daemon=True)
        self._thread.start()

    # ---- the API ------------------------------------------------------------------

    def verify_batch(self, requests, timeout_s=None):
        """Verifies every request (dicts of the native API); their results in
        request order, each one recorded in the driver's store before it is
        returned. A request that could not be verified after `max_attempts` tries
        has an infra_error result (no reward)."""
        call_id = self.submit(requests)
        snapshot = self.poll(call_id, wait_s=timeout_s if timeout_s is not None else float("inf"))
        self.forget(call_id)
        return snapshot["results"]

    def submit(self, requests):
        """Queues the requests -> a call id for poll, cancel and forget."""
        call = _Call(len(requests))
        call_id = "kc-" + uuid.uuid4().hex
        items = [_Item(_keyed(r), call, i) for i, r in enumerate(requests)]
        with self._lock:
            self._forget_old_calls()
            self._calls[call_id] = call
            for item in items:
                self._pending.setdefault(item.task, deque()).append(item)
        return call_id

    def poll(self, call_id, wait_s=0.0):
        """{"done", "size", "results"} of a call, after waiting up to wait_s seconds
        for it to finish. KeyError for an unknown call."""
        call = self._calls[call_id]
        deadline = time.monotonic() + wait_s if wait_s != float("inf") else None
        with call.changed:
            while call.done < len(call.results):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                call.changed.wait(timeout=left if left is not None else 1.0)
            return {"done": call.done, "size": len(call.results), "results": list(call.results)}

    def cancel(self, call_id):
        """Drops the call's queued requests (their results: error kind "cancelled");
        those in flight finish. -> how many were dropped."""
        call = self._calls[call_id]
        dropped = []
        with self._lock:
            call.cancelled = True
            for task, queue in list(self._pending.items()):
                keep = deque(item for item in queue if item.call is not call)
                dropped += [item for item in queue if item.call is call]
                if keep:
                    self._pending[task] = keep
                else:
                    del self._pending[task]
        message = "the batch was cancelled before this candidate ran"
        for item in dropped:
            self._deliver(item, {"status": "infra_error", "reward": None, "message": message,
                                 "error": {"kind": "cancelled", "message": message, "retry": False}})
        return len(dropped)

    def forget(self, call_id):
        with self._lock:
            self._calls.pop(call_id, None)

    def _forget_old_calls(self):
        """Calls finished KEEP_CALL_S ago, and the oldest beyond MAX_CALLS, are
        forgotten (the HTTP front's batches are never forgotten by their client).
        REQUIRES: self._lock held."""
        now = time.monotonic()
        for call_id in [i for i, c in self._calls.items() if c.finished is not None and now - c.finished > KEEP_CALL_S]:
            del self._calls[call_id]
        while len(self._calls) >= MAX_CALLS:
            del self._calls[min(self._calls, key=lambda i: self._calls[i].created)]

    def stats(self):
        """The router's view: nodes (in flight, lanes, verified), queue length, counters."""
        with self._lock:
            queued = sum(len(q) for q in self._pending.values())
        nodes = {n.node_id: {"lanes": n.lanes, "inflight_groups": n.inflight, "verified": n.verified,
                             "warm_tasks": len(n.warm)} for n in list(self._nodes.values())}
        overhead_ms = 1000 * self._overhead_s / self._overhead_requests if self._overhead_requests else None
        return {"kind": self.kind, "nodes": nodes, "queued": queued, "starting": len(self._starting), "lost": dict(self.lost_why),
                "failed": dict(self.failed), "unservable": self.unservable(), "overhead_ms_per_request": overhead_ms,
                **self.counters}

    def unservable(self):
        """Why no node can take this router's work, or None: at the last discovery
        every node that should take it had a service that could not be made."""
        eligible = self._eligible
        if not eligible or any(node_id not in self.failed for node_id in eligible):
            return None
        nodes = ["node %s (%s): %s" % (node_id[:12], address, self.failed[node_id])
                 for node_id, address in sorted(eligible.items())]
        return "no node of the cluster can verify: " + "; ".join(nodes)

    def forward(self, method, path, body):
        """One call of a protocol the router does not split (AMD's /run_code_batch,
        /run_code, /evaluate) passed whole to the least loaded node -> (status,
        content type, body bytes). The rows it wrote are imported first; a node lost
        during the call is tried once more elsewhere."""
        import ray
        tried = set()
        while True:
            nodes = [n for n in list(self._nodes.values()) if n.node_id not in tried]
            if not nodes:
                message = b'{"error": {"kind": "infrastructure", "message": "no node of the cluster could take it"}}'
                return 503, "application/json", message
            node = min(nodes, key=lambda n: n.inflight / n.slots)
            tried.add(node.node_id)
            try:
                status, ctype, payload, rows = ray.get(node.handle.forward.remote(method, path, body))
            except Exception:  # noqa: BLE001 - the node is lost; the dispatcher will notice too
                continue
            failure = self._import(rows)
            if failure:
                return 503, "application/json", ('{"error": {"kind": "infrastructure", "message": %s}}'
                                                 % json.dumps(failure)).encode()
            return status, ctype, payload

    def node_handles(self):
        """The live node services: {node id: actor handle}."""
        return {n.node_id: n.handle for n in list(self._nodes.values())}

    def close(self):
        self._stop.set()
        self._thread.join(timeout=30)
        self._recorder.close()

    # ---- the dispatcher thread ------------------------------------------------------

    def _dispatch_loop(self):
        import ray
        next_discovery = 0.0
        while not self._stop.is_set():
            if time.monotonic() >= next_discovery:
                self._discover(ray)
                next_discovery = time.monotonic() + self.discover_s
                why = self.unservable()
                if why:
                    self._fail_queued(why)
            self._dispatch()
            futures = list(self._starting) + list(self._inflight)
            if not futures:
                time.sleep(0.02)
                continue
            ready, _ = ray.wait(futures, num_returns=1, timeout=0.05)
            for future in ready:
                if future in self._starting:
                    self._node_ready(ray, future)
                else:
                    self._group_answered(ray, future)

    def _discover(self, ray):
        from .placement import serves_work, start_node_service, work_kind
        candidates = [node for node in ray.nodes() if node.get("Alive") and
                      (not self.resource or (node.get("Resources") or {}).get(self.resource, 0) > 0)]
        if self.kind is None:
            self.kind = work_kind(self.serve_args, any(_gpus(node) > 0 for node in candidates))
        eligible = {}
        for node in candidates:
            if not serves_work(self.kind, _gpus(node)):
                continue
            node_id = node["NodeID"]
            eligible[node_id] = node.get("NodeManagerAddress", "?")
            known = node_id in self._nodes or node_id in self.failed or \
                any(n == node_id for n, _ in self._starting.values())
            if not known:
                handle = start_node_service(node_id, _gpus(node), self.serve_args, self.kind, self.node_folder)
                self._starting[handle.info.remote()] = (node_id, handle)
        self._eligible = eligible
        for node_id in list(self._nodes):
            if node_id not in eligible:
                self._lose_node(node_id, "the node left the cluster")

    def _node_ready(self, ray, future):
        node_id, handle = self._starting.pop(future)
        try:
            info = ray.get(future)
        except Exception as e:  # noqa: BLE001 - a service whose serve is not ready is asked again at the next discovery
            last = str(e).strip().splitlines()[-1]   # a Ray error ends with the error raised on the node
            self.lost_why[node_id] = "its service did not start: %s" % re.sub(r"^[\w.]+: ", "", last)[:500]
            # Ray's RayActorError: the service raised while made; or its serve runs but
            # no lane ever started its workers. Either would fail again.
            if getattr(e, "actor_init_failed", False) or isinstance(e, NodeNotReadyError):
                self.failed[node_id] = self.lost_why[node_id]
            return
        self._nodes[node_id] = _Node(node_id, handle, info)

    def _dispatch(self):
        for node in sorted(self._nodes.values(), key=lambda n: n.inflight / n.slots):
            while node.inflight < node.slots:
                items = self._next_group(node)
                if not items:
                    break
                node.inflight += 1
                node.warm.add(items[0].task)
                future = node.handle.verify_batch.remote([item.request for item in items])
                self._inflight[future] = (node.node_id, items, time.monotonic())

    def _next_group(self, node):
        """Up to group_size queued items of one task, chosen for `node` (module doc)."""
        with self._lock:
            task = self._pick_task(node)
            if task is None:
                return []
            queue = self._pending[task]
            items = [queue.popleft() for _ in range(min(self.group_size, len(queue)))]
            if not queue:
                del self._pending[task]
            return items

    def _pick_task(self, node):
        warm_elsewhere = {}
        for other in self._nodes.values():
            for task in other.warm:
                warm_elsewhere.setdefault(task, []).append(other)
        unheld = full_elsewhere = None
        for task in self._pending:
            if task in node.warm:
                return task
            holders = warm_elsewhere.get(task)
            if not holders:
                unheld = unheld or task
            elif all(h.inflight >= h.slots for h in holders):
                full_elsewhere = full_elsewhere or task
        return unheld or full_elsewhere

    def _group_answered(self, ray, future):
        node_id, items, sent_at = self._inflight.pop(future)
        node = self._nodes.get(node_id)
        if node is not None:
            node.inflight -= 1
        try:
            results, rows, serve_s = ray.get(future)
        except Exception as e:  # noqa: BLE001 - the actor died, or its serve failed the call
            why = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
            self._lose_node(node_id, why)
            self._requeue(items, "node %s: %s" % (node_id[:12], why))
            return
        import_start = time.monotonic()
        failure = self._import(rows)
        # The router's cost: the round trip beyond serve's own time (Ray, the node's
        # export) and the import into the driver's store.
        self._overhead_s += (import_start - sent_at - serve_s) + (time.monotonic() - import_start)
        self._overhead_requests += len(items)
        if failure:
            for item in items:
                self._deliver(item, infrastructure_result(failure))
            return
        retry = []
        for item, result in zip(items, results):
            if problem_of(result) == "infrastructure":
                retry.append(item)
            else:
                self._deliver(item, result)
        if node is not None:
            node.verified += len(items) - len(retry)
        if retry:
            first = results[items.index(retry[0])]
            self._requeue(retry, (first.get("message") if isinstance(first, dict) else None) or "infra_error")

    def _lose_node(self, node_id, why):
        """Takes a node out of the pool: its groups in flight go back to the queue.
        If the node is still in the cluster, the next discovery asks its service
        again (a restarted serve comes back; a dead actor is made anew)."""
        if self._nodes.pop(node_id, None) is None:
            return
        self.counters["nodes_lost"] += 1
        self.lost_why[node_id] = why
        for future, (owner, items, _) in list(self._inflight.items()):
            if owner == node_id:
                del self._inflight[future]
                self._requeue(items, "node %s lost: %s" % (node_id[:12], why))

    def _fail_queued(self, why):
        """Delivers every queued request an infra_error saying why."""
        with self._lock:
            items = [item for queue in self._pending.values() for item in queue]
            self._pending.clear()
        for item in items:
            self._deliver(item, infrastructure_result(why))

    def _requeue(self, items, why):
        """Puts items back at the front of the queue, or delivers an infra_error for
        those that used up their attempts."""
        again = []
        for item in items:
            item.attempts += 1
            if item.attempts >= self.max_attempts:
                self._deliver(item, infrastructure_result("%d attempts failed; the last: %s" % (item.attempts, why)))
            else:
                again.append(item)
        self.counters["resubmitted"] += len(again)
        with self._lock:
            for item in reversed(again):
                if item.call.cancelled:
                    continue
                queue = self._pending.get(item.task)
                if queue is None:
                    self._pending[item.task] = queue = deque()
                    self._pending.move_to_end(item.task, last=False)
                queue.appendleft(item)

    def _import(self, rows):
        """The rows into the driver's store -> None, or why they could not be."""
        failure = self._recorder.record(rows)
        if failure is None:
            self.counters["imported_rows"] += len(rows)
        return failure

    def _deliver(self, item, result):
        call = item.call
        with call.changed:
            if call.results[item.index] is None:
                call.results[item.index] = result
                call.done += 1
                if call.done == len(call.results):
                    call.finished = time.monotonic()
                self.counters["delivered"] += 1
            call.changed.notify_all()
