"""kernelvault.cluster on CPU nodes simulated on one machine (ray.cluster_utils.Cluster):
throughput with 1, 2 and 3 nodes, and the router's overhead per request.

    .venv/bin/python bench/cluster_scaling.py --out bench/results/cluster-<date>

Scaling: N distinct native-format candidates (copies of examples/native/cpu/relu.cpp
made distinct by a comment, so each is built and verified) for a tiny ReLU task,
`--no-timing`, through the router once every node service answers; candidates/min.
Overhead, two ways: the router's own account on the fresh batch (per group, the
round trip beyond the node's serve time, that is Ray and the node's `kvault export`,
plus the `kvault import` into the driver's store; per request), and with one node the
same batch sent again (the serve answers each request by its idempotency key, so
verification costs nothing) through the router and straight to the node's serve:
(router - direct) / N.
Writes results.json and scaling.svg (matplotlib, if installed) into --out.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

TASK = '''import torch
import torch.nn as nn

KVAULT_META = {"input_distributions": []}


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(256)]


def get_init_inputs():
    return []
'''


def requests(count, tag):
    code = (ROOT / "examples/native/cpu/relu.cpp").read_text()
    return [{"task_source": TASK, "task_name": "tiny_relu", "language": "cpp",
             "code": code + "\n// %s %d\n" % (tag, i), "idempotency_key": "%s-%d" % (tag, i)} for i in range(count)]


def measure(nodes, count, folder):
    """`folder`: where the driver's and the nodes' stores go (a scratch folder). Seconds for `count` fresh candidates over `nodes` nodes, then the overhead."""
    import ray
    from ray.cluster_utils import Cluster

    import kernelvault.cluster as kc
    from kernelvault.cluster.front import wait_for_nodes

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=1)
    try:
        ray.init(address=cluster.address, namespace="bench-cluster")
        db = folder / ("driver-%d.db" % nodes)
        verifier = kc.connect(db=str(db), serve_args=["--no-timing"], node_folder=str(folder / ("nodes-%d" % nodes)))
        wait_for_nodes(verifier.router, nodes)
        batch = requests(count, "n%d-%f" % (nodes, time.time()))
        start = time.monotonic()
        results = verifier.verify_batch(batch)
        seconds = time.monotonic() - start
        statuses = sorted({r["status"] for r in results})
        fresh_overhead_ms = verifier.stats()["overhead_ms_per_request"]
        verify_s = sum(r.get("seconds") or 0 for r in results) / len(results)
        overhead = overhead_of(verifier, batch) if nodes == 1 else {}
        stats = verifier.stats()
    finally:
        ray.shutdown()
        cluster.shutdown()
    return {"nodes": nodes, "candidates": count, "seconds": round(seconds, 2),
            "per_minute": round(count / seconds * 60, 1), "statuses": statuses,
            "mean_verification_s": round(verify_s, 3),
            "per_node_verified": sorted(n["verified"] for n in stats["nodes"].values()),
            "router_overhead_ms_per_request": round(fresh_overhead_ms, 2), **overhead}


def overhead_of(verifier, batch):
    """With one node: the batch again (already verified: the node's serve answers each
    request by its idempotency key) through the router and straight to the node's serve."""
    import ray

    from kernelvault import Client
    handles = ray.get(verifier.router.node_handles.remote())
    direct = Client(ray.get(next(iter(handles.values())).info.remote())["url"])
    start = time.monotonic()
    verifier.verify_batch(batch)
    routed_s = time.monotonic() - start
    start = time.monotonic()
    direct.verify_batch(batch)
    direct_s = time.monotonic() - start
    single = {"routed": [], "direct": []}
    for request in batch[:20]:
        for name, call in (("routed", verifier.verify), ("direct", direct.verify)):
            t = time.monotonic()
            call(request)
            single[name].append(time.monotonic() - t)
    median = {name: sorted(v)[len(v) // 2] for name, v in single.items()}
    return {"routed_batch_s": round(routed_s, 3), "direct_batch_s": round(direct_s, 3),
            "overhead_ms_per_request_in_batch": round((routed_s - direct_s) / len(batch) * 1000, 2),
            "single_routed_ms_median": round(median["routed"] * 1000, 1),
            "single_direct_ms_median": round(median["direct"] * 1000, 1)}


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([r["nodes"] for r in rows], [r["per_minute"] for r in rows], marker="o", label="measured")
    ax.plot([r["nodes"] for r in rows], [rows[0]["per_minute"] * r["nodes"] for r in rows], ls="--",
            label="linear from 1 node")
    ax.set_xlabel("CPU nodes (one 2-core machine)")
    ax.set_ylabel("candidates / min")
    ax.set_xticks([r["nodes"] for r in rows])
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--candidates", type=int, default=60)
    parser.add_argument("--nodes", default="1,2,3")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")
    os.environ.setdefault("KVAULT_CACHE_DIR", str(ROOT / "build" / "test-cache"))
    rows = []
    scratch = Path(tempfile.mkdtemp(prefix="kvault-bench-cluster-"))
    for nodes in [int(n) for n in args.nodes.split(",")]:
        rows.append(measure(nodes, args.candidates, scratch))
        print(json.dumps(rows[-1]), flush=True)
    env = {"command": " ".join([sys.executable] + sys.argv), "cpus": os.cpu_count(), "machine": platform.platform(),
           "python": platform.python_version(), "load_average_at_end": os.getloadavg(),
           "kvault": subprocess.run([str(ROOT / "build/kvault"), "--version"], capture_output=True,
                                    text=True).stdout.strip(),
           "git": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip()}
    import ray
    env["ray"] = ray.__version__
    (out / "results.json").write_text(json.dumps({"environment": env, "rows": rows}, indent=1) + "\n")
    plot(rows, out / "scaling.svg")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
