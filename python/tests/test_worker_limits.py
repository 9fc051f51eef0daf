"""The engine sizes device memory leases with the worker's own memory bounds:
src/engine/worker_limits.h (the engine's copies) against the constants of
python/kvault_worker (the worker's). Both read as text, so no PyTorch is needed: a
change on one side alone fails here, not as a lease too small on a GPU."""
import ast
import operator
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = (ROOT / "src" / "engine" / "worker_limits.h").read_text()
WORKER = ROOT / "python" / "kvault_worker"

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.LShift: operator.lshift}


def evaluate(node, names, integer_division=False):
    """The value of a constant expression: numbers, names in `names`, + - * / // <<,
    dicts. `integer_division`: `/` of two integers truncates, as in C++."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Dict):
        return {evaluate(k, names): evaluate(v, names) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left = evaluate(node.left, names, integer_division)
        right = evaluate(node.right, names, integer_division)
        both_integers = isinstance(left, int) and isinstance(right, int)
        if integer_division and isinstance(node.op, ast.Div) and both_integers:
            return left // right
        return OPERATORS[type(node.op)](left, right)
    raise ValueError("not a constant expression: %s" % ast.dump(node))


def worker_constants(relative):
    """The module-level UPPER_CASE constants of python/kvault_worker/<relative> whose
    values are constant expressions."""
    names = {}
    for node in ast.parse((WORKER / relative).read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper():
            try:
                names[node.targets[0].id] = evaluate(node.value, names)
            except ValueError:
                pass
    return names


def header_constants():
    """The `inline constexpr int64_t kName = <expr>;` of worker_limits.h, evaluated
    (`int64_t{N}` as N, `/` of integers truncating)."""
    names = {}
    for name, expr in re.findall(r"inline constexpr int64_t (k\w+) = ([^;]+);", HEADER):
        expr = re.sub(r"int64_t\{(\d+)\}", r"\1", expr)
        names[name] = evaluate(ast.parse(expr, mode="eval").body, names, integer_division=True)
    return names


ENGINE = header_constants()
DEVICE = worker_constants("device.py")
REFERENCE = worker_constants("session/reference.py")
FLUSH = worker_constants("timing/flush.py")
SIDE = worker_constants("timing/side.py")

# The engine's constant, the worker's module and constant, equal.
SAME = [
    ("kKeepCachedBytes", DEVICE, "KEEP_CACHED_BYTES"),
    ("kKeptSidesBytes", REFERENCE, "KEEP_BYTES"),
    ("kGraphMaxCalls", SIDE, "GRAPH_MAX_CALLS"),
    ("kGraphPoolSets", SIDE, "POOL_SETS"),
    ("kGraphInputBytes", SIDE, "GRAPH_INPUT_BYTES"),
    ("kGraphOutputBytes", SIDE, "GRAPH_OUTPUT_BYTES"),
]


def test_the_header_is_read_whole():
    # Every constant the header declares is parsed, so none escapes the checks below.
    declared = set(re.findall(r"constexpr \S+ (k\w+) =", HEADER))
    assert declared == set(ENGINE), "worker_limits.h declares what the pattern does not read"
    checked = {engine for engine, _, _ in SAME} | {"kKeepCachedShare", "kFlushBufferBytes"}
    assert set(ENGINE) == checked, "worker_limits.h has a constant this test does not check"


def test_the_engine_counts_the_worker_bounds():
    wrong = ["%s = %r, the worker's %s = %r" % (engine, ENGINE[engine], name, module.get(name))
             for engine, module, name in SAME if module.get(name) != ENGINE[engine]]
    assert wrong == []


def test_the_engine_counts_the_worker_share_of_the_device():
    assert DEVICE["KEEP_CACHED_SHARE"] == 1 / ENGINE["kKeepCachedShare"]


def test_the_engine_flush_buffer_covers_the_worker_rule():
    # gpu_flush_bytes: 2 x the last-level cache, at least GPU_MIN_FLUSH_BYTES. The
    # engine counts twice the largest last-level cache the worker names.
    assert ENGINE["kFlushBufferBytes"] >= FLUSH["GPU_MIN_FLUSH_BYTES"]
    assert ENGINE["kFlushBufferBytes"] >= 2 * max(FLUSH["INFINITY_CACHE_BYTES"].values())
