"""GRPO with TRL's GRPOTrainer and rewards from `kvault serve`: the paper's three turns
with execution feedback between them (default), or the HIP-RL single turn.

    KVAULT_URL=http://verify-host:8470 python recipes/grpo.py \
        --model runs/sft --data rl.parquet --out runs/grpo [--variant hip-rl]
    (multi-GPU: accelerate launch recipes/grpo.py ...)

Defaults: config.PAPER (lr 1e-6, KL 0.01, clip 0.2/0.28, 64 prompts x 8, no std
normalisation). Per-step reward components go to <out>/kvault_steps.jsonl and to
TRL's logged metrics (kvault/turn<i>/...).
"""
import argparse
import os

from kvault_recipes.config import settings
from kvault_recipes.data import read_rl_prompts
from kvault_recipes.trainers import grpo_trainer, local_model_path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local Hugging Face checkpoint folder (the SFT model)")
    parser.add_argument("--data", required=True, help="veRL RL rows: .parquet or .jsonl")
    parser.add_argument("--out", required=True)
    parser.add_argument("--variant", default="paper", choices=("paper", "hip-rl"))
    parser.add_argument("--prompts-per-device", type=int, default=None,
                        help="prompts per device and step (default: the variant's 64, one device)")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--max-new-tokens", type=int, default=None)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--run", default=None, help="the store's run name for this training's verifications")
    args = parser.parse_args(argv)
    model = local_model_path(args.model)          # before transformers: offline from here on
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(model, padding_side="left")
    s = settings(args.variant, learning_rate=args.lr, turns=args.turns, max_new_tokens=args.max_new_tokens)
    os.makedirs(args.out, exist_ok=True)
    trainer = grpo_trainer(model, tokenizer, read_rl_prompts(args.data), args.out, s,
                           log_path=os.path.join(args.out, "kvault_steps.jsonl"),
                           prompts_per_device_step=args.prompts_per_device, epochs=args.epochs, run=args.run)
    trainer.train()
    trainer.save_model(args.out)


if __name__ == "__main__":
    main()
