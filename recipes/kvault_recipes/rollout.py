"""The multi-turn rollout loop, whatever generates the answers (BRIEF §2):

    for turn 1..T:  every trajectory's conversation -> the policy's answer
                    all answers of the turn -> one verify_batch of `kvault serve`
                    (previous_rewards sent, so the server answers the return so far)
                    the result's feedback block -> the next user message
A correct kernel still gets the next turn (to make it faster). The trajectory's
return is the server's `reward.return` of its last turn (G = r1 + 0.6 r2 + 0.36 r3);
the advantage is the return minus its group's mean, not divided by the group's
standard deviation.

Failures: an infrastructure failure raises out of `rollout` (kernelvault's client
retries first); a task whose reference cannot run (task_error) ends that trajectory
with no return, and it is left out of its group's mean and gets no advantage.
"""
import time
from collections import Counter

from kernelvault.client import problem_of
from kernelvault.records import build_request, score_of

from .config import PAPER_COMPILED, PAPER_CORRECT
from .feedback import next_turn_message


class Trajectory:
    """One sample of a group: its conversation, its turns' results, its return."""

    def __init__(self, prompt, ground_truth, group):
        self.messages = [dict(m) for m in prompt]
        self.ground_truth = ground_truth
        self.group = group
        self.turns = []            # one turn_components dict per verified turn
        self.task_error = None     # the server's message when the task could not run

    @property
    def language(self):
        return self.ground_truth.get("lang") or self.ground_truth.get("language") or ""

    @property
    def rewards(self):
        return [t["reward"] for t in self.turns]

    @property
    def trajectory_return(self):
        """The discounted return of the verified turns; None for a task error."""
        if self.task_error is not None or not self.turns:
            return None
        return self.turns[-1]["return"]


def expand_groups(prompts, group_size):
    """One Trajectory per sample: each prompt (data.rl_prompt dicts) group_size times,
    the samples of a group next to each other."""
    return [Trajectory(p["prompt"], p["ground_truth"], g) for g, p in enumerate(prompts) for _ in range(group_size)]


def turn_components(result, reward_kind):
    """A judged result -> what the logs show of one turn: compiled, correct, speedup,
    status, the reward and its parts (the paper's speedup term is the reward above
    the 1.4 of a correct kernel), and the return so far."""
    reward = result.get("reward") or {}
    value = float(reward.get("value"))
    correct = bool(result.get("correct"))
    speedup_term = value - PAPER_CORRECT if (reward_kind == "paper" and correct) else 0.0
    return {"status": str(result.get("status") or ""), "compiled": bool(result.get("compiled")),
            "correct": correct, "speedup": result.get("speedup"), "reward": value,
            "compile_term": PAPER_COMPILED if (reward_kind == "paper" and result.get("compiled")) else 0.0,
            "speedup_term": speedup_term, "return": score_of(result),
            "from_store": bool(result.get("from_store")), "seconds": result.get("seconds")}


def rollout(trajectories, generate, client, *, turns, discount, reward, run=None, policy=None, on_turn=None):
    """Runs `turns` turns over the trajectories (in place); returns per-turn timings
    [{"turn", "generate_s", "verify_s", "answers"}].

    generate(conversations) -> answers: a list of message lists in, one string each out.
    client: a kernelvault Client (verify_batch). on_turn(turn, trajectories): called
    after each verified turn (logging)."""
    timings = []
    for turn in range(1, turns + 1):
        active = [t for t in trajectories if t.task_error is None]
        if not active:
            break
        started = time.monotonic()
        answers = generate([t.messages for t in active])
        if len(answers) != len(active):
            raise RuntimeError("generate returned %d answers for %d conversations" % (len(answers), len(active)))
        generated = time.monotonic()
        requests = []
        for t, answer in zip(active, answers):
            overrides = {"reward": reward, "discount": discount, "run": run, "policy": policy}
            if t.rewards:
                overrides["previous_rewards"] = t.rewards
            requests.append(build_request(t.ground_truth, answer, overrides))
        results = client.verify_batch(requests)
        verified = time.monotonic()
        for t, answer, result in zip(active, answers, results):
            t.messages.append({"role": "assistant", "content": answer})
            if problem_of(result) == "task":
                error = result.get("error") if isinstance(result.get("error"), dict) else {}
                t.task_error = str(error.get("message") or result.get("message") or "task_error")
                continue
            t.turns.append(turn_components(result, reward))
            if turn < turns:
                t.messages.append(next_turn_message(result, turn, t.language))
        timings.append({"turn": turn, "generate_s": generated - started, "verify_s": verified - generated,
                        "answers": len(active)})
        if on_turn is not None:
            on_turn(turn, trajectories)
    return timings


def group_advantages(returns, groups):
    """Each return minus the mean of its group (`groups[i]` names the group of
    returns[i]), not divided by the std; None where the return is None (left out of
    the mean too)."""
    if len(returns) != len(groups):
        raise ValueError("%d returns, %d group ids" % (len(returns), len(groups)))
    members = {}
    for r, g in zip(returns, groups):
        if r is not None:
            members.setdefault(g, []).append(r)
    means = {g: sum(rs) / len(rs) for g, rs in members.items()}
    return [None if r is None else r - means[g] for r, g in zip(returns, groups)]


def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def summarize(trajectories):
    """One step's log record: per turn the share compiled and correct, mean reward and
    its parts, the statuses; the returns and the advantages."""
    per_turn = []
    for i in range(max((len(t.turns) for t in trajectories), default=0)):
        rows = [t.turns[i] for t in trajectories if len(t.turns) > i]
        per_turn.append({"turn": i + 1, "n": len(rows),
                         "compiled": _mean([float(r["compiled"]) for r in rows]),
                         "correct": _mean([float(r["correct"]) for r in rows]),
                         "reward": _mean([r["reward"] for r in rows]),
                         "compile_term": _mean([r["compile_term"] for r in rows]),
                         "speedup_term": _mean([r["speedup_term"] for r in rows]),
                         "from_store": _mean([float(r["from_store"]) for r in rows]),
                         "statuses": dict(Counter(r["status"] for r in rows))})
    returns = [t.trajectory_return for t in trajectories]
    groups = [t.group for t in trajectories]
    advantages = group_advantages(returns, groups)
    scored = [a for a in advantages if a is not None]
    signal = {g for g, a in zip(groups, advantages) if a is not None and abs(a) > 1e-9}
    return {"trajectories": len(trajectories), "task_errors": sum(t.task_error is not None for t in trajectories),
            "turns": per_turn, "return_mean": _mean(returns),
            "return_max": max((r for r in returns if r is not None), default=None),
            "advantage_abs_mean": _mean([abs(a) for a in scored]),
            "advantage_nonzero": sum(abs(a) > 1e-9 for a in scored),
            "groups": len(set(groups)), "groups_with_signal": len(signal)}
