"""kernelvault.cluster on one GPU node plus CPU nodes (ray.cluster_utils.Cluster on
one machine): a GPU router and a CPU router at once, one driver's store.

    python3 bench/h200_cluster.py --out DIR [--gpu-tasks 16] [--cpu-tasks 16]

The cluster: a head node with the machine's GPU (num_gpus=1) and two CPU nodes.
Two batches of distinct new candidates from the RL-step generator
(bench/rl_step/make_step.py: per task 5 correct, 2 wrong, 1 broken; a manifest of
expected statuses), sent at the same time:
  - GPU work (`--backend cuda`, native-format CUDA, the generator's GPU sizes): only
    the GPU node may take it (placement.work_kind);
  - CPU work (`--backend cpu`, native-format C++, CPU sizes): every node takes it,
    the GPU node without its GPU. While it runs, one CPU node is removed and
    another added.
Checked: every status equals the manifest's, every candidate is once in the driver's
store under its router's run, no GPU candidate was verified by a CPU node. Reported:
seconds and candidates/min per batch, per-node counts, the routers' overhead per
request. results.json under --out; exit 1 when a check fails.

Environment: KVAULT_BIN (the binary, default build/kvault), KVAULT_PYTHON (the
workers' Python), Ray importable. Without a GPU the GPU batch is skipped (a dry run).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench" / "rl_step"))
import make_step  # noqa: E402


def requests_of(step, manifest, tag):
    tasks = {t["name"]: (step / t["file"]).read_text() for t in manifest["tasks"]}
    return [{"task_source": tasks[c["task"]], "task_name": c["task"], "code": (step / c["file"]).read_text(),
             "language": c["language"], "idempotency_key": "%s-%s" % (tag, c["id"])}
            for c in manifest["candidates"]]


def run_batch(name, verifier, requests, manifest, out):
    start = time.monotonic()
    try:
        results = verifier.verify_batch(requests)
    except Exception as e:  # noqa: BLE001 - reported as the batch's failure
        out[name] = {"error": repr(e)}
        return
    seconds = time.monotonic() - start
    wrong = [{"id": c["id"], "expected": c["expected"], "got": r.get("status"), "message": r.get("message")}
             for c, r in zip(manifest["candidates"], results) if r.get("status") != c["expected"]]
    stats = verifier.stats()
    out[name] = {"candidates": len(requests), "seconds": round(seconds, 1),
                 "per_minute": round(len(requests) / seconds * 60, 1), "status_mismatches": wrong,
                 "kind": stats["kind"], "per_node_verified": {k[:8]: n["verified"] for k, n in stats["nodes"].items()},
                 "router_overhead_ms_per_request": stats["overhead_ms_per_request"],
                 "resubmitted": stats["resubmitted"], "nodes_lost": stats["nodes_lost"],
                 "mean_verification_s": round(sum(r.get("seconds") or 0 for r in results) / len(results), 2)}


def store_rows(db, run):
    binary = os.environ.get("KVAULT_BIN") or str(ROOT / "build" / "kvault")
    text = subprocess.run([binary, "export", "--db", db, "--run", run], capture_output=True, text=True,
                          check=True).stdout
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def churn(cluster, nodes, verifier, events, batch):
    """Once one of the CPU nodes has verified some of the CPU batch and holds more,
    removes it and adds another: its unfinished work must go elsewhere. On the main
    thread (Ray starts a node's processes only there), while `batch` runs."""
    start = time.monotonic()
    while batch.is_alive():
        time.sleep(0.2)
        state = verifier.stats()["nodes"]
        for node in nodes:
            mine = state.get(node.node_id)
            if mine and mine["verified"] >= 4 and mine["inflight_groups"] > 0:
                cluster.remove_node(node)
                events.append({"at_s": round(time.monotonic() - start, 1), "event": "CPU node removed",
                               "node": node.node_id[:8], "it_had_verified": mine["verified"]})
                added = cluster.add_node(num_cpus=4)
                events.append({"at_s": round(time.monotonic() - start, 1), "event": "CPU node added",
                               "node": added.node_id[:8]})
                return


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--gpu-tasks", type=int, default=16)
    parser.add_argument("--cpu-tasks", type=int, default=16)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--scratch", help="steps, stores, caches and node logs (default: a new temp folder)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="kvault-h200-cluster-"))
    scratch.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("KVAULT_CACHE_DIR", str(scratch / "cache"))   # cold: every build is new
    import torch
    has_gpu = torch.cuda.is_available()

    import ray
    from ray.cluster_utils import Cluster

    import kernelvault.cluster as kc
    from kernelvault.cluster.front import wait_for_nodes

    work = {}
    if has_gpu and args.gpu_tasks:
        m = make_step.make(scratch / "gpu", "native", args.seed, "cuda", "gpu", args.gpu_tasks)
        work["gpu"] = (m, requests_of(scratch / "gpu", m, "gpu%d" % args.seed), ["--backend", "cuda"])
    m = make_step.make(scratch / "cpu", "native", args.seed, "cpu", "cpu", args.cpu_tasks)
    work["cpu"] = (m, requests_of(scratch / "cpu", m, "cpu%d" % args.seed), ["--backend", "cpu", "--no-timing"])

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 4, "num_gpus": 1 if has_gpu else 0})
    cpu_nodes = [cluster.add_node(num_cpus=4) for _ in range(2)]
    db = str(scratch / "driver.db")
    results, events = {"environment": {}}, []
    try:
        ray.init(address=cluster.address, namespace="bench-h200-cluster")
        verifiers = {}
        started = time.monotonic()
        for name, (_, _, flags) in work.items():
            verifiers[name] = kc.connect(db=db, serve_args=flags + ["--run", "cluster-" + name],
                                         node_folder=str(scratch / ("nodes-" + name)))
        for name, verifier in verifiers.items():
            wait_for_nodes(verifier.router, 1 if name == "gpu" else 3)
        results["nodes_ready_s"] = round(time.monotonic() - started, 1)
        threads = {name: threading.Thread(target=run_batch, args=(name, verifiers[name], work[name][1],
                                                                   work[name][0], results)) for name in work}
        for t in threads.values():
            t.start()
        churn(cluster, cpu_nodes, verifiers["cpu"], events, threads["cpu"])
        for t in threads.values():
            t.join()
        results["events"] = events
        for name in work:
            rows = store_rows(db, "cluster-" + name)
            hashes = [r["candidate_hash"] for r in rows]
            results[name]["store_rows"] = len(rows)
            results[name]["store_distinct_candidates"] = len(set(hashes))
            results[name]["store_backends"] = sorted({r["backend"] for r in rows})
    finally:
        ray.shutdown()
        cluster.shutdown()
    results["environment"] = {
        "command": " ".join([sys.executable] + sys.argv), "cpus": os.cpu_count(), "machine": platform.platform(),
        "python": platform.python_version(), "ray": ray.__version__, "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0) if has_gpu else None, "seed": args.seed,
        "kvault": subprocess.run([os.environ.get("KVAULT_BIN") or str(ROOT / "build/kvault"), "--version"],
                                 capture_output=True, text=True).stdout.strip()}
    failures = []
    for name, (m, reqs, _) in work.items():
        r = results.get(name, {})
        if "error" in r:
            failures.append("%s batch: %s" % (name, r["error"]))
            continue
        if r["status_mismatches"]:
            failures.append("%s: %d status(es) differ from the manifest" % (name, len(r["status_mismatches"])))
        if r["store_rows"] != len(reqs) or r["store_distinct_candidates"] != len(reqs):
            failures.append("%s: %d rows / %d candidates in the store for %d requests"
                            % (name, r["store_rows"], r["store_distinct_candidates"], len(reqs)))
        if r["store_backends"] != [name if name == "cpu" else "cuda"]:
            failures.append("%s: backends in the store %s" % (name, r["store_backends"]))
        if name == "gpu" and len(r["per_node_verified"]) != 1:
            failures.append("gpu: work went to %d nodes, not only the GPU node" % len(r["per_node_verified"]))
    if "cpu" in results and events and not results["cpu"].get("nodes_lost"):
        failures.append("cpu: a node was removed but the router lost none")
    results["failures"] = failures
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({k: v for k, v in results.items() if k != "environment"}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
