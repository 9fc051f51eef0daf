"""What the trainer adapters share: a dataset's ground truth turned into a request of
`kvault serve` (docs/serve.md), and a result turned into a score and raw fields.

The ground truth is AMD's RL record (a dict, or its JSON text):

| ground-truth field                     | request field   | note |
|----------------------------------------|-----------------|------|
| `pytorch_module_code` / `task_source`  | `task_source`   | required |
| `kernel_name` / `task_name`            | `task_name`     | a label |
| `hip_code`                             | `baseline_code` | the baseline kernel of HIP-to-HIP (the near-copy check) |
| `lang` / `language`                    | `language`      | hip, cuda, cpp, python, triton; `hip` for a record with a `hip_code` and neither |
| `reward`                               | `reward`        | paper or hip-rl |
| `atol`, `rtol`                         | `atol`, `rtol`  | tolerances of this task |
| `policy`, `run`, `discount`, `deadline_s` | same | |

`pytorch_functional_code`, `backend` and `format` are accepted and not sent: the
reference is always the module, the server verifies on its own `--backend`, and the
server's answer parsing takes every answer format. A dict holding only
`{"ground_truth": {...}}` (verl's `reward_model` column) is unwrapped.

The answer is sent whole as `completion`: the server extracts the code (one
implementation, in the engine), never this package.
"""
import json
import math

_LANGUAGES = {"hip": "hip", "cuda": "cuda", "cu": "cuda", "cpp": "cpp", "c++": "cpp", "cxx": "cpp",
              "python": "python", "py": "python", "triton": "triton"}
_REWARDS = {"paper": "paper", "hip-rl": "hip-rl", "hip_rl": "hip-rl", "hiprl": "hip-rl"}
# Ground-truth fields that are passed through under the same name.
_PASSED = ("policy", "run", "deadline_s", "discount")
# Per-call settings an adapter may take from extra_info / metadata / keyword arguments.
OVERRIDES = ("reward", "policy", "run", "deadline_s", "discount", "previous_rewards", "idempotency_key", "language")


def parse_ground_truth(ground_truth):
    """A dict from a ground truth given as a dict, a JSON object text, or None ({})."""
    if ground_truth is None:
        return {}
    if isinstance(ground_truth, (bytes, bytearray)):
        ground_truth = ground_truth.decode("utf-8")
    if isinstance(ground_truth, str):
        text = ground_truth.strip()
        if not text:
            return {}
        try:
            ground_truth = json.loads(text)
        except ValueError as e:
            raise ValueError("kernelvault: the ground truth is a string but not JSON: %s" % e) from None
    if not hasattr(ground_truth, "get"):
        raise ValueError("kernelvault: the ground truth must be a dict or a JSON object, got %s"
                         % type(ground_truth).__name__)
    record = dict(ground_truth)
    inner = record.get("ground_truth")
    if not has_task(record) and inner is not None:
        return parse_ground_truth(inner)
    return record


def has_task(record):
    """Whether a parsed ground truth names a task (a reference to verify against)."""
    source = record.get("pytorch_module_code") or record.get("task_source")
    return isinstance(source, str) and bool(source.strip())


def _number(value, name):
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError("kernelvault: %s must be a number, got %r" % (name, value)) from None
    # JSON has no NaN or infinity: sent, they would reach the server as invalid JSON.
    if not math.isfinite(number):
        raise ValueError("kernelvault: %s must be a finite number, got %r" % (name, value))
    return number


def _normalized(name, value):
    """An override or ground-truth value in the form the server takes."""
    if name == "language":
        language = _LANGUAGES.get(str(value).strip().lower())
        if language is None:
            raise ValueError("kernelvault: unknown language %r (hip, cuda, cpp, python, triton)" % (value,))
        return language
    if name == "reward":
        reward = _REWARDS.get(str(value).strip().lower())
        if reward is None:
            raise ValueError("kernelvault: unknown reward kind %r (paper, hip-rl)" % (value,))
        return reward
    if name in ("discount", "deadline_s", "atol", "rtol"):
        return _number(value, name)
    if name == "previous_rewards":
        # A string is iterable too: "1,2" would be read as the characters 1 , 2.
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
            raise ValueError("kernelvault: previous_rewards must be a list of numbers, got %r" % (value,))
        return [_number(x, "previous_rewards") for x in value]
    return str(value)


