"""kernelvault.cluster on a local Ray cluster of 3 nodes (ray.cluster_utils.Cluster),
CPU backend: 300 distinct candidates spread over it, one node removed mid-batch and
one added. Every result arrives once, every attempt is once in the driver's store,
and each candidate's status equals what a single-host `kvault eval` gives it.

The candidates are copies of 5 example native-format candidates (passed, mismatch,
compile_error) for two tiny tasks, each copy made distinct by a comment, so each is
its own verification and its own store row; `--no-timing` keeps a verification
under a second. Then an eval campaign over the same cluster, resumed as if its driver
had died, of the eval folder (where two files hold the same bytes: two samples): its
rows are eval's, one per file, and `kvault score` counts it as it counts the eval.
Skipped without ray or without `build/kvault import`.
"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KVAULT = ROOT / "build" / "kvault"
CANDIDATES = 300
AMD_RUN = "amd-front"   # the run of the requests sent by AMD's HIP protocol through the front


def _why_skip():
    try:
        import ray  # noqa: F401
    except ImportError:
        return "ray is not installed (pip install -r scripts/python-requirements.txt)"
    if not KVAULT.exists():
        return "build/kvault is not built"
    run = subprocess.run([str(KVAULT), "import", "--help"], capture_output=True, text=True)
    if run.returncode != 0:
        return "build/kvault has no `import` subcommand"
    return None


WHY_SKIP = _why_skip()
pytestmark = pytest.mark.skipif(WHY_SKIP is not None, reason=WHY_SKIP or "")

TINY_TASK = '''"""{doc}"""
import torch
import torch.nn as nn

KVAULT_META = {{"input_distributions": []}}


class Model(nn.Module):
    def forward(self, {args}):
        return {expr}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return []
'''
TASKS = {
    "tiny_relu": TINY_TASK.format(doc="ReLU of 256 values.", args="x", expr="torch.relu(x)",
                                  inputs="torch.randn(256)"),
    "tiny_add": TINY_TASK.format(doc="Sum of two vectors of 255 values.", args="a, b", expr="a + b",
                                 inputs="torch.randn(255), torch.randn(255)"),
}
# eval's file name (<task>[.<label>].cpp) -> the example it copies.
BASES = {
    "tiny_relu.cpp": "relu.cpp",
    "tiny_relu.again.cpp": "relu.cpp",          # the same bytes as tiny_relu.cpp: another sample
    "tiny_relu.wrong-abs.cpp": "relu.wrong-abs.cpp",
    "tiny_relu.bad-syntax.cpp": "relu.bad-syntax.cpp",
    "tiny_add.cpp": "vector_add.cpp",
    "tiny_add.wrong-skiplast.cpp": "vector_add.wrong-skiplast.cpp",
}


def _export(db):
    run = subprocess.run([str(KVAULT), "export", "--db", str(db)], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]


def _score(db, run, suite):
    """What `kvault score --json` counts of a run: per task and in all."""
    out = subprocess.run([str(KVAULT), "score", "--db", str(db), "--run", run, "--suite", str(suite), "--json",
                          "--resamples", "0"], capture_output=True, text=True, check=True).stdout
    score = json.loads(out)
    return {key: score[key] for key in ("per_task", "tasks", "scored", "solved", "unattempted", "excluded",
                                        "pass_at_k", "comp_at_k", "corr_at_k")}


def _single_host_statuses(folder, env):
    """{candidate file name: status} of `kvault eval` on one host (run "single")."""
    suite, candidates, db = folder / "suite", folder / "candidates", folder / "eval.db"
    suite.mkdir()
    candidates.mkdir()
    for name, source in TASKS.items():
        (suite / (name + ".py")).write_text(source)
    for name, example in BASES.items():
        (candidates / name).write_text((ROOT / "examples/native/cpu" / example).read_text())
    subprocess.run([str(KVAULT), "eval", "--suite", str(suite), "--candidates", str(candidates), "--db", str(db),
                    "--backend", "cpu", "--no-timing", "--policy", "custom_kernel", "--run", "single"],
                   env=env, capture_output=True, text=True, timeout=600)
    return {row["sample"]: row["status"] for row in _export(db)}


def _requests():
    """(requests, the base file name of each)."""
    names = sorted(BASES)
    requests, bases = [], []
    for i in range(CANDIDATES):
        name = names[i % len(names)]
        task = name.split(".")[0]
        code = (ROOT / "examples/native/cpu" / BASES[name]).read_text()
        requests.append({"task_source": TASKS[task], "task_name": task, "language": "cpp",
                         "code": code + "\n// copy %d of %s\n" % (i, name), "idempotency_key": "t-%d" % i})
        bases.append(name)
    return requests, bases


@pytest.fixture()
def worker_env(tmp_path):
    """The environment Ray's nodes and kvault inherit: this package on the path, the
    worker's Python, the test cache."""
    saved = dict(os.environ)
    os.environ["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")
    os.environ.setdefault("KVAULT_PYTHON", str(ROOT / ".venv/bin/python") if (ROOT / ".venv/bin/python").exists()
                          else sys.executable)
    os.environ.setdefault("KVAULT_CACHE_DIR", str(ROOT / "build" / "test-cache"))
    os.environ["RAY_DEDUP_LOGS"] = "0"
    yield dict(os.environ)
    os.environ.clear()
    os.environ.update(saved)


