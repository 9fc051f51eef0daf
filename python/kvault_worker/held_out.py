"""A held-out size for tasks written for one (docs/adversarial.md, "Hard-coded
shapes").

A KernelBench task draws its inputs at module-level sizes (`batch_size = 128`), and
every correctness run keeps them: a kernel whose grid, tiles or views assume those
sizes passes. For a task without `get_cases` whose module binds `batch_size` to an
int, the task file is executed once more with that constant replaced (held_out_batch)
and its `get_inputs` and `get_init_inputs` become one more correctness case,
`held_out`, last among the cases (the engine refers to cases by their index, so the
others keep theirs). Only the size changes: the reference is the task's own `Model`,
on the held-out case's inputs. The reference worker lists the case in `describe` only
once the reference has run on it and its inputs differ in shape from the default
case's (reference_runs), so a task that cannot run at another size keeps its other
cases and loses none. `KVAULT_META["held_out"] = False` leaves it out.
"""
import ast
import hashlib
from pathlib import Path

import torch

HELD_OUT = "held_out"
SIZE_NAME = "batch_size"

_runs = {}  # (task path, sha256 of its text) -> whether the reference ran the held-out case


def held_out_batch(size):
    """The batch of the held-out case: about half (odd for even sizes), never the same."""
    return size // 2 + 1 if size >= 4 else size + 1


def held_out_code(text, filename):
    """The task's text, compiled with its top-level `batch_size = <int>` replaced, or
    None when it binds no such constant (or binds it more than once)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    found = [node for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id == SIZE_NAME]
    if len(found) != 1:
        return None
    value = found[0].value
    if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value >= 1):
        return None
    value.value = held_out_batch(value.value)
    return compile(tree, filename, "exec", dont_inherit=True)


def reference_runs(task, case, device, make_inputs, build_reference, call_reference):
    """Whether `case` (the held-out one) is worth running: the task's reference runs on
    it, and its inputs differ in shape from the first case's. Answered once per task
    text by this worker; any failure is a no, never the task's error."""
    try:
        key = (task.path, hashlib.sha256(Path(task.path).read_bytes()).hexdigest())
    except OSError:
        return False
    if key not in _runs:
        _runs[key] = _try(task, case, device, make_inputs, build_reference, call_reference)
    return _runs[key]


def _try(task, case, device, make_inputs, build_reference, call_reference):
    try:
        held = make_inputs(case, 1, device)
        usual = make_inputs(task.cases[0], 1, device)
        shapes = [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in held]
        if shapes == [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in usual]:
            return False
        del usual
        call_reference(build_reference(task, case, 1, device), held, 1, device)
        return True
    except Exception:  # the task cannot run at another size: no held-out case
        return False
