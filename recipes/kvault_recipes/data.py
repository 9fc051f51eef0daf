"""The recipe's data: AMD's SFT samples and veRL RL rows (BRIEF §2, "Data formats"),
and a small fixture of both made from the example suite (examples/).

SFT sample, one JSON object a line:
    {"messages": [{"role": "user", "content": ...}, {"role": "assistant", "content": ...}],
     "metadata": {"kernel_name", "speedup", "pass_exe", "pass_perf", ...}}
veRL RL row (Parquet, or the same objects as JSON Lines):
    {"prompt": [{"role": "user", "content": ...}], "data_source", "ability",
     "reward_model": {"style": "rule", "ground_truth": {AMD's RL record}}, "extra_info": {...}}

Both readers fail on the first bad sample with its place (file, line or row) and
what is wrong with it; nothing is skipped silently.
"""
import json
from pathlib import Path

from kernelvault.records import has_task, parse_ground_truth

ROLES = ("system", "user", "assistant")


class DataError(ValueError):
    """A sample or row that the recipe cannot use; the message says where and why."""


# ---- SFT ---------------------------------------------------------------------------

def _check_messages(messages, where, need_answer):
    if not isinstance(messages, list) or not messages:
        raise DataError("%s: `messages` must be a non-empty list" % where)
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
            raise DataError("%s: message %d must be {\"role\": system|user|assistant, \"content\": text}" % (where, i))
    if need_answer and messages[-1]["role"] != "assistant":
        raise DataError("%s: the last message must be the assistant's answer" % where)
    if not any(m["role"] == "user" for m in messages):
        raise DataError("%s: no user message" % where)
    return messages


def read_sft_jsonl(path):
    """The SFT samples of a JSON Lines file, in order (blank lines skipped)."""
    samples = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = "%s:%d" % (path, number)
            try:
                sample = json.loads(line)
            except ValueError as e:
                raise DataError("%s: not JSON: %s" % (where, e)) from None
            if not isinstance(sample, dict):
                raise DataError("%s: a sample must be a JSON object" % where)
            _check_messages(sample.get("messages"), where, need_answer=True)
            if not isinstance(sample.get("metadata", {}), dict):
                raise DataError("%s: `metadata` must be an object" % where)
            samples.append(sample)
    if not samples:
        raise DataError("%s: no samples" % path)
    return samples


def sft_prompt_and_answer(sample):
    """(the conversation before the answer, the answer's text) of one SFT sample."""
    messages = sample["messages"]
    return messages[:-1], messages[-1]["content"]


# ---- RL rows -------------------------------------------------------------------------

def read_rl_rows(path):
    """veRL's RL rows from a Parquet file (pyarrow) or a JSON Lines file (.jsonl)."""
    path = str(path)
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            rows = []
            for number, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as e:
                        raise DataError("%s:%d: not JSON: %s" % (path, number, e)) from None
            return rows
    import pyarrow.parquet as pq
    return pq.read_table(path).to_pylist()


def rl_prompt(row, where="row"):
    """One RL row -> {"prompt": messages, "ground_truth": record, "kernel_name",
    "data_source", "extra_info"}: what the rollout loop and the trainers take."""
    if not isinstance(row, dict):
        raise DataError("%s: a row must be an object" % where)
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        prompt = [{"role": "user", "content": prompt}]
    prompt = [dict(m) for m in (prompt or [])] if isinstance(prompt, (list, tuple)) else prompt
    _check_messages(prompt, where, need_answer=False)
    reward_model = row.get("reward_model")
    if isinstance(reward_model, str):
        reward_model = parse_ground_truth(reward_model)
    source = reward_model if reward_model is not None else row.get("ground_truth")
    try:
        record = parse_ground_truth(source)
    except ValueError as e:
        raise DataError("%s: %s" % (where, e)) from None
    if not has_task(record):
        raise DataError("%s: reward_model.ground_truth has no pytorch_module_code" % where)
    extra = row.get("extra_info") if isinstance(row.get("extra_info"), dict) else {}
    return {"prompt": prompt, "ground_truth": record,
            "kernel_name": record.get("kernel_name") or extra.get("kernel_name") or "",
            "data_source": row.get("data_source") or "", "extra_info": extra}


