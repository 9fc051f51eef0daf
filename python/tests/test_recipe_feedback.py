"""The training recipe's multi-turn parts without a server: the feedback message between
turns (recipes/kvault_recipes/feedback.py), a conversation as token segments with the
feedback masked out (chat.py), and the rollout loop's bookkeeping with a scripted
client (rollout.py): what each turn sends, when feedback is added, task errors, and the
group-mean advantage without std normalisation."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "recipes"))

from kvault_recipes import chat, feedback, rollout  # noqa: E402

SERVER_FEEDBACK = ('<execution_result>\n{"status":"mismatch","compiled":true,"correct":false,"speedup":null,'
                   '"latency_ms":null,"baseline_latency_ms":0.5,"feedback":"case odd: max abs error 3.1"}\n'
                   '</execution_result>\n\nPer case:\n{"case":"odd","status":"mismatch"}\n')


def _block(text):
    return json.loads(text.split("<execution_result>\n", 1)[1].split("\n</execution_result>", 1)[0])


def test_the_block_gets_the_turn_and_error_type_and_keeps_the_details():
    text = feedback.execution_block({"feedback": SERVER_FEEDBACK, "status": "mismatch"}, 2)
    block = _block(text)
    assert list(block)[0] == "turn" and block["turn"] == 2
    assert block["error_type"] == "mismatch" and block["compiled"] is True and block["correct"] is False
    assert block["baseline_latency_ms"] == 0.5 and block["feedback"] == "case odd: max abs error 3.1"
    assert text.endswith('Per case:\n{"case":"odd","status":"mismatch"}')


def test_a_result_without_feedback_gets_a_block_of_its_fields():
    result = {"status": "passed", "compiled": True, "correct": True, "speedup": 1.5, "candidate_ms": 1.0,
              "reference_ms": 1.5, "message": "ok"}
    block = _block(feedback.execution_block(result, 1))
    assert block == {"turn": 1, "status": "passed", "compiled": True, "correct": True, "speedup": 1.5,
                     "latency_ms": 1.0, "baseline_latency_ms": 1.5, "feedback": "ok", "error_type": None}


def test_next_turn_asks_to_fix_or_to_improve():
    wrong = feedback.next_turn_message({"feedback": SERVER_FEEDBACK, "correct": False}, 1, "hip")
    right = feedback.next_turn_message({"status": "passed", "correct": True, "compiled": True}, 1, "cuda")
    assert wrong["role"] == right["role"] == "user"
    assert "Fix it" in wrong["content"] and "```hip" in wrong["content"]
    assert "faster while keeping it correct" in right["content"] and "```cuda" in right["content"]
    assert wrong["content"].startswith("<execution_result>\n")


class CharTokenizer:
    """One token per character; a chat template like the e2e model's."""

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        text = "".join("<%s>%s|" % (m["role"], m["content"]) for m in messages)
        return text + ("<assistant>" if add_generation_prompt else "")

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}


def test_token_segments_mask_the_feedback_out_of_the_completion():
    messages = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "A1"},
                {"role": "user", "content": "fb"}, {"role": "assistant", "content": "A2"}]
    tok = CharTokenizer()
    prompt, completion, mask = chat.token_segments(tok, messages)
    assert "".join(map(chr, prompt)) == "<user>task|<assistant>"
    assert "".join(map(chr, completion)) == "A1|<user>fb|<assistant>A2|"
    model_text = "".join(chr(i) for i, m in zip(completion, mask) if m)
    assert model_text == "A1|A2|"
    assert "".join(map(chr, prompt + completion)) == tok.apply_chat_template(messages)
    assert chat.conversation_ids(tok, messages[:3]) == [ord(c) for c in tok.apply_chat_template(messages[:3], add_generation_prompt=True)]


def test_a_template_that_rewrites_earlier_turns_is_refused():
    class Rewriting(CharTokenizer):
        def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
            return str(len(messages)) + super().apply_chat_template(messages, tokenize, add_generation_prompt)
    with pytest.raises(ValueError, match="extension"):
        chat.pieces(Rewriting(), [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])


