"""The user message between two turns (BRIEF §2, "Feedback given to the policy"):
the server's `<execution_result>` block with the turn number and error type added,
the compiler output or mismatch details that follow it, then what to do next: fix
the kernel, or make it faster while keeping it correct.

The block itself is the engine's (`feedback` of the server's result, docs/serve.md);
this module only adds `turn` and `error_type` to its JSON, so the policy sees the
fields AMD's trainer shows: turn, compiled, correct, speedup, latency_ms,
baseline_latency_ms, feedback, error_type.
"""
import json
import re

BLOCK = re.compile(r"<execution_result>\n(.*?)\n</execution_result>", re.S)

FIX = ("Your kernel is not correct yet. Fix it, using the execution result above. "
       "Answer with the whole corrected source in exactly one ```{language} code block.")
IMPROVE = ("Your kernel is correct. Make it faster while keeping it correct. "
           "Answer with the whole source in exactly one ```{language} code block.")


def execution_block(result, turn):
    """The server's feedback with `turn` and `error_type` in its JSON block; a block
    made from the result's fields when the server sent none."""
    text = result.get("feedback") or ""
    match = BLOCK.search(text)
    fields = None
    if match:
        try:
            fields = json.loads(match.group(1))
        except ValueError:
            fields = None
    if not isinstance(fields, dict):
        fields = {"status": result.get("status"), "compiled": bool(result.get("compiled")),
                  "correct": bool(result.get("correct")), "speedup": result.get("speedup"),
                  "latency_ms": result.get("candidate_ms"), "baseline_latency_ms": result.get("reference_ms"),
                  "feedback": (result.get("message") or "")[:800]}
        rest = text if not match else text[match.end():]
    else:
        rest = text[match.end():]
    status = fields.get("status") or result.get("status")
    block = dict({"turn": turn}, **fields)
    block["error_type"] = None if fields.get("correct") else status
    return "<execution_result>\n%s\n</execution_result>%s" % (json.dumps(block), rest.rstrip())


def next_turn_message(result, turn, language):
    """The user message after turn `turn` (1-based) was verified with `result`."""
    instruction = (IMPROVE if result.get("correct") else FIX).format(language=language or "")
    return {"role": "user", "content": execution_block(result, turn).rstrip() + "\n\n" + instruction}
