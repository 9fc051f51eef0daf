"""The TRL trainers of the recipe, built from our data and settings (docs/training.md).

    sft_trainer(model, tokenizer, samples, output_dir, ...)      SFTTrainer on SFT samples
    grpo_trainer(model, tokenizer, prompts, settings, ...)       GRPOTrainer, multi-turn rewards

`model` is a loaded model or a local checkpoint folder (nothing is downloaded: a
path that is not a folder is refused). trl and datasets are imported here, inside
the functions, so the rest of kvault_recipes needs neither.
"""
import os

from .config import PAPER
from .data import sft_prompt_and_answer
from .trl_multiturn import KernelVaultRollout, trajectory_return


def local_model_path(path):
    """A checkpoint folder, or ValueError: the recipe never downloads a model (and
    tells the Hugging Face libraries so, unless the environment says otherwise)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not os.path.isdir(path) or not os.path.exists(os.path.join(path, "config.json")):
        raise ValueError("%s is not a local Hugging Face checkpoint (a folder with config.json); "
                         "the recipe does not download models" % path)
    return path


def sft_rows(samples):
    """SFT samples -> TRL's conversational prompt-completion rows: the loss is on the
    answer only."""
    rows = []
    for sample in samples:
        prompt, answer = sft_prompt_and_answer(sample)
        rows.append({"prompt": prompt, "completion": [{"role": "assistant", "content": answer}]})
    return rows


def sft_trainer(model, tokenizer, samples, output_dir, *, learning_rate=1e-5, max_steps=-1, epochs=3.0,
                batch_size=1, grad_accum=8, max_length=16384, bf16=True, warmup=0.03, lr_schedule="cosine",
                logging_steps=10, save=True, **extra):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer
    if isinstance(model, str):
        model = local_model_path(model)
    args = SFTConfig(output_dir=output_dir, learning_rate=learning_rate, max_steps=max_steps,
                     num_train_epochs=epochs, per_device_train_batch_size=batch_size,
                     gradient_accumulation_steps=grad_accum, max_length=max_length, bf16=bf16,
                     warmup_steps=warmup, lr_scheduler_type=lr_schedule, logging_steps=logging_steps,
                     completion_only_loss=True, report_to="none",
                     save_strategy="epoch" if save else "no", **extra)
    return SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(sft_rows(samples)),
                      processing_class=tokenizer)


def grpo_trainer(model, tokenizer, prompts, output_dir, settings=PAPER, *, client=None, log_path=None,
                 prompts_per_device_step=None, max_steps=-1, epochs=1.0, bf16=True, logging_steps=1, save=True,
                 callbacks=None, run=None, policy=None, **extra):
    """GRPOTrainer with the multi-turn rollout (settings.turns; 1 for HIP-RL) and the
    trajectory return as the only reward. A step takes settings.prompts_per_step
    prompts x settings.group_size samples (per device: prompts_per_device_step)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    if isinstance(model, str):
        model = local_model_path(model)
    per_device = prompts_per_device_step or settings.prompts_per_step
    args = GRPOConfig(
        output_dir=output_dir, learning_rate=settings.learning_rate, beta=settings.kl_coef,
        epsilon=settings.clip_low, epsilon_high=settings.clip_high, num_generations=settings.group_size,
        scale_rewards="group" if settings.scale_by_std else "none",
        per_device_train_batch_size=settings.group_size, gradient_accumulation_steps=per_device,
        max_completion_length=settings.max_sequence, temperature=settings.temperature,
        # A multi-turn completion ends after the last answer's end-of-turn text, not on an
        # EOS token: TRL would take every one for truncated and mask it out.
        mask_truncated_completions=False,
        max_steps=max_steps, num_train_epochs=epochs, bf16=bf16, logging_steps=logging_steps,
        report_to="none", save_strategy="epoch" if save else "no", **extra)
    rollout = KernelVaultRollout(prompts, settings, client=client, log_path=log_path, run=run, policy=policy)
    dataset = Dataset.from_list([{"prompt": p["prompt"]} for p in prompts])
    return GRPOTrainer(model=model, reward_funcs=[trajectory_return], args=args, train_dataset=dataset,
                       processing_class=tokenizer, rollout_func=rollout, callbacks=callbacks)
