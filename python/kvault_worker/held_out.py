"""A held-out size for tasks written for one (docs/adversarial.md, "Hard-coded
shapes").

A KernelBench task draws its inputs at module-level sizes (`batch_size = 128`,
`dim = 16384`, `M = 1024`), and every correctness run keeps them: a kernel whose grid,
tiles or views assume those sizes passes. For a task without `get_cases`, the task file
is executed once more with its data sizes replaced and its `get_inputs` and
`get_init_inputs` become one more correctness case, `held_out`, last among the cases
(the engine refers to cases by their index, so the others keep theirs). The data sizes
are a top-level `batch_size = <int>` (held_out_batch) and every other top-level
`NAME = <int>` of at least MIN_DATA_SIZE that only `get_inputs` reads (held_out_size):
a constant the model also sees (through `get_init_inputs`, the class or any other
code) is the task's hyperparameter, which a kernel may assume. Only the sizes change:
the reference is the task's own `Model`, on the held-out case's inputs. The reference
worker lists the case in `describe` only once the reference has run on it and its
inputs differ in shape from the default case's (reference_runs), so a task that cannot
run at other sizes keeps its other cases and loses none. `KVAULT_META["held_out"] =
False` leaves it out.
"""
import ast
import hashlib
from pathlib import Path

import torch

HELD_OUT = "held_out"
SIZE_NAME = "batch_size"

_runs = {}  # (task path, sha256 of its text) -> whether the reference ran the held-out case


# Smaller data sizes stay: a dimension of 3 or 8 is usually structure (channels, a
# head size), and halving it says little about a kernel.
MIN_DATA_SIZE = 16
# held_out_size keeps a size's divisibility by powers of two up to this, so a kernel
# that loads four or eight elements at a time, as the task's own sizes allow, still fits.
KEPT_ALIGNMENT = 16


def held_out_batch(size):
    """The batch of the held-out case: about half (odd for even sizes), never the same."""
    return size // 2 + 1 if size >= 4 else size + 1


def held_out_size(size):
    """Another data size: about half, divisible by the same powers of two (up to
    KEPT_ALIGNMENT) as `size`. REQUIRES: size >= MIN_DATA_SIZE."""
    align = 1
    while align < KEPT_ALIGNMENT and size % (align * 2) == 0:
        align *= 2
    while align > 1 and size // 2 < align:
        align //= 2
    return (size // 2) // align * align


def held_out_code(text, filename):
    """The task's text, compiled with its data sizes replaced, or None when it has
    none (no `batch_size` bound once to an int, no constant only `get_inputs` reads)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    data_only = _read_only_by_get_inputs(tree)
    changed = False
    for node, names, value in _int_assignments(tree):
        if names == [SIZE_NAME]:
            new = held_out_batch(value)
        elif value >= MIN_DATA_SIZE and all(name in data_only for name in names):
            new = held_out_size(value)
        else:
            continue
        node.value = ast.copy_location(ast.Constant(new), node.value)
        changed = True
    return compile(tree, filename, "exec", dont_inherit=True) if changed else None


def _int_assignments(tree):
    """(node, names, value) for each top-level `a = b = <int>` whose names are bound
    nowhere else at the top level and whose value is a positive int (a literal or
    literals joined by + - * // **, like `16384 * 2`)."""
    counts = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            for name in ast.walk(target) if target is not None else ():
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets)):
            continue
        names = [t.id for t in node.targets]
        value = _int_value(node.value)
        if value is not None and value >= 1 and all(counts[n] == 1 for n in names):
            found.append((node, names, value))
    return found


_ARITHMETIC = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
               ast.FloorDiv: int.__floordiv__, ast.Pow: int.__pow__}


def _int_value(node):
    """The int an expression of int literals and _ARITHMETIC stands for, else None."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _int_value(node.left), _int_value(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Pow) and not 0 <= right <= 64):
            return None
        if isinstance(node.op, ast.FloorDiv) and right == 0:
            return None
        return _ARITHMETIC[type(node.op)](left, right)
    return None


def _read_only_by_get_inputs(tree):
    """The names `get_inputs` reads that no other top-level code reads."""
    inside, elsewhere = set(), set()
    for node in tree.body:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if isinstance(node, ast.FunctionDef) and node.name == "get_inputs":
            inside |= names
        else:
            elsewhere |= names
    return inside - elsewhere


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
