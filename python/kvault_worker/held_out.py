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

Two such cases: `held_out`, the sizes about halved (smaller_code), and after it
`held_out_larger`, each size grown past the task's (larger_code), so that a kernel right
up to the task's sizes and wrong above them (a loop to min(n, 64), a grid or a scratch
of the task's size) fails too. How far each grows is drawn from the engine's held-out
key (set_key, sent with `hello`: a secret of the engine's process) and the task's text:
a candidate, which sees the task file but not the key, cannot know the sizes it will
meet. The growth is bounded: the data sizes' product by about GROWTH, each size by at
least one step; the reference worker lists the case only where the default case's
inputs take at most MAX_GROWN_INPUT_BYTES and the larger case's at most
max(MAX_GROWN_RATIO x, + GROWN_SLACK_BYTES) of them (so that the engine's memory lease,
sized from describe's `input_bytes`, stays within what a timing of the task takes).
"""
import ast
import hashlib
from pathlib import Path

import torch

HELD_OUT = "held_out"
HELD_OUT_LARGER = "held_out_larger"
SIZE_NAME = "batch_size"

# (task path, sha256 of its text, case name, key) -> (listed, why not): whether the
# reference ran the held-out case (reference_runs).
_runs = {}
_key = ""  # the engine's held-out key (set_key); "" before any hello that sends one

# The larger case's sizes grow, together, by about this factor of the data's size (the
# product of every grown size's ratio), each by at least one step of its alignment.
GROWTH = 1.25
# The larger case is listed only while the default case's inputs take at most this
# many bytes (beyond it, the extra runs cost more than they tell) ...
MAX_GROWN_INPUT_BYTES = 1 << 30
# ... and its own take at most max(MAX_GROWN_RATIO x theirs, theirs + GROWN_SLACK_BYTES):
# a size that appears squared in a shape grows the data past GROWTH. The engine leases
# 6 bytes of device memory per input byte of a correctness case and 9 per input byte of
# a timed one (engine/timed_case.cc): 1.5 x 6 = 9, so the lease does not grow.
MAX_GROWN_RATIO = 1.5
GROWN_SLACK_BYTES = 1 << 20


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


def set_key(key):
    """The engine's held-out key (hello's `held_out_key`), which the larger case's
    sizes are drawn from."""
    global _key
    _key = key


def grown_step(size, batch):
    """The step a size grows by: 1 for the batch, else the power of two (up to
    KEPT_ALIGNMENT) that divides it, at most a quarter of it, so that a kernel loading
    four or eight elements at a time where the task's size allows it still fits."""
    if batch:
        return 1
    step = 1
    while step < KEPT_ALIGNMENT and size % (step * 2) == 0 and step * 2 <= max(1, size // 4):
        step *= 2
    return step


def grown_size(size, batch, share, draw):
    """A size above `size`, at most size x `share`: a multiple of its step (grown_step)
    by an odd factor, so never a multiple of twice the step (a batch grows to an odd
    size, 512 to 528 or 560, never 544); which one is `draw(count)`'s pick among them.
    Without such a value, the first of them all the same where it grows the size by at
    most a quarter, else size + step (a batch of 1 grows to 2)."""
    step = grown_step(size, batch)
    first = (size // step + 1) * step
    if (first // step) % 2 == 0:
        first += step
    top = int(size * share)
    if first > top:
        return first if first - size <= max(step, size // 4) else size + step
    return first + 2 * step * draw((top - first) // (2 * step) + 1)


def _drawer(text, name):
    """draw(count): a number in [0, count) from the key, the task's text and `name`."""
    def draw(count):
        h = hashlib.sha256()
        for part in (_key, hashlib.sha256(text).hexdigest(), name):
            h.update(part.encode() + b"\0")
        return int.from_bytes(h.digest()[:8], "big") % count
    return draw


def held_out_code(text, filename):
    """The task's text, compiled with its data sizes about halved, or None when it has
    none (no `batch_size` bound once to an int, no constant only `get_inputs` reads)."""
    return _sized_code(text, filename, lambda names, value, batch, share:
                       held_out_batch(value) if batch else held_out_size(value))


def larger_code(text, filename):
    """The task's text, compiled with the same sizes as held_out_code replaced by
    larger ones (grown_size, drawn from the key), or None when it has none."""
    return _sized_code(text, filename, lambda names, value, batch, share:
                       grown_size(value, batch, share, _drawer(text, "=".join(names))))


def _sized_code(text, filename, new_value):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    data_only = _read_only_by_get_inputs(tree)
    sizes = [(node, names, value) for node, names, value in _int_assignments(tree)
             if names == [SIZE_NAME]
             or (value >= MIN_DATA_SIZE and all(name in data_only for name in names))]
    if not sizes:
        return None
    # Each name is a factor of the data's size: together they grow by about GROWTH.
    share = GROWTH ** (1.0 / sum(len(names) for _, names, _ in sizes))
    for node, names, value in sizes:
        new = new_value(names, value, names == [SIZE_NAME], share)
        node.value = ast.copy_location(ast.Constant(new), node.value)
    return compile(tree, filename, "exec", dont_inherit=True)


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
    """(listed, why): whether `case` (a held-out one) is worth running: its inputs
    differ in shape from the first case's, are not too large (the larger case: see
    MAX_GROWN_INPUT_BYTES) and the task's reference runs on them; else why not, one
    line. Answered once per task text, case and key by this worker; any failure is a
    no, never the task's error."""
    try:
        key = (task.path, hashlib.sha256(Path(task.path).read_bytes()).hexdigest(), case.name, _key)
    except OSError as e:
        return False, "the task file cannot be read again (%s)" % e
    if key not in _runs:
        _runs[key] = _try(task, case, device, make_inputs, build_reference, call_reference)
    return _runs[key]


def _nbytes(inputs):
    return sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))


def _shapes(inputs):
    return [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs]


def _try(task, case, device, make_inputs, build_reference, call_reference):
    try:
        usual = make_inputs(task.cases[0], 1, device)
        usual_bytes, usual_shapes = _nbytes(usual), _shapes(usual)
        del usual
        if case.name == HELD_OUT_LARGER and usual_bytes > MAX_GROWN_INPUT_BYTES:
            return False, "the task's inputs take %d bytes, more than %d" % (usual_bytes, MAX_GROWN_INPUT_BYTES)
        held = make_inputs(case, 1, device)
        shapes = _shapes(held)
        if shapes == usual_shapes:
            return False, "its inputs have the task's own shapes %s" % (shapes,)
        bound = max(MAX_GROWN_RATIO * usual_bytes, usual_bytes + GROWN_SLACK_BYTES)
        if case.name == HELD_OUT_LARGER and _nbytes(held) > bound:
            return False, "its inputs %s take %d bytes, more than %d" % (shapes, _nbytes(held), bound)
        call_reference(build_reference(task, case, 1, device), held, 1, device)
        return True, "inputs %s" % (shapes,)
    except Exception as e:  # the task cannot run at these sizes: no held-out case
        return False, "the reference fails on its inputs: %s: %s" % (type(e).__name__, str(e)[:200])