def build_request(ground_truth, completion, overrides=None):
    """The request of one candidate: the task from `ground_truth` (see the table
    above), the answer as `completion`, then `overrides` (extra_info, metadata or
    keyword arguments; names in OVERRIDES, None values skipped) on top."""
    record = parse_ground_truth(ground_truth)
    if not has_task(record):
        raise ValueError("kernelvault: the ground truth has no pytorch_module_code (the task's PyTorch reference)")
    if not isinstance(completion, str):
        raise ValueError("kernelvault: the completion must be a string, got %s" % type(completion).__name__)
    request = {"task_source": record.get("pytorch_module_code") or record["task_source"], "completion": completion}
    name = record.get("kernel_name") or record.get("task_name")
    if name:
        request["task_name"] = str(name)
    hip_to_hip = isinstance(record.get("hip_code"), str) and bool(record["hip_code"].strip())
    if hip_to_hip:
        request["baseline_code"] = record["hip_code"]
    # A HIP-to-HIP record asks for HIP: declared, so a server that cannot run HIP
    # refuses it (UnsupportedError) instead of scoring every answer 0.
    language = record.get("language") or record.get("lang") or ("hip" if hip_to_hip else None)
    if language:
        request["language"] = _normalized("language", language)
    for field in ("reward", "atol", "rtol") + _PASSED:
        if record.get(field) is not None:
            request[field] = _normalized(field, record[field])
    for field, value in (overrides or {}).items():
        if field in OVERRIDES and value is not None:
            request[field] = _normalized(field, value)
    return request


def overrides_from(mapping, prefix="kvault_"):
    """Per-call settings from a trainer's side dict (verl's extra_info, slime's metadata):
    `previous_rewards`, `discount` under their own names, the rest (reward, policy,
    run, language, deadline_s, idempotency_key) as `kvault_<name>`."""
    if not hasattr(mapping, "get"):
        return {}
    out = {}
    for name in OVERRIDES:
        value = mapping.get(prefix + name)
        if value is None and name in ("previous_rewards", "discount"):
            value = mapping.get(name)
        if value is not None:
            out[name] = value
    return out


def score_of(result):
    """The trainer's scalar: the discounted return when the request gave
    previous_rewards, else this turn's reward of the kind asked for."""
    reward = result.get("reward")
    if not isinstance(reward, dict) or reward.get("value") is None:
        raise ValueError("kernelvault: the result has no reward: %s" % (result.get("message") or result.get("status")))
    if reward.get("return") is not None:
        return float(reward["return"])
    return float(reward["value"])


def _float_or_nan(value):
    try:
        return float(value) if value is not None else math.nan
    except (TypeError, ValueError):
        return math.nan


MESSAGE_CHARS = 2000


def raw_fields(result):
    """The fields a trainer logs beside the score, the same keys for every result
    (missing numbers are NaN, so per-key lists stay aligned and numeric)."""
    return {
        "compiled": bool(result.get("compiled")),
        "correct": bool(result.get("correct")),
        "speedup": _float_or_nan(result.get("speedup")),
        "status": str(result.get("status") or ""),
        "reference_ms": _float_or_nan(result.get("reference_ms")),
        "candidate_ms": _float_or_nan(result.get("candidate_ms")),
        "message": str(result.get("message") or "")[:MESSAGE_CHARS],
    }


def completion_text(completion):
    """The answer's text: a string as it is; a conversation (TRL's conversational
    format: a list of {"role", "content"} messages) -> its last assistant message's
    content, a list of content parts joined by their "text"."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    messages = list(completion or [])
    assistant = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    chosen = assistant[-1] if assistant else (messages[-1] if messages else None)
    if not isinstance(chosen, dict):
        raise ValueError("kernelvault: a completion must be a string or a list of messages")
    content = chosen.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
