"""verl's multi-turn interaction for the paper's loop (recipes/verl/, docs/training.md).

verl's contract (verl/interactions/base.py, BaseInteraction): an instance per
trajectory is opened with start_interaction(instance_id, **interaction_kwargs) (the
row's extra_info.interaction_kwargs: here {"name": "kvault", "ground_truth": record}),
then after every answer generate_response(instance_id, messages) returns
(should_terminate_sequence, response_content, turn_score, extra), and
finalize_interaction(instance_id) closes it. The response content is the next user
message.

Each answer is verified by `kvault serve` with the earlier turns' rewards as
previous_rewards, so the server answers the discounted return so far. The turn
score handed to verl is this turn's share of the return (return now minus return
before: r_t * 0.6^(t-1)), so the scores of a trajectory add up to its return G; the
reward function `trajectory_score` adds them up. A task error raises
kernelvault.TaskError; an infrastructure failure raises InfrastructureError; neither
is scored.
"""
import uuid

from kernelvault.records import build_request
from kernelvault.shared import shared_client

from .config import PAPER
from .feedback import next_turn_message
from .rollout import turn_components

try:  # verl is the trainer's; the module imports without it (tests)
    from verl.interactions.base import BaseInteraction
except ImportError:  # pragma: no cover - depends on the environment
    class BaseInteraction:
        def __init__(self, config):
            self.config = config
            self.name = config.get("name", "interaction_agent")


class KernelVaultInteraction(BaseInteraction):
    """config (the interaction YAML's `config:`): kvault_url, reward (paper),
    discount (0.6), max_turns (3), run, policy."""

    def __init__(self, config):
        super().__init__(config)
        self.url = config.get("kvault_url")
        self.reward = config.get("reward", PAPER.reward)
        self.discount = float(config.get("discount", PAPER.discount))
        self.max_turns = int(config.get("max_turns", PAPER.turns))
        self.run, self.policy = config.get("run"), config.get("policy")
        self._instances = {}

    async def start_interaction(self, instance_id=None, ground_truth=None, **kwargs):
        if instance_id is None:
            instance_id = uuid.uuid4().hex
        if ground_truth is None:
            raise ValueError("KernelVaultInteraction: interaction_kwargs must hold the task's ground_truth")
        self._instances[instance_id] = {"ground_truth": ground_truth, "rewards": [], "returns": [], "turns": []}
        return instance_id

    async def generate_response(self, instance_id, messages, **kwargs):
        state = self._instances[instance_id]
        answer = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), "")
        turn = len(state["rewards"]) + 1
        overrides = {"reward": self.reward, "discount": self.discount, "run": self.run, "policy": self.policy}
        if state["rewards"]:
            overrides["previous_rewards"] = state["rewards"]
        request = build_request(state["ground_truth"], answer, overrides)
        result = await shared_client(self.url, asynchronous=True).verify(request)
        parts = turn_components(result, self.reward)
        before = state["returns"][-1] if state["returns"] else 0.0
        state["rewards"].append(parts["reward"])
        state["returns"].append(parts["return"])
        state["turns"].append(parts)
        done = turn >= self.max_turns
        record = state["ground_truth"] if isinstance(state["ground_truth"], dict) else {}
        language = record.get("lang") or record.get("language") or ""
        response = "" if done else next_turn_message(result, turn, language)["content"]
        return done, response, parts["return"] - before, {"kvault": parts}

    async def calculate_score(self, instance_id=None, **kwargs):
        """The trajectory's return so far."""
        returns = self._instances.get(instance_id, {}).get("returns")
        if not returns:
            raise ValueError("KernelVaultInteraction: no verified turn for %s" % instance_id)
        return returns[-1]

    async def finalize_interaction(self, instance_id=None, **kwargs):
        self._instances.pop(instance_id, None)


def trajectory_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's custom reward function for the multi-turn recipe: the sum of the
    interaction's turn scores (= the trajectory's return). verl's agent loop hands
    them over as `turn_scores` in extra_info; without them this raises (a missing
    reward is never scored 0)."""
    scores = (extra_info or {}).get("turn_scores") if hasattr(extra_info, "get") else None
    if scores is None or len(scores) == 0:
        raise ValueError("trajectory_score: extra_info has no turn_scores (is the rollout multi-turn with the "
                         "kvault interaction?)")
    return float(sum(float(s) for s in scores))
