"""The recipe end to end on a small model made here (recipes/h200_e2e.sh runs it):

  1. the fixture: SFT samples and RL rows from the example suite's verified kernels
  2. a byte-level BPE tokenizer trained on that text, with a chat template
  3. a Qwen3-architecture model from a config (few layers, small hidden size)
  4. SFT with TRL's SFTTrainer, in rounds, until greedy answers reproduce the
     verified kernels (exact match, and pass rate through `kvault serve`); besides
     the single-turn samples, two-turn ones teach the answer to a feedback turn (the
     real verdict on a verified or a failing candidate of examples/, then the
     verified kernel)
  5. multi-turn GRPO steps with TRL's GRPOTrainer, rewards from `kvault serve`
  6. <out>/summary.json: SFT rounds, per GRPO step the reward components per turn,
     returns, advantages, KL, time in generation / verification / the rest, and how
     far the parameters moved

Exit status 1 when a check fails: no reward came back, and unless --smoke (a model
too small and too briefly trained to write code): no advantage was non-zero, the
parameters did not move, SFT reproduced no verified kernel.
"""
import argparse
import dataclasses
import json
import math
import os
import sys
import time

from kvault_recipes.chat import generate
from kvault_recipes.config import settings
from kvault_recipes.data import (answer_text, candidates, feedback_turn_samples, read_rl_prompts, read_sft_jsonl,
                                 sft_prompt_and_answer, write_fixture)
from kvault_recipes.trainers import grpo_trainer, sft_trainer

from kernelvault import Client  # after kvault_recipes, which finds it in the checkout
from kernelvault.records import build_request

HERE = os.path.dirname(os.path.abspath(__file__))

