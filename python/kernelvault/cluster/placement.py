"""Where the cluster's actors run: one node service on each node (pinned to it by
node affinity, with all of the node's GPUs), the router on the driver's node (so
that the driver's store is a local file)."""
import hashlib
import json

NAMESPACE = "kernelvault"
ROUTER_NAME = "kvault-router"
ROUTER_CONCURRENCY = 256    # verify_batch calls waiting at once (threads of the router actor)
NODE_CONCURRENCY = 64       # calls a node service takes at once


def serve_args_for(serve_args, gpus):
    """The node's `kvault serve` flags: a node without GPUs verifies on the CPU."""
    args = list(serve_args)
    if gpus > 0:
        return args
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--backend":
            skip = True
        elif not arg.startswith("--backend="):
            kept.append(arg)
    return kept + ["--backend", "cpu"]


def start_node_service(node_id, gpus, serve_args, folder=None):
    """The node's service actor (made, or found when a router before this one made it
    with the same flags: a detached actor outlives its driver, and its store answers
    the work it finished)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from .node import NodeService
    args = serve_args_for(serve_args, gpus)
    flavour = hashlib.sha256(json.dumps([args, folder]).encode()).hexdigest()[:8]
    actor = ray.remote(NodeService).options(
        name="kvault-node-%s-%s" % (node_id[:16], flavour), namespace=NAMESPACE, get_if_exists=True,
        lifetime="detached", num_cpus=0, num_gpus=gpus, max_concurrency=NODE_CONCURRENCY, max_restarts=0,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))
    node_folder = None if folder is None else "%s/%s" % (folder.rstrip("/"), node_id[:16])
    return actor.remote(args, list(range(gpus)), node_folder)


def start_router(db, serve_args=(), *, detached=False, **options):
    """The router actor on this driver's node, for this store and these flags (found
    by name if one runs already: its name is ROUTER_NAME and a hash of both)."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from .router import Router
    here = ray.get_runtime_context().get_node_id()
    flavour = hashlib.sha256(json.dumps([db, list(serve_args), sorted(options.items())]).encode()).hexdigest()[:8]
    actor = ray.remote(Router).options(
        name="%s-%s" % (ROUTER_NAME, flavour), namespace=NAMESPACE, get_if_exists=True, lifetime="detached" if detached else None,
        num_cpus=0, max_concurrency=ROUTER_CONCURRENCY,
        scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))
    return actor.remote(db, list(serve_args), **options)


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
