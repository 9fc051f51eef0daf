"""The kernelvault adapters against the real `build/kvault serve` on the CPU backend:
a few example candidates of examples/ through verl's compute_score_batch and TRL's
reward callable. Skipped while the binary has no `serve` subcommand. Lean on
purpose: every CPU verification takes seconds."""
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from kernelvault import Client
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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`kvault serve --backend cpu --port 0` with scripts/env.sh's worker Python; its URL."""
    folder = tmp_path_factory.mktemp("serve")
    env = dict(os.environ)
    env.setdefault("KVAULT_CACHE_DIR", str(ROOT / "build" / "test-cache"))
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
        yield json.loads(line)["listening"]
    finally:
        process.terminate()
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
