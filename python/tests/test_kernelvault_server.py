"""The kernelvault adapters against the real `build/kvault serve` on the CPU backend:
a few example candidates of examples/ through verl's compute_score_batch and TRL's
reward callable. Skipped while the binary has no `serve` subcommand. Lean on
purpose: every CPU verification takes seconds."""
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kernelvault import Client, InfrastructureError, TaskError, UnsupportedError
from kernelvault.rewards import compute_score_batch
from kernelvault.trl import KernelVaultReward

ROOT = Path(__file__).resolve().parents[2]
KVAULT = ROOT / "build" / "kvault"


def _why_no_serve():
    if not KVAULT.exists():
        return "build/kvault is not built"
    try:
        run = subprocess.run([str(KVAULT), "serve", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "build/kvault serve --help did not run: %s" % e
    # An unknown subcommand may still print the top-level help with exit 0; serve's own
    # help names its --port flag.
    if run.returncode != 0 or "--port" not in run.stdout:
        return "build/kvault has no `serve` subcommand (`kvault serve --help` exit %d)" % run.returncode
    return None


WHY_NO_SERVE = _why_no_serve()
pytestmark = pytest.mark.skipif(WHY_NO_SERVE is not None, reason=WHY_NO_SERVE or "")

TASK = (ROOT / "examples/suite/relu.py").read_text()
CORRECT = "Here it is.\n```cpp\n" + (ROOT / "examples/native/cpu/relu.cpp").read_text() + "```\n"
WRONG = "```cpp\n" + (ROOT / "examples/native/cpu/relu.wrong-abs.cpp").read_text() + "```"
RECORD = {"kernel_name": "relu", "pytorch_module_code": TASK, "lang": "cpp"}
BROKEN_TASK = TASK.replace("def get_inputs():\n", "def get_inputs():\n    raise RuntimeError('broken task')\n")


def _serve(folder, cache_dir, home=None):
    """`kvault serve --backend cpu --port 0` with scripts/env.sh's worker Python on
    `cache_dir` (and `home` as its HOME, if given): yields its URL and process, stops
    it after."""
    env = dict(os.environ)
    env["KVAULT_CACHE_DIR"] = str(cache_dir)
    if home is not None:
        env["HOME"] = str(home)
    command = 'source "%s/scripts/env.sh" && exec "$0" "$@"' % ROOT
    process = subprocess.Popen(["bash", "-c", command, str(KVAULT), "serve", "--backend", "cpu", "--port", "0",
                                "--db", str(folder / "s.db")],
                               cwd=str(ROOT), env=env, stdout=subprocess.PIPE, stderr=open(folder / "serve.log", "w"),
                               text=True)
    first = {}
    reader = threading.Thread(target=lambda: first.setdefault("line", process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=180)
    try:
        line = first.get("line") or ""
        assert line, "kvault serve printed nothing in 180 s; its log: %s" % (folder / "serve.log").read_text()[-2000:]
        yield json.loads(line)["listening"], process
    finally:
        process.terminate()
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server on the tests' shared cache; its URL."""
    for url, _ in _serve(tmp_path_factory.mktemp("serve"),
                         os.environ.get("KVAULT_CACHE_DIR") or ROOT / "build" / "test-cache"):
        yield url


def test_health_and_metrics(server):
    client = Client(server)
    health = client.health()
    assert health["status"] == "ok" and health["backend"] == "cpu"
    assert "kvault_queue_depth" in client.metrics()


def test_verl_batch_scores_a_correct_a_wrong_and_an_unparsable_answer(server):
    answers = compute_score_batch(["relu"] * 3, [CORRECT, WRONG, "I would use a loop."], [RECORD] * 3,
                                  [{} for _ in range(3)], kvault_url=server)
    assert [a["status"] for a in answers] == ["passed", "mismatch", "parse_error"], answers
    assert answers[0]["score"] >= 1.4 and answers[0]["correct"] and answers[0]["reference_ms"] > 0
    assert answers[1]["score"] == pytest.approx(0.4) and answers[1]["compiled"]
    assert answers[2]["score"] == 0.0


def test_trl_reward_on_conversations_with_a_broken_task(server):
    reward = KernelVaultReward(server)
    rewards = reward(prompts=[[{"role": "user", "content": "relu"}]] * 2,
                     completions=[[{"role": "assistant", "content": CORRECT}]] * 2,
                     completion_ids=[[0], [0]], trainer_state=None,
                     ground_truth=[json.dumps(RECORD), dict(RECORD, pytorch_module_code=BROKEN_TASK)])
    assert rewards[0] is not None and rewards[0] >= 1.4
    assert rewards[1] is None  # task_error: not applicable, never 0


HIP = (ROOT / "examples/hip/relu.hip").read_text() if (ROOT / "examples/hip/relu.hip").exists() else None


@pytest.mark.skipif(HIP is None, reason="examples/hip/relu.hip is missing")
def test_an_answer_the_server_cannot_run_raises_and_never_scores_zero(server):
    client = Client(server, retries=0)
    with pytest.raises(UnsupportedError) as raised:
        client.verify({"task_source": TASK, "code": HIP, "language": "hip"})
    assert raised.value.status == 422 and raised.value.kind == "unsupported"
    assert "cpu" in raised.value.message and "hip" in raised.value.message
    # A batch with one such answer is refused whole; the adapters raise it too.
    with pytest.raises(UnsupportedError):
        client.verify_batch([{"task_source": TASK, "completion": CORRECT},
                             {"task_source": TASK, "completion": "```hip\n" + HIP + "```", "language": "hip"}])
    with pytest.raises(UnsupportedError):
        compute_score_batch(["relu"], ["```hip\n" + HIP + "```"], [dict(RECORD, lang="hip")], [{}],
                            kvault_url=server)


def test_a_candidate_the_engine_finds_it_cannot_run_has_no_reward(server):
    """A native candidate of a task whose reference returns a dict: beyond the native
    ABI, `unsupported`, as verify says. Nothing was judged: the server answers no
    reward (422 `unsupported`) and the adapters raise, never a compiled-but-wrong 0.4."""
    task = TASK.replace("return torch.relu(x)", "return {'y': torch.relu(x)}")
    assert task != TASK
    client = Client(server, retries=0)
    run = "native-dict-%d" % os.getpid()
    with pytest.raises(UnsupportedError) as raised:
        client.verify({"task_source": task, "completion": CORRECT, "language": "cpp", "run": run})
    assert raised.value.status == 422 and raised.value.result["reward"] is None, raised.value.result
    assert raised.value.result["status"] == "unsupported" and "native" in raised.value.message
    with pytest.raises(UnsupportedError):
        compute_score_batch(["relu"], [CORRECT], [dict(RECORD, pytorch_module_code=task, run=run)], [{}],
                            kvault_url=server)


KB_WRONG = (ROOT / "examples/kernelbench/relu.wrong-inline-cpp.py").read_text()
KB_CUDA = (ROOT / "examples/kernelbench/relu.llm-habits.py").read_text()


def test_one_foreign_answer_is_its_own_verdict_and_its_batch_is_scored(server):
    """An answer whose content is in a language the server cannot build, nothing
    declared, is its own compile_error: it never refuses (and so unscores) its group.
    A wrong answer that only names CUDA in a comment stays the mismatch it is."""
    run = "foreign-%d" % os.getpid()
    requests = [{"task_source": TASK, "completion": CORRECT, "run": run},
                {"task_source": TASK, "code": KB_WRONG + "\n# __global__\n", "language": "python", "run": run},
                {"task_source": TASK, "code": KB_CUDA, "run": run}]
    if HIP:  # an extension-format HIP source without `language`: HIP by its content
        requests.append({"task_source": TASK, "code": HIP, "run": run})
    answers = Client(server, retries=0).verify_batch(requests)
    assert [a["status"] for a in answers] == ["passed", "mismatch"] + ["compile_error"] * (len(requests) - 2), answers
    assert answers[0]["reward"]["value"] >= 1.4 and "foreign_language" not in answers[0]
    assert answers[1]["reward"]["value"] == pytest.approx(0.4) and "foreign_language" not in answers[1]
    assert answers[2]["reward"]["value"] == 0 and answers[2]["foreign_language"] == "cuda", answers[2]
    assert "CUDA" in answers[2]["message"] and "cpu" in answers[2]["message"]
    assert not HIP or (answers[3]["foreign_language"] == "hip" and answers[3]["reward"]["value"] == 0), answers[3:]
    assert "kvault_foreign_language_total{language=\"cuda\"}" in Client(server).metrics()


def test_identical_bytes_under_another_label_come_from_the_store(server):
    client = Client(server)
    run = "labels-%d" % os.getpid()
    first = client.verify({"task_source": TASK, "task_name": "scale-relu", "completion": CORRECT, "run": run})
    assert first["status"] == "passed" and not first["from_store"], first
    again = client.verify({"task_source": TASK, "task_name": "task-relu", "completion": CORRECT, "run": run})
    assert again["status"] == "passed" and again["from_store"], again
    # The same bytes saved as another language are another candidate.
    native_as_python = client.verify({"task_source": TASK, "code": first_code(CORRECT), "language": "python",
                                      "run": run})
    assert not native_as_python["from_store"] and native_as_python["status"] != "passed", native_as_python


def test_a_request_joining_an_earlier_one_is_marked_from_the_store(server):
    client = Client(server)
    run = "shared-%d" % os.getpid()
    results = client.verify_batch([{"task_source": TASK, "completion": WRONG, "run": run}] * 3)
    assert [r["status"] for r in results] == ["mismatch"] * 3, results
    assert sorted(r["from_store"] for r in results) == [False, True, True], results


def test_health_answers_beside_hundreds_of_slow_connections(server):
    host, port = re.match(r"http://([^:/]+):(\d+)", server).groups()
    slow = []
    try:
        # More than the 512 threads that once served every connection: each sends half a
        # request head and nothing more.
        for _ in range(600):
            s = socket.create_connection((host, int(port)), timeout=10)
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        time.sleep(0.5)
        start = time.monotonic()
        health = Client(server, retries=0).health()
        assert health["status"] == "ok"
        assert time.monotonic() - start < 2.0
    finally:
        for s in slow:
            s.close()


def first_code(completion):
    return completion.split("```cpp\n", 1)[1].rsplit("```", 1)[0]


# Task A's source, as a client may send it: on import it slows every other task's
# module calls in the process by 50 ms (its own stay fast) and rewrites every cached
# reference output it can reach (and the checksum in its entry), to make other
# clients' honest kernels slow or wrong.
HOSTILE_TASK = TASK + """
import glob as _glob, hashlib as _hashlib, json as _json, os as _os, time as _time
import torch.nn as _nn
_call = _nn.Module.__call__
Model._own = True  # each load of this file marks its own Model
def _slow_call(self, *args, **kwargs):
    if not getattr(type(self), "_own", False):
        _time.sleep(0.05)
    return _call(self, *args, **kwargs)
_nn.Module.__call__ = _slow_call
for _out in _glob.glob(%r + "/refs/*/*/output.kvt"):
    try:
        _size = _os.path.getsize(_out)
        with open(_out, "r+b") as _f:
            _f.seek(max(0, _size - 16))
            _f.write(b"\\x7f" * min(16, _size))
        _dir = _os.path.dirname(_out)
        _entry = _json.load(open(_os.path.join(_dir, "entry.json")))
        for _file in _entry["files"]:
            _path = _os.path.join(_dir, _file["name"])
            _file["sha256"] = _hashlib.sha256(open(_path, "rb").read()).hexdigest()
            _file["size"] = _os.path.getsize(_path)
            _file["mtime_ns"] = _os.stat(_path).st_mtime_ns
        open(_os.path.join(_dir, "entry.json"), "w").write(_json.dumps(_entry))
    except (OSError, ValueError, KeyError):
        pass
"""


# A client's task source that reads the server's keys, its store and the compile
# cache, and tells what it found in its task_error (the task's message reaches the
# client): before, it read ~/.aws/credentials and other clients' kernels in the store.
PRYING_TASK = TASK + """
import glob as _glob, os as _os
_found = []
for _what, _pattern in %r:
    for _path in sorted(_glob.glob(_pattern)):
        try:
            with open(_path, "rb") as _f:
                _found.append("%%s:%%s=%%d" %% (_what, _os.path.basename(_path), len(_f.read())))
        except OSError as _e:
            _found.append("%%s:%%s:%%s" %% (_what, _os.path.basename(_path), type(_e).__name__))
raise RuntimeError("PRIED " + " ".join(_found))
"""


def test_one_clients_task_code_cannot_slow_or_break_another_tasks_verdicts(tmp_path):
    cache = tmp_path / "cache"  # its own: the hostile task rewrites what it reaches
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key=planted\n")
    for url, _ in _serve(tmp_path, cache, home):
        client = Client(url)
        before = client.verify({"task_source": TASK, "completion": CORRECT, "run": "before"})
        assert before["status"] == "passed", before
        prying = PRYING_TASK % [("keys", str(home / ".aws" / "*")), ("store", str(tmp_path / "s.db*")),
                                ("builds", str(cache / "build" / "*"))]
        with pytest.raises(TaskError) as pried:
            client.verify({"task_source": prying, "task_name": "prying", "completion": CORRECT, "run": "prying"})
        told = str(pried.value)
        assert "PRIED " in told, told
        # Hidden: the credentials and the cache's other kinds (the compiled candidate
        # of the first request) are not there, the store files are empty (/dev/null in
        # their place).
        assert "keys:" not in told and "builds:" not in told, told
        assert "store:s.db=0" in told and not re.search(r"store:s\.db(-wal)?=[1-9]", told), told
        hostile = HOSTILE_TASK % str(cache)
        client.verify({"task_source": hostile, "task_name": "hostile", "completion": CORRECT, "run": "hostile"})
        # The attack ran: the first verification's cached outputs were rewritten.
        forged = [p for p in cache.glob("refs/*/*/output.kvt") if p.read_bytes().endswith(b"\x7f" * 16)]
        assert forged, "the hostile task rewrote no cached reference output"
        after = client.verify({"task_source": TASK, "completion": CORRECT, "run": "after"})
        assert after["status"] == "passed", after
        assert not after["from_store"]
        # A call of relu's reference takes a few ms on a loaded CPU; one that waits 50 ms
        # was timed in the hostile task's process.
        assert after["reference_ms"] < 25, (before["reference_ms"], after["reference_ms"])


# A candidate whose forward never returns, and which leaves a process of its own
# session behind.
HANGING = """import subprocess
import time

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        subprocess.Popen(["sleep", "120"], start_new_session=True)
        time.sleep(300)
        return torch.relu(x)
"""


def test_sigterm_ends_the_server_while_a_candidate_hangs(tmp_path):
    for url, process in _serve(tmp_path, os.environ.get("KVAULT_CACHE_DIR") or ROOT / "build" / "test-cache"):
        outcome = {}

        def ask():
            try:
                outcome["result"] = Client(url, retries=0).verify(
                    {"task_source": TASK, "code": HANGING, "policy": "any", "run": "hanging"})
            except InfrastructureError as e:
                outcome["error"] = e

        asking = threading.Thread(target=ask)
        asking.start()
        until = time.monotonic() + 120
        while 'kvault_lanes{state="busy"} 1' not in Client(url).metrics() and time.monotonic() < until:
            time.sleep(0.2)
        time.sleep(2)  # into the candidate's run
        start = time.monotonic()
        process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)  # the second ends the running verification at once
        assert process.wait(timeout=30) == 0
        assert time.monotonic() - start < 10
        asking.join(timeout=30)
        # The client was told to submit again; nothing was recorded against the candidate.
        assert "error" in outcome and outcome["error"].status == 503, outcome
        rows = sqlite3.connect(str(tmp_path / "s.db")).execute(
            "SELECT count(*) FROM attempts WHERE run = 'hanging'").fetchone()[0]
        assert rows == 0