def test_300_candidates_over_3_nodes_one_removed_one_added(tmp_path, worker_env):
    import ray
    from ray.cluster_utils import Cluster

    import kernelvault.cluster as kc

    expected = _single_host_statuses(tmp_path, worker_env)
    assert sorted(expected) == sorted(BASES), expected
    assert set(expected.values()) == {"passed", "mismatch", "compile_error"}, expected

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    try:
        ray.init(address=cluster.address, namespace="test-cluster")
        db = tmp_path / "driver.db"
        verifier = kc.connect(db=str(db), serve_args=["--no-timing"], discover_s=0.5,
                              node_folder=str(tmp_path / "nodes"))
        requests, bases = _requests()
        answer = {}
        caller = threading.Thread(target=lambda: answer.setdefault("results", verifier.verify_batch(requests)))
        caller.start()

        # Mid-batch: remove a worker node that has work in flight, then add one.
        removed = _remove_a_busy_node(cluster, workers, verifier)
        added = cluster.add_node(num_cpus=1)
        caller.join(timeout=600)
        assert not caller.is_alive(), "the batch did not finish in 10 minutes: %s" % verifier.stats()
        stats = verifier.stats()
        _check_front(verifier.router, requests[:3], [expected[b] for b in bases[:3]])
        campaign_rows, campaign_done = _campaign_resumed(cluster, tmp_path)
    finally:
        ray.shutdown()
        cluster.shutdown()

    results = answer["results"]
    assert len(results) == CANDIDATES and all(isinstance(r, dict) for r in results)
    wrong = [(bases[i], r["status"], r.get("message", "")[:300]) for i, r in enumerate(results)
             if r["status"] != expected[bases[i]]]
    assert not wrong, "statuses unlike kvault eval's (%s): %s" % (expected, wrong[:10])

    # Every attempt once in the driver's store: one row per distinct candidate. AMD's
    # refused requests recorded nothing, on the node or here.
    rows = _export(db)
    assert not [row for row in rows if row["run"] == AMD_RUN], rows
    hashes = [row["candidate_hash"] for row in rows]
    assert len(rows) == CANDIDATES and len(set(hashes)) == CANDIDATES, (len(rows), len(set(hashes)))
    by_hash = {r["candidate_hash"]: r["status"] for r in results}
    assert all(by_hash[row["candidate_hash"]] == row["status"] for row in rows)

    assert stats["nodes_lost"] >= 1 and removed not in stats["nodes"], stats
    assert stats["nodes"].get(added.node_id, {}).get("verified", 0) > 0, \
        "the node added mid-batch verified nothing: %s" % stats

    # The campaign: each file once in its store, as its sample (the two of the same
    # bytes too), with eval's status, every unit done; scored as the eval is.
    assert len(campaign_rows) == len(BASES), [(r["sample"], r["candidate_source"][:60]) for r in campaign_rows]
    assert sorted((r["sample"], r["status"]) for r in campaign_rows) == sorted(expected.items())
    assert sorted(campaign_done) == sorted(BASES)
    single = _score(tmp_path / "eval.db", "single", tmp_path / "suite")
    assert sorted((t["task"], t["samples"]) for t in single["per_task"]) == [("tiny_add", 2), ("tiny_relu", 4)], single
    assert _score(tmp_path / "campaign.db", "camp", tmp_path / "suite") == single


