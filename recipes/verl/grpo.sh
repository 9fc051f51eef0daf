#!/usr/bin/env bash
# GRPO with verl and rewards from `kvault serve` (docs/training.md, "verl").
#
#   MODEL=/models/qwen3-8b-sft DATA=rl.parquet KVAULT_URL=http://verify-host:8470 bash recipes/verl/grpo.sh
#   VARIANT=hip-rl ... bash recipes/verl/grpo.sh       # AMD's HIP-RL: one turn, 16 samples
#   ... bash recipes/verl/grpo.sh trainer.nnodes=4     # more hydra overrides at the end
#
# paper (default): three turns through verl's multi-turn rollout with the kvault
# interaction between them (the <execution_result> feedback as the next user message,
# turn scores that add up to the discounted return), the reward function adding them
# up; hip-rl: one turn scored by kernelvault.rewards.compute_score_async.
# The settings are config.PAPER's: lr 1e-6, KL 0.01 (as a loss, low-variance
# estimator), clip 0.2/0.28, 64 prompts x 8, no std normalisation.
# Written against verl 0.9's configuration names; not run in this repository's CI.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${MODEL:?a local checkpoint folder}" "${DATA:?veRL RL rows (.parquet)}"
variant=${VARIANT:-paper}
export PYTHONPATH=$root/recipes:$root/python${PYTHONPATH:+:$PYTHONPATH}
common=(
  algorithm.adv_estimator=grpo algorithm.norm_adv_by_std_in_grpo=False algorithm.use_kl_in_reward=False
  data.train_files="$DATA" data.train_batch_size=64 data.max_prompt_length=4096 data.max_response_length=12288
  data.return_raw_chat=True
  actor_rollout_ref.model.path="$MODEL"
  actor_rollout_ref.actor.optim.lr=1e-6
  actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.01
  actor_rollout_ref.actor.kl_loss_type=low_var_kl
  actor_rollout_ref.actor.clip_ratio_low=0.2 actor_rollout_ref.actor.clip_ratio_high=0.28
  actor_rollout_ref.actor.ppo_mini_batch_size=64
  actor_rollout_ref.rollout.mode=async
  trainer.n_gpus_per_node=${GPUS:-8} trainer.nnodes=${NODES:-1} trainer.total_epochs=${EPOCHS:-3}
  trainer.logger='[console]'
)
if [ "$variant" = paper ]; then
  python3 -m verl.trainer.main_ppo "${common[@]}" \
    actor_rollout_ref.rollout.n=8 \
    actor_rollout_ref.rollout.multi_turn.enable=True \
    actor_rollout_ref.rollout.multi_turn.max_assistant_turns=3 \
    actor_rollout_ref.rollout.multi_turn.interaction_config_path="$root/recipes/verl/interaction.yaml" \
    custom_reward_function.path=pkg://kvault_recipes.verl_interaction \
    custom_reward_function.name=trajectory_score \
    "$@"
else
  python3 -m verl.trainer.main_ppo "${common[@]}" \
    actor_rollout_ref.rollout.n=16 \
    custom_reward_function.path=pkg://kernelvault.rewards \
    custom_reward_function.name=compute_score_async \
    +custom_reward_function.reward_kwargs.reward=hip-rl \
    reward_model.reward_manager=naive \
    "$@"
fi