def read_rl_prompts(path):
    return [rl_prompt(row, "%s: row %d" % (path, i)) for i, row in enumerate(read_rl_rows(path))]


# ---- the fixture from examples/ ------------------------------------------------------

LANGUAGE_OF_SUFFIX = {".cpp": "cpp", ".cu": "cuda", ".hip": "hip"}
# Candidate folders of examples/ by backend and format (examples/README.md).
FOLDERS = {
    ("cpu", "native"): ("native/cpu",), ("cpu", "extension"): ("cpu",),
    ("cuda", "native"): ("native/cuda", "native/hip"), ("cuda", "extension"): ("cuda", "hip"),
    ("hip", "native"): ("native/hip",), ("hip", "extension"): ("hip",),
}
FORMAT_WORDS = {"native": "KernelVault native format (a shared library exporting kvault_forward, "
                          "include <kvault/native.h>; no PyTorch)",
                "extension": "PyTorch C++ extension format (a translation unit binding `forward`)"}
DATA_SOURCE = "kvault-examples"


def task_prompt(task_name, task_source, language, fmt, backend):
    """The user message asking for a kernel (the fixture's prompt; a corpus export
    brings its own)."""
    return ("Write a %s kernel for the PyTorch reference below, in the %s, for the %s backend. "
            "Answer with exactly one ```%s code block.\n\nTask `%s`:\n```python\n%s```\n"
            % (language, FORMAT_WORDS[fmt], backend, language, task_name, task_source))


def answer_text(code, language):
    """The assistant's answer: the verified source in one fenced block."""
    return "```%s\n%s%s```" % (language, code, "" if code.endswith("\n") else "\n")


def candidates(examples_dir, backend="cpu", formats=("native",)):
    """Every candidate of examples/ that expected.json lists for `backend` in the given
    formats, with its task: dicts {kernel_name, lang, format, status, source (the path
    under examples/), code, task_source}."""
    examples = Path(examples_dir)
    expected = json.loads((examples / "expected.json").read_text())
    for fmt in formats:
        for folder in FOLDERS.get((backend, fmt), ()):
            for path in sorted((examples / folder).glob("*")):
                key = "%s/%s" % (folder, path.name)
                verdict = expected.get(key) or {}
                language = LANGUAGE_OF_SUFFIX.get(path.suffix)
                name = path.name.split(".")[0]
                task_file = examples / "suite" / (name + ".py")
                if backend not in verdict.get("backends", ()) or language is None or not task_file.exists():
                    continue
                yield {"kernel_name": name, "lang": language, "format": fmt, "status": verdict.get("status"),
                       "source": key, "code": path.read_text(), "task_source": task_file.read_text()}


def fixture(examples_dir, backend="cpu", formats=("native",)):
    """(SFT samples, RL rows) of every candidate of examples/ that expected.json says
    passes on `backend`, in the given formats: one SFT sample per candidate, one RL row
    per (task, language)."""
    sft, rl, seen = [], [], set()
    for c in candidates(examples_dir, backend, formats):
        if c["status"] != "passed":
            continue
        name, language, fmt = c["kernel_name"], c["lang"], c["format"]
        prompt = [{"role": "user", "content": task_prompt(name, c["task_source"], language, fmt, backend)}]
        sft.append({"messages": prompt + [{"role": "assistant", "content": answer_text(c["code"], language)}],
                    "metadata": {"kernel_name": name, "index": len(sft), "n_iter": 1, "pass_exe": True,
                                 "pass_perf": None, "speedup": None, "source": "examples/" + c["source"],
                                 "format": fmt, "lang": language}})
        if (name, language, fmt) in seen:
            continue
        seen.add((name, language, fmt))
        record = {"kernel_name": name, "pytorch_module_code": c["task_source"], "lang": language}
        rl.append({"prompt": prompt, "data_source": DATA_SOURCE, "ability": "kernel_optimization",
                   "reward_model": {"style": "rule", "ground_truth": record},
                   "extra_info": {"index": len(rl), "kernel_name": name, "format": fmt}})
    if not sft:
        raise DataError("no passing candidate in %s for backend %s, formats %s" % (examples_dir, backend, list(formats)))
    return sft, with_interaction_kwargs(rl)