def _check_front(router, requests, statuses):
    """The HTTP front over the router: health, metrics, /v1/verify, a batch polled and
    streamed, an unknown batch, through the kernelvault Client as a trainer calls it;
    AMD's /run_code_batch as its RL stack posts it."""
    from kernelvault import Client, RequestError, UnsupportedError
    from kernelvault.cluster import front
    urls = []
    threading.Thread(target=front.serve_front, args=(router, "127.0.0.1", 0), kwargs={"ready": urls.append},
                     daemon=True).start()
    deadline = time.monotonic() + 30
    while not urls and time.monotonic() < deadline:
        time.sleep(0.05)
    client = Client(urls[0], retries=1)
    assert client.health()["status"] == "ok" and client.health()["nodes"] >= 2
    assert client.verify(requests[0])["status"] == statuses[0]
    batch_id = client.submit_batch(requests)
    assert [r["status"] for r in client.verify_batch(requests)] == statuses
    lines = list(client.stream_batch(batch_id))
    assert lines[-1] == {"done": True} and sorted(line["index"] for line in lines[:-1]) == [0, 1, 2]
    assert "kvault_cluster_delivered_total" in client.metrics()
    with pytest.raises(RequestError):
        client.get_batch("no-such-batch")
    # Requests the nodes refuse, malformed or in a language they cannot run: 400 and 422
    # as kvault serve answers them, never retried as a lost node's.
    plain = {k: v for k, v in requests[0].items() if k != "idempotency_key"}
    with pytest.raises(RequestError) as refused:
        client.verify(dict(plain, language="fortran"))
    assert refused.value.status == 400 and "language" in str(refused.value), refused.value
    with pytest.raises(UnsupportedError) as refused:
        client.verify(dict(plain, code=(ROOT / "examples/hip/relu.hip").read_text(), language="hip"))
    assert refused.value.status == 422, refused.value
    # AMD's HIP protocol, passed whole to a node. HIP on the CPU backend is refused whole
    # (422 naming the request: never a silent reward of 0), a garbage hip_code too: it
    # is HIP all the same, and a parse_error's 0 would score the misconfiguration.
    hip = (ROOT / "examples/hip/relu.hip").read_text()

    def run_code_batch(items):
        post = urllib.request.Request(urls[0] + "/run_code_batch", data=json.dumps({"requests": items}).encode(),
                                      headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(post, timeout=300) as response:
            return json.loads(response.read())

    with pytest.raises(urllib.error.HTTPError) as refused:
        run_code_batch([{"kernel_name": "a", "hip_code": hip, "pytorch_module_code": TASKS["tiny_relu"],
                         "run": AMD_RUN}])
    assert refused.value.code == 422, refused.value
    assert json.loads(refused.value.read())["error"]["kind"] == "unsupported"
    with pytest.raises(urllib.error.HTTPError) as refused:
        run_code_batch([{"kernel_name": "b", "hip_code": "not a kernel", "pytorch_module_code": TASKS["tiny_relu"],
                         "run": AMD_RUN}])
    assert refused.value.code == 422, refused.value
    assert json.loads(refused.value.read())["error"]["kind"] == "unsupported"


def _campaign_resumed(cluster, folder):
    """`python -m kernelvault.cluster eval` over the same candidates as the single-host
    eval; then, as if its driver had died after recording 3 units but marking only
    2, the same command again. -> (the campaign store's rows, the units marked done)."""
    from kernelvault.cluster.__main__ import main
    db = folder / "campaign.db"
    argv = ["eval", "--address", cluster.address, "--suite", str(folder / "suite"), "--candidates",
            str(folder / "candidates"), "--db", str(db), "--backend", "cpu", "--no-timing", "--policy",
            "custom_kernel", "--run", "camp"]
    assert main(argv) == 0
    done = Path(str(db) + ".campaigns") / "camp" / "done.jsonl"
    lines = done.read_text().splitlines()
    assert len(lines) == len(BASES)
    done.write_text("\n".join(lines[:2]) + "\n")
    assert main(argv) == 0
    marks = [json.loads(line)["unit"] for line in done.read_text().splitlines()]
    assert len(marks) == len(BASES), marks
    return _export(db), marks


def _remove_a_busy_node(cluster, workers, verifier):
    """Waits until a worker node has verified some candidates and holds more in
    flight, removes it and returns its node id."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        nodes = verifier.stats()["nodes"]
        for worker in workers:
            state = nodes.get(worker.node_id)
            if state and state["verified"] >= 8 and state["inflight_groups"] > 0:
                cluster.remove_node(worker)
                return worker.node_id
        time.sleep(0.2)
    raise AssertionError("no worker node got work in 300 s: %s" % verifier.stats())