class ScriptedClient:
    """verify_batch answers from a script: answer text -> (status, reward value); the
    return is what the server would send for the previous_rewards it was given."""

    def __init__(self, outcomes):
        self.outcomes = outcomes
        self.requests = []

    def verify_batch(self, requests):
        self.requests.append(requests)
        results = []
        for r in requests:
            status, value = self.outcomes[r["completion"]]
            if status == "task_error":
                results.append({"status": "task_error", "reward": None,
                                "error": {"kind": "task", "message": "reference raised"}})
                continue
            previous = r.get("previous_rewards", [])
            ret = sum(x * r["discount"] ** i for i, x in enumerate(previous + [value]))
            results.append({"status": status, "compiled": status != "compile_error", "correct": status == "passed",
                            "reward": {"kind": "paper", "value": value, "return": ret if previous else None},
                            "feedback": SERVER_FEEDBACK})
        return results


def test_rollout_sends_earlier_rewards_adds_feedback_between_turns_and_drops_task_errors():
    task = {"pytorch_module_code": "class Model: ...", "kernel_name": "t", "lang": "cpp"}
    broken = dict(task, kernel_name="broken")
    prompts = [{"prompt": [{"role": "user", "content": "p0"}], "ground_truth": task},
               {"prompt": [{"role": "user", "content": "p1"}], "ground_truth": broken}]
    trajectories = rollout.expand_groups(prompts, 2)
    script = {0: ["good", "good"], 1: ["bad", "good"], 2: ["task", "task"], 3: ["task", "task"]}
    calls = []

    def generate(conversations):
        calls.append([len(c) for c in conversations])
        answers = []
        for c in conversations:
            i = next(k for k, t in enumerate(trajectories) if t.messages is c)
            answers.append(script[i][(len(c) - 1) // 2])
        return answers

    client = ScriptedClient({"good": ("passed", 2.0), "bad": ("mismatch", 0.4), "task": ("task_error", None)})
    timings = rollout.rollout(trajectories, generate, client, turns=2, discount=0.6, reward="paper")
    assert [t["turn"] for t in timings] == [1, 2] and [t["answers"] for t in timings] == [4, 2]
    assert calls == [[1, 1, 1, 1], [3, 3]]          # turn 2: prompt, answer, feedback; task errors dropped
    first, second = client.requests
    assert all("previous_rewards" not in r for r in first)
    assert [r["previous_rewards"] for r in second] == [[2.0], [0.4]]
    assert all(r["discount"] == 0.6 and r["reward"] == "paper" for r in first + second)
    good, fixed, t2, t3 = trajectories
    assert [m["role"] for m in good.messages] == ["user", "assistant", "user", "assistant"]  # no feedback after the last turn
    assert _block(good.messages[2]["content"])["turn"] == 1
    assert good.rewards == [2.0, 2.0] and good.trajectory_return == pytest.approx(3.2)
    assert fixed.rewards == [0.4, 2.0] and fixed.trajectory_return == pytest.approx(1.6)
    assert t2.task_error == "reference raised" and t2.trajectory_return is None
    assert good.turns[0]["speedup_term"] == pytest.approx(0.6) and fixed.turns[0]["speedup_term"] == 0.0
    summary = rollout.summarize(trajectories)
    assert summary["task_errors"] == 2 and summary["groups"] == 2 and summary["groups_with_signal"] == 1
    assert summary["turns"][0]["correct"] == 0.5 and summary["turns"][1]["correct"] == 1.0
    assert summary["advantage_nonzero"] == 2 and summary["advantage_abs_mean"] == pytest.approx(0.8)


def test_group_advantage_subtracts_the_mean_and_does_not_divide_by_the_std():
    returns = [3.0, 1.0, 1.0, 1.0, None, 0.5, 0.5]
    groups = [0, 0, 0, 0, 1, 1, 1]
    assert rollout.group_advantages(returns, groups) == [1.5, -0.5, -0.5, -0.5, None, 0.0, 0.0]
    with pytest.raises(ValueError):
        rollout.group_advantages([1.0], [0, 1])


def test_default_settings_are_the_papers_and_hip_rl_is_one_turn_of_sixteen():
    from kvault_recipes.config import settings
    paper = settings()
    assert (paper.reward, paper.turns, paper.discount, paper.group_size, paper.prompts_per_step) == \
        ("paper", 3, 0.6, 8, 64)
    assert (paper.learning_rate, paper.kl_coef, paper.clip_low, paper.clip_high, paper.scale_by_std) == \
        (1e-6, 0.01, 0.2, 0.28, False)
    hip = settings("hip-rl", learning_rate=None, turns=None)
    assert (hip.reward, hip.turns, hip.group_size, hip.learning_rate) == ("hip-rl", 1, 16, 1e-6)
    assert settings("paper", turns=1).turns == 1
    with pytest.raises(ValueError, match="unknown variant"):
        settings("ppo")