SPECIAL = ["<|pad|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
CHAT_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


def log(event, **fields):
    print(json.dumps(dict({"event": event, "t": round(time.monotonic() - START, 1)}, **fields)), flush=True)


def build_tokenizer(samples, folder, vocab_size):
    """A byte-level BPE tokenizer trained on the samples' text, saved as a
    transformers tokenizer with the chat template above."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    texts = [m["content"] for s in samples for m in s["messages"]]
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>",
                                 additional_special_tokens=SPECIAL[2:])
    hf.chat_template = CHAT_TEMPLATE
    hf.padding_side = "left"
    hf.save_pretrained(folder)
    return hf


def build_model(tokenizer, layers, hidden, max_positions):
    """A Qwen3 causal LM from a config, randomly initialised."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM
    torch.manual_seed(0)
    heads = max(1, hidden // 64)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 3,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         head_dim=64, max_position_embeddings=max_positions, tie_word_embeddings=True,
                         bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    model = Qwen3ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def wait_for_server(client, limit_s):
    deadline = time.monotonic() + limit_s
    while True:
        try:
            health = client.health()
            if health.get("status") == "ok":
                return health
        except Exception as e:  # connection refused while it starts
            health = {"error": str(e)}
        if time.monotonic() > deadline:
            raise SystemExit("kvault serve not healthy after %d s: %s" % (limit_s, health))
        time.sleep(2)


def evaluate_sft(model, tokenizer, samples, tasks, client, max_new_tokens, run):
    """Greedy answers to the SFT prompts: exact reproductions, and how many pass.
    tasks: (kernel_name, lang) -> the ground truth of the RL row of that task."""
    conversations = [sft_prompt_and_answer(s)[0] for s in samples]
    references = [sft_prompt_and_answer(s)[1] for s in samples]
    started = time.monotonic()
    answers = generate(model, tokenizer, conversations, max_new_tokens=max_new_tokens, greedy=True)
    generated = time.monotonic()
    requests = [build_request(tasks[(s["metadata"]["kernel_name"], s["metadata"]["lang"])], a, {"run": run})
                for s, a in zip(samples, answers)]
    results = client.verify_batch(requests)
    return {"exact": sum(a.strip() == r.strip() for a, r in zip(answers, references)), "n": len(samples),
            "passed": sum(bool(r.get("correct")) for r in results),
            "statuses": [r.get("status") for r in results],
            "generate_s": round(generated - started, 2), "verify_s": round(time.monotonic() - generated, 2)}


def feedback_samples(args, samples, tasks, client):
    """Two-turn SFT samples from real verdicts: each verified kernel answered after its
    own feedback (make it faster), and after the feedback on each failing candidate of
    examples/ for the same task (fix it)."""
    first_turns = [(s, sft_prompt_and_answer(s)[1]) for s in samples]
    by_task = {}
    for s in samples:
        by_task.setdefault((s["metadata"]["kernel_name"], s["metadata"]["lang"]), []).append(s)
    for c in candidates(args.examples, args.backend, tuple(args.formats.split(","))):
        if c["status"] != "passed":
            for s in by_task.get((c["kernel_name"], c["lang"]), []):
                first_turns.append((s, answer_text(c["code"], c["lang"])))
    requests = [build_request(tasks[(s["metadata"]["kernel_name"], s["metadata"]["lang"])], first,
                              {"run": args.run + "-sft"}) for s, first in first_turns]
    return feedback_turn_samples(first_turns, client.verify_batch(requests))


def parameter_snapshot(model):
    return {n: p.detach().float().cpu().clone() for n, p in model.named_parameters()}


def parameter_delta(before, model):
    """(L2 norm of the change, L2 norm of the parameters before)."""
    change = total = 0.0
    for n, p in model.named_parameters():
        change += float((p.detach().float().cpu() - before[n]).pow(2).sum())
        total += float(before[n].pow(2).sum())
    return math.sqrt(change), math.sqrt(total)


def run_sft(args, model, tokenizer, samples, tasks, client, max_new_tokens, report):
    """SFT rounds on the samples (and their feedback turns) until the greedy answers to
    the samples' prompts are exact copies, or the step or time budget is spent."""
    rounds, steps = [], 0
    sft_started = time.monotonic()
    training = samples + (feedback_samples(args, samples, tasks, client) if args.feedback_turns else [])
    report["sft_samples"] = {"single_turn": len(samples), "with_feedback_turn": len(training) - len(samples)}
    log("sft_samples", **report["sft_samples"])
    while steps < args.sft_max_steps:
        trainer = sft_trainer(model, tokenizer, training, os.path.join(args.work, "sft"),
                              learning_rate=args.sft_lr, max_steps=args.sft_round_steps,
                              batch_size=len(training), grad_accum=1, max_length=args.max_positions,
                              bf16=args.device == "cuda", warmup=0.0, lr_schedule="constant",
                              logging_steps=max(1, args.sft_round_steps // 4), save=False,
                              use_cpu=args.device == "cpu")
        started = time.monotonic()
        result = trainer.train()
        steps += args.sft_round_steps
        model = trainer.model
        evaluation = evaluate_sft(model, tokenizer, samples, tasks, client, max_new_tokens, args.run + "-sft")
        rounds.append(dict(evaluation, steps=steps, loss=round(result.training_loss, 4),
                           train_s=round(time.monotonic() - started, 2)))
        log("sft_round", **rounds[-1])
        if evaluation["exact"] == len(samples) or time.monotonic() - sft_started > args.sft_budget_s:
            break
    report["sft"] = {"rounds": rounds, "seconds": round(time.monotonic() - sft_started, 1)}
    return model


def run_grpo(args, model, tokenizer, prompts, client, max_new_tokens, report):
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        """Each step's seconds; stops training after the step that passes the budget."""

        def __init__(self, budget_s):
            self.seconds, self._t, self.budget_s, self.started = [], None, budget_s, time.monotonic()

        def on_step_begin(self, a, state, control, **kw):
            self._t = time.monotonic()

        def on_step_end(self, a, state, control, **kw):
            self.seconds.append(time.monotonic() - self._t)
            if time.monotonic() - self.started > self.budget_s:
                control.should_training_stop = True

    chosen = prompts[:args.grpo_prompts]
    s = settings("hip-rl" if args.variant == "hip-rl" else "paper", learning_rate=args.grpo_lr,
                 turns=args.turns, max_new_tokens=max_new_tokens, max_sequence=args.max_positions,
                 prompts_per_step=len(chosen))
    steps_log = os.path.join(args.out, "grpo_steps.jsonl")
    if os.path.exists(steps_log):
        os.remove(steps_log)
    timer = StepTimer(args.grpo_budget_s)
    # The SFT checkpoint by path: TRL loads its reference model (KL) from the same path.
    trainer = grpo_trainer(model, tokenizer, chosen, os.path.join(args.work, "grpo"), s, client=client,
                           log_path=steps_log, prompts_per_device_step=len(chosen), max_steps=args.grpo_steps,
                           bf16=args.device == "cuda", save=False, callbacks=[timer], run=args.run + "-grpo",
                           use_cpu=args.device == "cpu")
    before = parameter_snapshot(trainer.model)
    started = time.monotonic()
    trainer.train()
    delta, norm = parameter_delta(before, trainer.model)
    with open(steps_log) as f:
        rollouts = [json.loads(line) for line in f if line.strip()]
    history = [h for h in trainer.state.log_history if "loss" in h or "kl" in h]
    steps = []
    for i, r in enumerate(rollouts):
        h = history[i] if i < len(history) else {}
        step_s = timer.seconds[i] if i < len(timer.seconds) else None
        steps.append({"step": i + 1, "turns": r["turns"], "return_mean": r["return_mean"],
                      "return_max": r["return_max"], "advantage_abs_mean": r["advantage_abs_mean"],
                      "advantage_nonzero": r["advantage_nonzero"], "groups_with_signal": r["groups_with_signal"],
                      "task_errors": r["task_errors"], "kl": h.get("kl"), "loss": h.get("loss"),
                      "trl_reward": h.get("reward"), "trl_reward_std": h.get("reward_std"),
                      "step_s": step_s, "generate_s": r["generate_s"], "verify_s": r["verify_s"],
                      "update_s": None if step_s is None else step_s - r["rollout_s"]})
        log("grpo_step", **steps[-1])
    report["grpo"] = {"settings": dataclasses.asdict(s), "steps": steps,
                      "seconds": round(time.monotonic() - started, 1),
                      "parameter_delta_l2": delta, "parameter_l2": norm,
                      "trl_log_history": trainer.state.log_history}
    return trainer.model


def checks(report, smoke):
    grpo = report.get("grpo", {})
    steps = grpo.get("steps", [])
    failed = []
    if not steps or not any(t["n"] for s in steps for t in s["turns"]):
        failed.append("no reward came back from kvault serve")
    if not any((s["advantage_nonzero"] or 0) > 0 for s in steps) and not smoke:
        failed.append("every advantage was zero")
    if not grpo.get("parameter_delta_l2") and not smoke:  # zero advantages (a smoke run's) move nothing
        failed.append("the parameters did not move")
    sft = report.get("sft", {}).get("rounds", [])
    if not smoke and (not sft or sft[-1]["passed"] == 0):
        failed.append("SFT reproduced no verified kernel")
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cuda", choices=("cuda", "cpu", "hip"), help="kvault serve's backend")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"), help="where the model trains")
    parser.add_argument("--kvault-url", default=os.environ.get("KVAULT_URL", "http://127.0.0.1:8470"))
    parser.add_argument("--examples", default=os.path.join(HERE, "..", "examples"))
    parser.add_argument("--formats", default="native")
    parser.add_argument("--out", required=True, help="summary.json and the step logs")
    parser.add_argument("--work", required=True, help="fixture, tokenizer, model, checkpoints")
    parser.add_argument("--tasks", type=int, default=None, help="only the first N samples and prompts")
    parser.add_argument("--only", default=None, help="only these tasks (comma-separated names)")
    parser.add_argument("--run", default="e2e", help="store run name prefix")
    parser.add_argument("--vocab", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--max-positions", type=int, default=8192)
    parser.add_argument("--sft-lr", type=float, default=2e-3)
    parser.add_argument("--sft-round-steps", type=int, default=150)
    parser.add_argument("--sft-max-steps", type=int, default=900)
    parser.add_argument("--sft-budget-s", type=float, default=180)
    parser.add_argument("--no-feedback-turns", dest="feedback_turns", action="store_false",
                        help="SFT on single-turn samples only (no answers to a feedback turn)")
    parser.add_argument("--variant", default="paper", choices=("paper", "hip-rl"))
    parser.add_argument("--grpo-steps", type=int, default=3)
    parser.add_argument("--grpo-prompts", type=int, default=8, help="prompts per GRPO step (x 8 samples)")
    parser.add_argument("--grpo-lr", type=float, default=1e-5)
    parser.add_argument("--grpo-budget-s", type=float, default=270, help="no GRPO step starts after this")
    parser.add_argument("--turns", type=int, default=None, help="default: the variant's (3; hip-rl 1)")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="default: 1.25 x the longest answer")
    parser.add_argument("--server-wait-s", type=float, default=240)
    parser.add_argument("--smoke", action="store_true", help="plumbing only: no SFT or advantage checks")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    report = {"args": vars(args)}

    paths = write_fixture(args.examples, os.path.join(args.work, "data"), args.backend, tuple(args.formats.split(",")))
    only = set(args.only.split(",")) if args.only else None
    samples = [s for s in read_sft_jsonl(paths["sft"]) if only is None or s["metadata"]["kernel_name"] in only]
    every_prompt = read_rl_prompts(paths["rl_jsonl"])
    tasks = {(p["kernel_name"], p["ground_truth"]["lang"]): p["ground_truth"] for p in every_prompt}
    prompts = [p for p in every_prompt if only is None or p["kernel_name"] in only][:args.tasks]
    samples = samples[:args.tasks]
    log("fixture", sft=len(samples), rl=len(prompts))
    tokenizer = build_tokenizer(samples, os.path.join(args.work, "tokenizer"), args.vocab)
    longest = max(len(tokenizer(sft_prompt_and_answer(s)[1])["input_ids"]) for s in samples)
    max_new_tokens = args.max_new_tokens or int(longest * 1.25) + 16
    model = build_model(tokenizer, args.layers, args.hidden, args.max_positions).to(args.device)
    report["model"] = {"parameters": sum(p.numel() for p in model.parameters()), "vocab": len(tokenizer),
                       "layers": args.layers, "hidden": args.hidden, "longest_answer_tokens": longest,
                       "max_new_tokens": max_new_tokens}
    log("model", **report["model"])

    client = Client(args.kvault_url, timeout_s=600, retries=3)
    report["server"] = wait_for_server(client, args.server_wait_s)
    log("server", **report["server"])
    try:
        model = run_sft(args, model, tokenizer, samples, tasks, client, max_new_tokens, report)
        checkpoint = os.path.join(args.work, "sft-model")
        model.save_pretrained(checkpoint)
        tokenizer.save_pretrained(checkpoint)
        run_grpo(args, checkpoint, tokenizer, prompts, client, max_new_tokens, report)
    finally:
        report["failed"] = checks(report, args.smoke)
        report["seconds"] = round(time.monotonic() - START, 1)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(report, f, indent=1, default=str)
    log("done", failed=report["failed"], seconds=report["seconds"])
    return 1 if report["failed"] else 0


START = time.monotonic()

if __name__ == "__main__":
    sys.exit(main())
