"""kernelvault.cluster: KernelVault over a Ray cluster (docs/cluster.md).

One node service per node (node.py: a Ray actor supervising `kvault serve` with the
node's GPUs; GPU work only on nodes with GPUs, placement.py), a router that spreads requests over
them by task affinity and load and gathers every result into the driver's store
(router.py), an HTTP front speaking `kvault serve`'s protocols (front.py), and
campaigns that survive their driver (campaign.py; `python -m kernelvault.cluster`).

From inside a Ray job (verl, OpenRLHF), without HTTP:

    import ray, kernelvault.cluster as kc
    ray.init(address="auto")
    verifier = kc.connect(db="/data/rewards.db", serve_args=["--backend", "cuda"])
    results = verifier.verify_batch([{"task_source": task, "completion": answer}, ...])

Infrastructure failures are never rewards: a request the cluster could not verify
comes back as an infra_error result without a reward (the kernelvault Client's rules,
docs/rl.md).
"""
from .placement import start_router, stop_node_services

__all__ = ["ClusterVerifier", "connect", "start_router", "stop_node_services"]


class ClusterVerifier:
    """A handle on the cluster's router actor; picklable, so it may be passed to
    other Ray actors (a verl reward worker). verify_batch blocks until every result
    is recorded in the driver's store."""

    def __init__(self, router):
        self.router = router

    def verify_batch(self, requests, timeout_s=None):
        import ray
        return ray.get(self.router.verify_batch.remote(list(requests), timeout_s))

    def verify(self, request=None, **fields):
        body = dict(request or {})
        body.update(fields)
        return self.verify_batch([body])[0]

    def stats(self):
        import ray
        return ray.get(self.router.stats.remote())


def connect(db="kvault.db", serve_args=(), *, detached=False, **options):
    """The cluster's router (started on this driver's node if none runs) as a
    ClusterVerifier. `db` is the driver's store (made absolute here); options go to
    Router (resource, node_folder, group_size, discover_s, max_attempts)."""
    import os
    return ClusterVerifier(start_router(os.path.abspath(db), serve_args, detached=detached, **options))
