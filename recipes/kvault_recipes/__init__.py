"""kvault_recipes: the training recipe's reusable parts (docs/training.md).

    data       SFT JSONL samples and veRL RL rows -> prompts; the fixture made from examples/
    config     the paper's GRPO settings (and the HIP-RL single-turn variant)
    feedback   the user message between turns: the `<execution_result>` block and what to do next
    rollout    the multi-turn loop over any generator, rewards from `kvault serve`,
               per-turn reward components, trajectory returns, group-mean advantages
    chat       a conversation as token segments (model tokens vs feedback tokens)
    trl_multiturn  TRL GRPOTrainer's rollout_func and the trajectory-return reward
    verl_interaction  verl's multi-turn Interaction

Stdlib and the `kernelvault` package only at import time; torch, transformers, trl and
pyarrow are imported inside the functions that need them. The `kernelvault` package
is taken from the checkout (python/) when it is not installed.
"""
import os as _os
import sys as _sys

try:
    import kernelvault as _kernelvault  # noqa: F401
except ImportError:
    _sys.path.insert(0, _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "..", "..", "python"))
