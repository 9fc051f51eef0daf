"""Where the cluster's actors run: one node service on each node (pinned to it by
node affinity, with all of the node's GPUs), the router on the driver's node (so
that the driver's store is a local file)."""
import hashlib
import json

NAMESPACE = "kernelvault"
ROUTER_NAME = "kvault-router"
ROUTER_CONCURRENCY = 256    # verify_batch calls waiting at once (threads of the router actor)
NODE_CONCURRENCY = 64       # calls a node service takes at once


GPU_BACKENDS = ("cuda", "hip")


def backend_flag(serve_args):
    """The --backend of serve's flags ("auto" when absent)."""
    backend = "auto"
    for i, arg in enumerate(serve_args):
        if arg == "--backend" and i + 1 < len(serve_args):
            backend = serve_args[i + 1]
        elif arg.startswith("--backend="):
            backend = arg.split("=", 1)[1]
    return backend


def work_kind(serve_args, cluster_has_gpu):
    """"gpu" or "cpu": what the router's work needs. --backend cuda or hip is GPU
    work, --backend cpu CPU work; auto is decided once, when the router first sees
    the cluster: GPU work if a node has a GPU then. One kind per router, so that a
    candidate is never verified on a CPU node by one request and on a GPU by the
    next: the two would be different rewards for the same kernel."""
    backend = backend_flag(serve_args)
    if backend in GPU_BACKENDS:
        return "gpu"
    if backend == "cpu":
        return "cpu"
    return "gpu" if cluster_has_gpu else "cpu"


def serves_work(kind, gpus):
    """Whether a node with `gpus` GPUs takes work of this kind: GPU work only on
    nodes with GPUs; CPU work on every node."""
    return kind == "cpu" or gpus > 0


def serve_args_for(serve_args, kind):
    """The node's `kvault serve` flags: CPU work runs with --backend cpu everywhere,
    GPU nodes included."""
    if kind != "cpu":
        return list(serve_args)
    kept, skip = [], False
    for arg in serve_args:
        if skip:
            skip = False
        elif arg == "--backend":
            skip = True
        elif not arg.startswith("--backend="):
            kept.append(arg)
    return kept + ["--backend", "cpu"]


def start_node_service(node_id, gpus, serve_args, kind, folder=None):
    """The node's service actor (made, or found when a router before this one made it
    with the same flags: a detached actor outlives its driver, and its store answers
    the work it finished)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from .node import NodeService
    args = serve_args_for(serve_args, kind)
    gpus = gpus if kind == "gpu" else 0
    flavour = hashlib.sha256(json.dumps([args, folder]).encode()).hexdigest()[:8]
    actor = ray.remote(NodeService).options(
        name="kvault-node-%s-%s" % (node_id[:16], flavour), namespace=NAMESPACE, get_if_exists=True,
        lifetime="detached", num_cpus=0, num_gpus=gpus, max_concurrency=NODE_CONCURRENCY, max_restarts=0,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))
    node_folder = None if folder is None else "%s/%s" % (folder.rstrip("/"), node_id[:16])
    return actor.remote(args, list(range(gpus)), node_folder)


# The routers this driver started, by job (one ray.init) and name. Holding their
# handles keeps them alive while the driver runs: a router whose last handle is
# dropped is destroyed a moment later, and a second campaign in the same process that
# looked it up by name in that moment got an actor about to die (ActorDiedError
# mid-campaign).
_STARTED = {}


def start_router(db, serve_args=(), *, detached=False, **options):
    """The router actor on this driver's node, for this store and these flags (found
    by name if one runs already: its name is ROUTER_NAME and a hash of both)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from .router import Router
    here = ray.get_runtime_context().get_node_id()
    flavour = hashlib.sha256(json.dumps([db, list(serve_args), sorted(options.items())]).encode()).hexdigest()[:8]
    name = "%s-%s" % (ROUTER_NAME, flavour)
    key = (ray.get_runtime_context().get_job_id(), name)
    started = _STARTED.get(key)
    if started is not None:
        try:
            ray.get(started.__ray_ready__.remote(), timeout=60)
            return started
        except Exception:  # it died (its node, a kill): start or find another
            del _STARTED[key]
    actor = ray.remote(Router).options(
        name=name, namespace=NAMESPACE, get_if_exists=True, lifetime="detached" if detached else None,
        num_cpus=0, max_concurrency=ROUTER_CONCURRENCY,
        scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))
    _STARTED[key] = actor.remote(db, list(serve_args), **options)
    return _STARTED[key]


def running_routers():
    """Handles of the routers that run in the cluster."""
    import ray
    return [ray.get_actor(a["name"], namespace=NAMESPACE) for a in ray.util.list_named_actors(all_namespaces=True)
            if a.get("namespace") == NAMESPACE and a.get("name", "").startswith(ROUTER_NAME)]


def stop_node_services():
    """Kills every node service of the cluster (their serve processes die with them)."""
    import ray
    killed = 0
    for actor in ray.util.list_named_actors(all_namespaces=True):
        if actor.get("namespace") == NAMESPACE and actor.get("name", "").startswith("kvault-node-"):
            ray.kill(ray.get_actor(actor["name"], namespace=NAMESPACE))
            killed += 1
    return killed
