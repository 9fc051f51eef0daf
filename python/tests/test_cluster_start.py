"""A node that cannot start its service is reported, never started again in a loop:
where a node finds `kvault` (kernelvault.cluster.paths), what a serve that exits at
start says, the router's bookkeeping of such a node (no Ray), and an eval campaign on
a local Ray whose node has no binary, which ends at once naming the node and the
reason. Then a one-node campaign that verifies two candidates with the package as
this Python imports it: scripts/test-installed.sh runs this file against a wheel
installed in a fresh venv, with KVAULT_BIN pointing at build/kvault.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

import kernelvault
from kernelvault.cluster import paths, placement
from kernelvault.cluster import node as node_module
from kernelvault.cluster.node import NodeNotReadyError, NodeService
from kernelvault.cluster.router import Router
from kernelvault.errors import InfrastructureError

ROOT = Path(__file__).resolve().parents[2]
PATHS_SOURCE = Path(paths.__file__).read_text()
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

WHY_NO_RAY = None if importlib.util.find_spec("ray") else "ray is not installed (pip install './python[cluster]')"
needs_ray = pytest.mark.skipif(WHY_NO_RAY is not None, reason=WHY_NO_RAY or "")


def _executable(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def _paths_module_at(path):
    """paths.py loaded from a copy at `path` (a fake tree or site-packages)."""
    path.parent.mkdir(parents=True)
    path.write_text(PATHS_SOURCE)
    spec = importlib.util.spec_from_file_location("kvault_paths_copy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- where a node finds kvault ---------------------------------------------------

def test_kvault_is_kvault_bin_then_the_trees_build_then_path(tmp_path, monkeypatch):
    given, built, on_path = (_executable(tmp_path / "given/kvault"), _executable(tmp_path / "tree/build/kvault"),
                             _executable(tmp_path / "bin/kvault"))
    monkeypatch.setattr(paths, "SOURCE_ROOT", tmp_path / "tree")
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.setenv("KVAULT_BIN", str(given))
    assert paths.kvault_binary() == str(given)
    monkeypatch.delenv("KVAULT_BIN")
    assert paths.kvault_binary() == str(built)
    built.unlink()                                           # a tree not built
    assert paths.kvault_binary() == str(on_path)
    monkeypatch.setattr(paths, "SOURCE_ROOT", None)          # an installed package
    assert paths.kvault_binary() == str(on_path)


def test_no_kvault_says_what_was_tried_and_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "SOURCE_ROOT", tmp_path / "tree")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("KVAULT_BIN", raising=False)
    with pytest.raises(FileNotFoundError) as error:
        paths.kvault_binary()
    message = str(error.value)
    assert str(tmp_path / "tree/build/kvault") in message and "kvault on PATH" in message, message
    assert "set KVAULT_BIN" in message and "put it on PATH" in message, message
    monkeypatch.setenv("KVAULT_BIN", str(tmp_path / "missing/kvault"))
    with pytest.raises(FileNotFoundError, match="KVAULT_BIN=.*missing/kvault is not an executable file"):
        paths.kvault_binary()


def test_the_tree_is_where_the_package_sits_beside_its_project_file(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    (tree / "python").mkdir(parents=True)
    (tree / "python/pyproject.toml").write_text("")
    in_tree = _paths_module_at(tree / "python/kernelvault/cluster/paths.py")
    installed = _paths_module_at(tmp_path / "venv/lib/python3/site-packages/kernelvault/cluster/paths.py")
    assert in_tree.SOURCE_ROOT == tree.resolve() and installed.SOURCE_ROOT is None
    monkeypatch.delenv("KVAULT_PYTHON", raising=False)
    assert "KVAULT_PYTHON" not in in_tree.kvault_env()        # a tree without .venv
    _executable(tree / ".venv/bin/python")
    assert in_tree.kvault_env()["KVAULT_PYTHON"] == str(tree.resolve() / ".venv/bin/python")
    assert "KVAULT_PYTHON" not in installed.kvault_env()
    monkeypatch.setenv("KVAULT_PYTHON", "/opt/py/bin/python")
    assert in_tree.kvault_env()["KVAULT_PYTHON"] == "/opt/py/bin/python"


# Each gen layout: the suite's files, and its tasks as kvault names them, in its order
# (`_`-files are no tasks; in KernelBench's layout a task is named by its folder too,
# so the campaign's records score against the suite).
GEN_LAYOUTS = {
    "kernelbench": (("level1/19_ReLU", "level1/2_Matmul", "level2/5_Conv_ReLU", "level1/_helper"),
                    ["level1/2_Matmul", "level1/19_ReLU", "level2/5_Conv_ReLU"]),
    "plain": (("relu", "softmax_10", "softmax_2", "_helper"), ["relu", "softmax_2", "softmax_10"]),
}


@pytest.mark.parametrize("layout", sorted(GEN_LAYOUTS))
def test_a_gen_campaigns_units_are_kvault_gens_list(tmp_path, layout, capsys):
    # Each unit's `kvault gen` sees a suite of its one task: the driver picks the tasks
    # (--tasks passed through would match nothing on a node) and names them, both as
    # the engine does (`kvault gen --list`), not by a copy of its rules.
    from kernelvault.cluster.__main__ import _parser, main
    from kernelvault.cluster.campaign import gen_units
    kvault = _kvault_or_skip()
    files, expected = GEN_LAYOUTS[layout]
    suite = tmp_path / "suite"
    for name in files:
        (suite / (name + ".py")).parent.mkdir(parents=True, exist_ok=True)
        (suite / (name + ".py")).write_text(TASK)
    argv = ["gen", "--suite", str(suite), "--run", "g", "--db", str(tmp_path / "g.db")]

    def listed(*extra):
        out = subprocess.run([kvault, "gen", "--suite", str(suite), "--list", "--json", *extra],
                             capture_output=True, text=True, check=True).stdout
        return [{"unit": t["task"], "task_path": t["task_path"]} for t in json.loads(out)["tasks"]]

    units = gen_units(_parser().parse_args(argv))
    assert units == listed()
    assert units == [{"unit": name, "task_path": str(suite / (name + ".py"))} for name in expected]
    # --tasks, then --max-tasks, as kvault gen takes them (in the suite's order).
    for extra, names in ((["--tasks", "*_*"], [n for n in expected if "_" in n]),
                         (["--tasks", expected[-1] + "," + expected[0], "--max-tasks", "1"], expected[:1])):
        units = gen_units(_parser().parse_args(argv + extra))
        assert units == listed(*extra) and [u["unit"] for u in units] == names
    # Misuse as kvault gen says it (exit 2), before Ray is asked or a journal written.
    capsys.readouterr()
    with pytest.raises(SystemExit) as misuse:
        main(argv + ["--tasks", expected[0] + ",gelu"])
    assert misuse.value.code == 2
    assert "kvault gen: --tasks gelu matches no task" in capsys.readouterr().err
    assert not (tmp_path / "g.db.campaigns").exists()


# Each layout: the suite's tasks, the candidate files, and the units expected, (task,
# unit id), in kvault eval's order (by task, then path, numbers as numbers).
LAYOUTS = {
    "kernelbench": (("level1/19_ReLU", "level1/2_Matmul"),
                    ("level_1_problem_19_sample_10_kernel.py", "level_1_problem_19_sample_2_kernel.py",
                     "level_1_problem_7_sample_0_kernel.py", "level1/2_Matmul.cu", "19_ReLU.py", "notes.txt"),
                    [("level1/2_Matmul", "level1/2_Matmul.cu"),
                     ("level1/19_ReLU", "level_1_problem_19_sample_2_kernel.py"),
                     ("level1/19_ReLU", "level_1_problem_19_sample_10_kernel.py")]),
    "plain": (("relu", "softmax", "gelu"),
              ("relu.sample_10.py", "relu.sample_2.py", "relu.cpp", "softmax.cu", "other.py", ".relu.py"),
              [("relu", "relu.cpp"), ("relu", "relu.sample_2.py"), ("relu", "relu.sample_10.py"),
               ("softmax", "softmax.cu")]),
}


def _kvault_or_skip():
    try:
        return paths.kvault_binary()
    except FileNotFoundError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_eval_campaigns_units_are_kvault_evals_list(tmp_path, layout, capsys):
    # The campaign verifies what `kvault eval` of the folder would: its units are the
    # engine's match of candidates to tasks, not a copy of the rule.
    from kernelvault.cluster.__main__ import _parser, main
    from kernelvault.cluster.campaign import eval_request, eval_units
    kvault = _kvault_or_skip()
    tasks, files, expected = LAYOUTS[layout]
    suite, cands = tmp_path / "suite", tmp_path / "cands"
    for name in tasks:
        (suite / (name + ".py")).parent.mkdir(parents=True, exist_ok=True)
        (suite / (name + ".py")).write_text(TASK)
    for name in files:
        (cands / name).parent.mkdir(parents=True, exist_ok=True)
        (cands / name).write_text("class ModelNew: pass\n" if name.endswith(".py") else "x")
    argv = ["eval", "--suite", str(suite), "--candidates", str(cands), "--db", str(tmp_path / "c.db")]
    args = _parser().parse_args(argv)
    units = eval_units(args)
    listed = json.loads(subprocess.run([kvault, "eval", "--suite", str(suite), "--candidates", str(cands),
                                        "--list", "--json"], capture_output=True, text=True, check=True).stdout)
    fields = ("task", "task_path", "candidate", "sample", "language")
    assert [tuple(u[f] for f in fields) for u in units] == [tuple(u[f] for f in fields) for u in listed["units"]]
    assert [(u["task"], u["unit"]) for u in units] == expected
    assert all(u["candidate"] == str(cands / u["unit"]) and u["task_path"] == str(suite / (u["task"] + ".py"))
               for u in units), units
    assert len({u["key"] for u in units}) == len(units)
    assert [eval_request(u, args).get("language") for u in units] == [
        {".cu": "cuda", ".cpp": "cpp", ".py": "python"}[Path(u["unit"]).suffix] for u in units]
    assert "kvault eval: skipped" in capsys.readouterr().err    # kvault's word on the files left out
    # Misuse as kvault eval says it, before Ray is asked (exit 2): nothing matches, or
    # a wildcard that matches no task; --tasks keeps the tasks it names.
    (tmp_path / "empty").mkdir()
    for extra, said in (([], "kvault eval: no candidate in %s matches a task of" % (tmp_path / "empty")),
                        (["--tasks", "nosuch"], "nosuch")):
        with pytest.raises(SystemExit) as misuse:
            main(argv[:4] + [str(tmp_path / "empty")] + argv[5:] + extra)
        assert misuse.value.code == 2
        assert said in capsys.readouterr().err
    first = expected[0][0]
    assert [u["task"] for u in eval_units(_parser().parse_args(argv + ["--tasks", first]))] == \
        [t for t, _ in expected if t == first]


def test_a_driver_without_kvault_says_so_before_ray(tmp_path, monkeypatch):
    from kernelvault.cluster.__main__ import main
    _suite_and_candidates(tmp_path)
    monkeypatch.setenv("KVAULT_BIN", str(tmp_path / "missing/kvault"))
    with pytest.raises(SystemExit, match="kernelvault.cluster: KVAULT_BIN=.*missing/kvault is not an executable"):
        main(["eval", "--suite", str(tmp_path / "suite"), "--candidates", str(tmp_path / "candidates"),
              "--db", str(tmp_path / "c.db")])
    assert not (tmp_path / "c.db.campaigns").exists()


@needs_ray
def test_a_refused_connection_names_rays_token_authentication(tmp_path, monkeypatch):
    # Any local ray.init() leaves ~/.ray/auth_token; `ray start --head` then wants the
    # token, which ray.init(address=HOST:PORT) does not send without RAY_AUTH_MODE.
    import ray
    from kernelvault.cluster.__main__ import main

    def refused(**_):
        raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refused)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    argv = ["status", "--address", "10.0.0.1:6379"]
    with pytest.raises(SystemExit) as plain:
        main(argv)
    assert "10.0.0.1:6379" in str(plain.value) and "RAY_AUTH_MODE" not in str(plain.value), plain.value
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray/auth_token").write_text("token")
    with pytest.raises(SystemExit) as with_token:
        main(argv)
    assert "set RAY_AUTH_MODE=token" in str(with_token.value), with_token.value
    assert str(tmp_path / ".ray/auth_token") in str(with_token.value), with_token.value


@needs_ray
def test_ctrl_c_ends_the_front_and_a_campaign_without_a_traceback(tmp_path, monkeypatch, capsys):
    import signal
    import ray
    from kernelvault.cluster import __main__ as cli, campaign, front

    def interrupted(*_, **__):
        raise KeyboardInterrupt

    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(cli, "_router", lambda *_: None)
    monkeypatch.setattr(cli, "_wait_for_nodes", lambda _: None)
    monkeypatch.setattr(front, "serve_front", interrupted)
    monkeypatch.setattr(campaign, "run_eval", interrupted)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        assert cli.main(["serve", "--port", "0"]) == 0                       # as kvault serve exits
        assert "the front stopped" in capsys.readouterr().err
        assert signal.getsignal(signal.SIGTERM) is cli._interrupted            # SIGTERM ends it the same way
        (tmp_path / "suite").mkdir()
        (tmp_path / "cands").mkdir()
        (tmp_path / "suite" / "relu.py").write_text(TASK)
        (tmp_path / "cands" / "relu.cpp").write_text("x")
        assert cli.main(["eval", "--suite", str(tmp_path / "suite"), "--candidates", str(tmp_path / "cands"),
                         "--db", str(tmp_path / "c.db")]) == 130               # as kvault eval exits
        assert "run the same command again" in capsys.readouterr().err
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_serve_that_exits_at_start_says_why(tmp_path, monkeypatch):
    fake = tmp_path / "kvault"
    fake.write_text("#!/bin/sh\necho 'kvault: no CUDA device on this host' >&2\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KVAULT_BIN", str(fake))
    with pytest.raises(InfrastructureError, match=r"did not start \(exit 2\): kvault: no CUDA device on this host"):
        NodeService(["--backend", "cuda"], folder=str(tmp_path / "node"))


@needs_ray
def test_a_serve_whose_lanes_never_start_says_why(tmp_path, monkeypatch):
    try:
        paths.kvault_binary()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    monkeypatch.setenv("KVAULT_PYTHON", "/bin/false")     # every worker exits at once
    monkeypatch.setattr(node_module, "READY_TIMEOUT_S", 3)
    service = NodeService(["--backend", "cpu"], folder=str(tmp_path / "node"))
    try:
        with pytest.raises(NodeNotReadyError, match=r"became ready in 3 s: .*cannot start its workers"):
            service.info()
    finally:
        service.stop()


# ---- the router: a service that could not be made is not made again --------------

class _MadeAndFailed(Exception):
    """What ray.get raises for a service whose constructor raised (RayActorError)."""
    actor_init_failed = True


class _FakeRay:
    def __init__(self, nodes):
        self._nodes = nodes

    def nodes(self):
        return self._nodes

    def get(self, future):
        raise future


def _bare_router():
    router = Router.__new__(Router)            # no dispatcher thread, no Ray
    router.serve_args, router.resource, router.node_folder, router.kind = ["--backend", "cpu"], None, None, None
    router._nodes, router._starting, router._eligible, router.failed, router.lost_why = {}, {}, {}, {}, {}
    router._lock, router._pending, router._calls = threading.Lock(), {}, {}
    router.counters = {"delivered": 0}
    return router


def test_a_node_whose_service_cannot_be_made_is_reported_not_made_again(monkeypatch):
    node_id = "a1b2c3d4e5f6" + "0" * 44
    fake_ray = _FakeRay([{"NodeID": node_id, "Alive": True, "NodeManagerAddress": "10.0.0.7", "Resources": {"CPU": 4}}])
    answers = [Exception("InfrastructureError: no lane became ready"),
               _MadeAndFailed("kernelvault.errors.InfrastructureError: starting kvault serve: no kvault binary")]
    made = []

    class Handle:
        class info:  # noqa: N801 - the actor method's shape: handle.info.remote()
            @staticmethod
            def remote():
                return answers[len(made) - 1]

    def start_node_service(*args):
        made.append(args)
        return Handle

    monkeypatch.setattr(placement, "start_node_service", start_node_service)
    router = _bare_router()
    call_id = router.submit([{"task_source": "t", "code": "c"}])

    router._discover(fake_ray)
    router._node_ready(fake_ray, next(iter(router._starting)))     # not ready: asked again
    assert router.unservable() is None and not router.failed
    router._discover(fake_ray)
    router._node_ready(fake_ray, next(iter(router._starting)))     # its constructor raised: never again
    for _ in range(3):
        router._discover(fake_ray)
    assert len(made) == 2 and not router._starting

    why = router.unservable()
    assert why == ("no node of the cluster can verify: node a1b2c3d4e5f6 (10.0.0.7): its service did not "
                   "start: starting kvault serve: no kvault binary"), why
    router._fail_queued(why)
    result = router.poll(call_id)["results"][0]
    assert result["status"] == "infra_error" and result["error"]["kind"] == "infrastructure"
    assert result["message"] == why and result["reward"] is None


def test_a_node_whose_lanes_never_start_is_reported_not_asked_again(monkeypatch):
    node_id = "f6e5d4c3b2a1" + "0" * 44
    fake_ray = _FakeRay([{"NodeID": node_id, "Alive": True, "NodeManagerAddress": "10.0.0.8", "Resources": {"CPU": 4}}])
    made = []

    class Handle:
        class info:  # noqa: N801 - the actor method's shape: handle.info.remote()
            @staticmethod
            def remote():
                return NodeNotReadyError("no lane of its kvault serve became ready in 120 s: lane 0 (device 0) "
                                         "cannot start its workers: worker exited with status 1")

    monkeypatch.setattr(placement, "start_node_service", lambda *args: made.append(args) or Handle)
    router = _bare_router()
    router._discover(fake_ray)
    router._node_ready(fake_ray, next(iter(router._starting)))
    router._discover(fake_ray)
    assert len(made) == 1 and not router._starting
    assert "node f6e5d4c3b2a1 (10.0.0.8): its service did not start: no lane of its kvault serve became ready" \
        in router.unservable()


# ---- on a local Ray ------------------------------------------------------------

def _suite_and_candidates(folder):
    (folder / "suite").mkdir()
    (folder / "candidates").mkdir()
    (folder / "suite/tiny_relu.py").write_text(TASK)
    for name in ("relu.cpp", "relu.wrong-abs.cpp"):
        shutil.copy(ROOT / "examples/native/cpu" / name, folder / "candidates" / ("tiny_" + name))


def _campaign(folder, env, monkeypatch, timeout_s, driver_env=None):
    """`python -m kernelvault.cluster eval` of the two candidates on a one-node local
    Ray started with `env` -> (its exit: 0 or the SystemExit message, the node's id).
    `driver_env`: set once Ray's processes have started, for the driver alone. A
    campaign still running after timeout_s fails the test."""
    import ray

    from kernelvault.cluster.__main__ import main
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # Ray's workers import the package this test imports (the tree's, or an installed one).
    monkeypatch.setenv("PYTHONPATH", str(Path(kernelvault.__file__).resolve().parents[1]))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    argv = ["eval", "--suite", str(folder / "suite"), "--candidates", str(folder / "candidates"),
            "--db", str(folder / "campaign.db"), "--backend", "cpu", "--no-timing", "--policy", "custom_kernel",
            "--run", "one"]
    ray.init(address="local", num_cpus=1, namespace="test-cluster-start", include_dashboard=False, log_to_driver=False)
    for name, value in (driver_env or {}).items():
        monkeypatch.setenv(name, value)
    answer = {}

    def run():
        try:
            answer["exit"] = main(argv)
        except SystemExit as e:
            answer["exit"] = str(e)

    try:
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(timeout=timeout_s)
        assert not thread.is_alive(), "the campaign did not end in %d s" % timeout_s
        return answer["exit"], ray.get_runtime_context().get_node_id()
    finally:
        ray.shutdown()


@needs_ray
def test_a_campaign_whose_node_has_no_kvault_ends_naming_the_node(tmp_path, monkeypatch):
    _suite_and_candidates(tmp_path)
    kvault = _kvault_or_skip()  # the driver's, which lists the units; the node has none
    missing = tmp_path / "missing/kvault"
    message, node_id = _campaign(tmp_path, {"KVAULT_BIN": str(missing)}, monkeypatch, timeout_s=60,
                                 driver_env={"KVAULT_BIN": kvault})
    assert isinstance(message, str) and message.startswith("campaign one: no node of the cluster can verify: "), message
    assert "node %s" % node_id[:12] in message and "KVAULT_BIN=%s is not an executable file" % missing in message
    assert not (tmp_path / "campaign.db.campaigns/one/done.jsonl").exists()   # nothing marked: all sent again


@needs_ray
def test_a_one_node_campaign_verifies(tmp_path, monkeypatch):
    env = {"KVAULT_CACHE_DIR": os.environ.get("KVAULT_CACHE_DIR") or str(ROOT / "build/test-cache")}
    try:
        kvault = paths.kvault_binary()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    if os.environ.get("KVAULT_PYTHON") is None and (ROOT / ".venv/bin/python").exists():
        env["KVAULT_PYTHON"] = str(ROOT / ".venv/bin/python")
    env["KVAULT_BIN"] = kvault
    _suite_and_candidates(tmp_path)
    # A HIP file the CPU node cannot run: refused alone, the others verified all the same.
    shutil.copy(ROOT / "examples/hip/relu.hip", tmp_path / "candidates/tiny_relu.hip")
    code, _ = _campaign(tmp_path, env, monkeypatch, timeout_s=300)
    assert code == 0, code
    run = subprocess.run([kvault, "export", "--db", str(tmp_path / "campaign.db")], capture_output=True, text=True,
                         check=True)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert sorted(row["status"] for row in rows) == ["mismatch", "passed"], rows
    done = [json.loads(line) for line in (tmp_path / "campaign.db.campaigns/one/done.jsonl").read_text().splitlines()]
    assert {d["unit"]: d["status"] for d in done}["tiny_relu.hip"] == "unsupported", done
