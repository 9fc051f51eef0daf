"""The training recipe's reward wiring against the real `build/kvault serve` (CPU backend,
loopback; the server fixture of test_kernelvault_server.py): the multi-turn rollout
with a scripted policy, TRL's rollout_func and reward, and verl's interaction. Three
distinct candidates of examples/native/cpu (correct relu, wrong relu, no code); the
repeats are answered from the store, so the module takes seconds."""
import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "recipes"))

from kernelvault import Client  # noqa: E402
from kvault_recipes import rollout, trl_multiturn  # noqa: E402
from kvault_recipes.config import settings  # noqa: E402
from kvault_recipes.verl_interaction import KernelVaultInteraction, trajectory_score  # noqa: E402
from test_kernelvault_server import WHY_NO_SERVE, server  # noqa: E402,F401  (the fixture)
from test_recipe_feedback import CharTokenizer  # noqa: E402

pytestmark = pytest.mark.skipif(WHY_NO_SERVE is not None, reason=WHY_NO_SERVE or "")

ROOT = Path(__file__).resolve().parents[2]
TASK = (ROOT / "examples/suite/relu.py").read_text()
RECORD = {"kernel_name": "relu", "pytorch_module_code": TASK, "lang": "cpp"}
CORRECT = "```cpp\n" + (ROOT / "examples/native/cpu/relu.cpp").read_text() + "```"
WRONG = "```cpp\n" + (ROOT / "examples/native/cpu/relu.wrong-abs.cpp").read_text() + "```"
NO_CODE = "I would rather not."
RUN = "recipe-test"


def _script(answers_by_trajectory, trajectories):
    """A policy that answers trajectory i's turn k with answers_by_trajectory[i][k]."""
    def generate(conversations):
        out = []
        for c in conversations:
            i = next(k for k, t in enumerate(trajectories) if t.messages is c)
            out.append(answers_by_trajectory[i][sum(m["role"] == "assistant" for m in c)])
        return out
    return generate


def test_three_turns_rewards_returns_feedback_and_advantages(server):
    prompt = {"prompt": [{"role": "user", "content": "write relu"}], "ground_truth": RECORD}
    trajectories = rollout.expand_groups([prompt], 3)
    script = [[CORRECT, CORRECT, CORRECT], [WRONG, CORRECT, CORRECT], [NO_CODE, WRONG, CORRECT]]
    rollout.rollout(trajectories, _script(script, trajectories), Client(server), turns=3, discount=0.6,
                    reward="paper", run=RUN)
    statuses = [[turn["status"] for turn in t.turns] for t in trajectories]
    assert statuses == [["passed"] * 3, ["mismatch", "passed", "passed"], ["parse_error", "mismatch", "passed"]]
    for t in trajectories:
        r = t.rewards
        assert t.trajectory_return == pytest.approx(r[0] + 0.6 * r[1] + 0.36 * r[2], abs=1e-6)
        for turn in t.turns:
            assert turn["compiled"] == (turn["status"] != "parse_error")
            expected = {"passed": 1.4 + turn["speedup_term"], "mismatch": 0.4, "parse_error": 0.0}[turn["status"]]
            assert turn["reward"] == pytest.approx(expected, abs=1e-6)
    wrong_first = trajectories[1].messages[2]["content"]
    assert '"turn": 1' in wrong_first and '"error_type": "mismatch"' in wrong_first and "Fix it" in wrong_first
    assert "keeping it correct" in trajectories[0].messages[2]["content"]
    returns = [t.trajectory_return for t in trajectories]
    assert returns[0] > returns[1] > returns[2]
    advantages = rollout.group_advantages(returns, [t.group for t in trajectories])
    assert advantages[0] > 0 > advantages[2] and sum(advantages) == pytest.approx(0, abs=1e-9)
    summary = rollout.summarize(trajectories)
    assert summary["advantage_nonzero"] >= 2 and summary["groups_with_signal"] == 1
    assert summary["turns"][0]["statuses"] == {"passed": 1, "mismatch": 1, "parse_error": 1}


def test_trl_rollout_func_returns_masked_multi_turn_completions_and_the_return(server, monkeypatch):
    prompt = {"prompt": [{"role": "user", "content": "write relu"}], "ground_truth": RECORD}
    answers = {0: [CORRECT, CORRECT], 1: [WRONG, CORRECT]}
    made = []

    def fake_generate(model, tokenizer, conversations, **options):
        assert options["max_new_tokens"] == 99
        made.append(len(conversations))
        return [answers[i][sum(m["role"] == "assistant" for m in c)] for i, c in enumerate(conversations)]

    monkeypatch.setattr(trl_multiturn, "generate", fake_generate)

    class Trainer:
        processing_class = CharTokenizer()
        model = object()
        state = type("S", (), {"global_step": 0})()
        _metrics = {"train": __import__("collections").defaultdict(list)}

        class accelerator:
            @staticmethod
            def unwrap_model(m):
                return m

    s = settings("paper", turns=2, max_new_tokens=99)
    func = trl_multiturn.KernelVaultRollout([prompt], s, client=Client(server), run=RUN)
    out = func([prompt["prompt"], prompt["prompt"]], Trainer)
    assert set(out) >= {"prompt_ids", "completion_ids", "logprobs", "env_mask", "kvault_return"}
    assert [len(ids) for ids in out["completion_ids"]] == [len(m) for m in out["env_mask"]]
    for ids, mask in zip(out["completion_ids"], out["env_mask"]):
        text = "".join(chr(i) for i in ids)
        assert "<execution_result>" in text and 0 in mask and 1 in mask
        assert "<execution_result>" not in "".join(chr(i) for i, m in zip(ids, mask) if m)
    good, fixed = out["kvault_return"]
    assert fixed < good and out["kvault_rewards"][1][0] == pytest.approx(0.4)
    assert trl_multiturn.trajectory_return(None, None, kvault_return=out["kvault_return"]) == [good, fixed]
    assert made == [2, 2]
    assert Trainer._metrics["train"]["kvault/turn1/correct"] == [0.5]


def test_verl_interaction_turn_scores_add_up_to_the_return(server):
    interaction = KernelVaultInteraction({"name": "kvault", "kvault_url": server, "max_turns": 2, "run": RUN})

    async def trajectory():
        instance = await interaction.start_interaction("i1", ground_truth=RECORD)
        messages = [{"role": "user", "content": "write relu"}, {"role": "assistant", "content": WRONG}]
        done1, response1, score1, extra1 = await interaction.generate_response(instance, messages)
        messages += [{"role": "user", "content": response1}, {"role": "assistant", "content": CORRECT}]
        done2, response2, score2, extra2 = await interaction.generate_response(instance, messages)
        total = await interaction.calculate_score(instance)
        await interaction.finalize_interaction(instance)
        return (done1, response1, score1, extra1), (done2, response2, score2, extra2), total

    first, second, total = asyncio.run(trajectory())
    assert first[0] is False and '"error_type": "mismatch"' in first[1] and first[2] == pytest.approx(0.4)
    assert second[0] is True and second[1] == ""
    assert second[2] == pytest.approx(0.6 * second[3]["kvault"]["reward"], abs=1e-6)
    assert total == pytest.approx(first[2] + second[2], abs=1e-6)
    assert trajectory_score("kvault-examples", CORRECT, RECORD, {"turn_scores": [first[2], second[2]]}) \
        == pytest.approx(total)
    with pytest.raises(ValueError, match="turn_scores"):
        trajectory_score("kvault-examples", CORRECT, RECORD, {})
