"""The paper's GRPO settings (BRIEF §2, "The paper's reward") and the HIP-RL variant.

One place for every number of the recipe; the trainer entry points and the configs
in recipes/ read them from here or repeat them with a pointer here.
"""
from dataclasses import dataclass, replace

# The paper's reward per turn is 0 (not compiled), 0.4 (compiled), 1.4 (compiled and
# correct), plus the speedup term min(0.375 log2(s)^2, 1.5) when correct and s >= 1.
# The server computes it; these two numbers only split a reward into its parts for the
# logs (rollout.turn_components).
PAPER_COMPILED = 0.4
PAPER_CORRECT = 1.4


@dataclass(frozen=True)
class GrpoSettings:
    reward: str = "paper"          # the server's reward kind: paper or hip-rl
    turns: int = 3                 # turns per trajectory; a correct kernel still gets the next turn
    discount: float = 0.6          # G = r1 + 0.6 r2 + 0.36 r3
    group_size: int = 8            # samples per prompt
    prompts_per_step: int = 64     # 64 prompts x 8 samples
    learning_rate: float = 1e-6
    kl_coef: float = 0.01          # beta
    clip_low: float = 0.2          # epsilon
    clip_high: float = 0.28        # epsilon_high (asymmetric clipping)
    scale_by_std: bool = False     # the paper subtracts the group mean and does not divide by the std
    max_sequence: int = 16384      # whole conversation, all turns
    max_new_tokens: int = 4096     # per turn
    temperature: float = 1.0


PAPER = GrpoSettings()
# AMD's HIP RL (veRL): any failure 0, correct 0.3 + clip(s, 0, 10) + 0.3 if s > 1.1;
# one turn, 16 samples per prompt.
HIP_RL = replace(PAPER, reward="hip-rl", turns=1, group_size=16)

VARIANTS = {"paper": PAPER, "hip-rl": HIP_RL}


def settings(variant="paper", **overrides):
    """The settings of a variant ("paper" or "hip-rl") with some fields replaced
    (None values are ignored)."""
    if variant not in VARIANTS:
        raise ValueError("unknown variant %r (paper, hip-rl)" % (variant,))
    return replace(VARIANTS[variant], **{k: v for k, v in overrides.items() if v is not None})