def with_interaction_kwargs(rows):
    """RL rows with extra_info.interaction_kwargs = {"name": "kvault", "ground_truth":
    the row's record}: what verl's multi-turn rollout hands the interaction
    (verl_interaction.py). Rows that have them keep theirs."""
    out = []
    for i, row in enumerate(rows):
        record = rl_prompt(row, "row %d" % i)["ground_truth"]
        extra = dict(row.get("extra_info") or {})
        extra.setdefault("interaction_kwargs", {"name": "kvault", "ground_truth": record})
        out.append(dict(row, extra_info=extra))
    return out


def feedback_turn_samples(first_turns, results):
    """SFT samples that teach the answer to a feedback turn: for each (SFT sample, a first
    answer) and the server's result for that answer, the conversation [prompt, first
    answer, the feedback message (feedback.next_turn_message), the sample's verified
    answer]. The loss is on the last answer only, so a wrong first answer is shown, not
    taught."""
    from .feedback import next_turn_message
    out = []
    for (sample, first), result in zip(first_turns, results):
        prompt, answer = sft_prompt_and_answer(sample)
        language = sample.get("metadata", {}).get("lang", "")
        out.append({"messages": prompt + [{"role": "assistant", "content": first},
                                          next_turn_message(result, 1, language),
                                          {"role": "assistant", "content": answer}],
                    "metadata": dict(sample.get("metadata", {}), n_iter=2, first_status=result.get("status"))})
    return out


def write_fixture(examples_dir, out_dir, backend="cpu", formats=("native",)):
    """Writes sft.jsonl, rl.jsonl and (when pyarrow is there) rl.parquet; returns the paths."""
    sft, rl = fixture(examples_dir, backend, formats)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"sft": out / "sft.jsonl", "rl_jsonl": out / "rl.jsonl"}
    with open(paths["sft"], "w", encoding="utf-8") as f:
        for row in sft:
            f.write(json.dumps(row) + "\n")
    write_rl_rows(rl, paths["rl_jsonl"])
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return paths
    paths["rl_parquet"] = out / "rl.parquet"
    write_rl_rows(rl, paths["rl_parquet"])
    return paths


def write_rl_rows(rows, path):
    """RL rows to a .jsonl or (pyarrow) a .parquet file."""
    path = str(path)
    if path.endswith(".jsonl"):
        with open(path, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        return
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pylist(rows), path)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description="Writes the recipe's fixture (SFT JSONL, RL rows) from examples/, "
                                                 "or adds verl's interaction_kwargs to RL rows (--verl-rows).")
    parser.add_argument("--examples", default=str(Path(__file__).resolve().parents[2] / "examples"))
    parser.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "hip"))
    parser.add_argument("--formats", default="native", help="comma-separated: native, extension")
    parser.add_argument("--verl-rows", nargs=2, metavar=("IN", "OUT"),
                        help="RL rows (.parquet/.jsonl, e.g. kvault corpus export --format verl) -> the same rows "
                             "with extra_info.interaction_kwargs for verl's multi-turn rollout")
    parser.add_argument("--out", help="the fixture's folder")
    args = parser.parse_args(argv)
    if args.verl_rows:
        rows = with_interaction_kwargs(read_rl_rows(args.verl_rows[0]))
        write_rl_rows(rows, args.verl_rows[1])
        print(json.dumps({"rows": len(rows), "out": args.verl_rows[1]}))
        return
    if not args.out:
        parser.error("--out is required (or --verl-rows IN OUT)")
    paths = write_fixture(args.examples, args.out, args.backend, tuple(args.formats.split(",")))
    print(json.dumps({k: str(v) for k, v in paths.items()}))


if __name__ == "__main__":
    main()
