"""Multi-turn GRPO in TRL's GRPOTrainer: a `rollout_func` that runs rollout.rollout
with the trainer's own model, and the reward function that hands TRL the return.

    rollout_func = KernelVaultRollout(prompts, settings, log_path="steps.jsonl")
    GRPOTrainer(model=..., reward_funcs=[trajectory_return], rollout_func=rollout_func,
                args=GRPOConfig(num_generations=8, scale_rewards="none", beta=0.01, ...), ...)

TRL's contract (trl/trainer/grpo_trainer.py, GRPOTrainer._generate, read in trl 1.16):
rollout_func(prompts, trainer) gets the process's prompts (one entry per completion
to make, the samples of a group next to each other) and returns a dict with
"prompt_ids", "completion_ids", "logprobs"; "env_mask" (1 on the model's tokens, 0
on tool or environment tokens) keeps the feedback out of the loss; every other key
is forwarded to the reward functions as a column. Here: "kvault_return" (the
trajectory's return, None for a task error) and "kvault_rewards" (per turn).

The prompt's ground truth is not among rollout_func's arguments: it is found by the
prompt's text, in the table built from the dataset's rows (data.rl_prompt).
With several processes each logs the groups of its own share of the batch; TRL
computes the advantages over whole groups after gathering the rewards.
"""
import json
import time

from .chat import generate, token_segments
from .rollout import Trajectory, rollout, summarize


def prompt_key(messages):
    """The lookup key of a prompt: its messages' roles and contents."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return json.dumps([[m["role"], m["content"]] for m in messages])


def trajectory_return(prompts, completions, kvault_return=None, **_):
    """The reward function of the multi-turn recipe: the return the rollout already
    got from `kvault serve` (None, "not applicable", for a task error)."""
    if kvault_return is None:
        raise ValueError("trajectory_return needs the kvault_return column: use it with KernelVaultRollout")
    return [None if r is None else float(r) for r in kvault_return]


class KernelVaultRollout:
    """TRL's rollout_func for the paper's multi-turn loop (or one turn: HIP-RL).

    prompts: data.rl_prompt dicts of the training set (their ground truths).
    settings: config.GrpoSettings (turns, discount, reward, max_new_tokens, temperature).
    client: a kernelvault Client (default: the shared one for $KVAULT_URL).
    log_path: a JSON Lines file getting one record per call (rollout.summarize plus
        the time spent generating and verifying), also put into TRL's logged metrics.
    """

    def __init__(self, prompts, settings, *, client=None, log_path=None, run=None, policy=None):
        self.table = {prompt_key(p["prompt"]): p["ground_truth"] for p in prompts}
        self.settings = settings
        self.client = client
        self.log_path = log_path
        self.run, self.policy = run, policy
        self.calls = 0

    def _client(self):
        if self.client is None:
            from kernelvault.shared import shared_client
            self.client = shared_client()
        return self.client

    def __call__(self, prompts, trainer):
        model = trainer.accelerator.unwrap_model(trainer.model)
        tokenizer = trainer.processing_class
        trajectories, group_of = [], {}
        for p in prompts:
            key = prompt_key(p)
            if key not in self.table:
                raise KeyError("a prompt of the batch is not in the rollout's table (built from another dataset?)")
            group = group_of.setdefault(key, len(group_of))
            messages = [{"role": "user", "content": p}] if isinstance(p, str) else p
            trajectories.append(Trajectory(messages, self.table[key], group))
        s = self.settings
        started = time.monotonic()
        timings = rollout(
            trajectories,
            lambda conversations: generate(model, tokenizer, conversations, max_new_tokens=s.max_new_tokens,
                                           temperature=s.temperature),
            self._client(), turns=s.turns, discount=s.discount, reward=s.reward, run=self.run, policy=self.policy)
        out = {"prompt_ids": [], "completion_ids": [], "env_mask": [], "logprobs": None,
               "kvault_return": [], "kvault_rewards": []}
        for t in trajectories:
            prompt_ids, completion_ids, mask = token_segments(tokenizer, t.messages)
            out["prompt_ids"].append(prompt_ids)
            out["completion_ids"].append(completion_ids)
            out["env_mask"].append(mask)
            out["kvault_return"].append(t.trajectory_return)
            out["kvault_rewards"].append(t.rewards)
        self.calls += 1
        record = dict(summarize(trajectories), call=self.calls, step=getattr(trainer.state, "global_step", None),
                      generate_s=sum(x["generate_s"] for x in timings), verify_s=sum(x["verify_s"] for x in timings),
                      rollout_s=time.monotonic() - started, per_turn_timing=timings)
        self._log(record, trainer)
        return out

    def _log(self, record, trainer):
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
        metrics = getattr(trainer, "_metrics", None)
        if not isinstance(metrics, dict) or "train" not in metrics:
            return
        train = metrics["train"]
        for turn in record["turns"]:
            for name in ("compiled", "correct", "reward", "speedup_term"):
                if turn[name] is not None:
                    train["kvault/turn%d/%s" % (turn["turn"], name)].append(turn[name])
        for name in ("generate_s", "verify_s", "advantage_abs_mean"):
            if record.get(name) is not None:
                train["kvault/" + name].append(record[name])
