"""SFT on a corpus SFT export (AMD's JSONL samples) with TRL's SFTTrainer.

    python recipes/sft.py --model /models/Qwen3-8B --data sft.jsonl --out runs/sft
    (multi-GPU: accelerate launch recipes/sft.py ...)

Defaults are an 8B model's (docs/training.md); the model is a local checkpoint.
"""
import argparse

from kvault_recipes.data import read_sft_jsonl
from kvault_recipes.trainers import local_model_path, sft_trainer


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local Hugging Face checkpoint folder")
    parser.add_argument("--data", required=True, help="SFT JSONL (kvault corpus export --format sft, or the fixture)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--max-length", type=int, default=16384)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--grad-accum", type=int, default=8)
    args = parser.parse_args(argv)
    model = local_model_path(args.model)          # before transformers: offline from here on
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(model)
    trainer = sft_trainer(model, tokenizer, read_sft_jsonl(args.data), args.out, learning_rate=args.lr,
                          epochs=args.epochs, max_length=args.max_length, batch_size=args.batch_size,
                          grad_accum=args.grad_accum)
    trainer.train()
    trainer.save_model(args.out)


if __name__ == "__main__":
    main()
