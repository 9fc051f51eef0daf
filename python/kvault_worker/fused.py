"""The `fused` policy's data flow (docs/adversarial.md, "Policy"): whether what
becomes the candidate's output was written by its own code, or by PyTorch.

The operator trace (op_policy.ProcessOperators) names, for every operator call, the
storages its tensors lie in. Following the calls in the order they ended (an operator
after the ones it called), each storage written gets a state from its last writer:
- `empty`: allocated (empty*, new_empty*) and written by no operator since;
- `constant`: filled (zeros*, ones*, full*, fill_, zero_) and written by no operator
  since but copies of constants;
- `pytorch`: written by a computing ATen operator (out= and in-place ones too), or
  copied (copy_, clone, to, ...) from a `pytorch` storage or an input's; a computation
  nested inside any operator (a `__torch_dispatch__`, a kernel registered for an ATen
  operator or a custom one) leaves its storage `pytorch` whatever the operator is;
- `own`: copied from an `own` storage, or read while `empty` (what lies there no
  operator wrote: the candidate's code did).
Storages the trace first sees as inputs (the task's inputs, the model's weights,
buffers kept between calls) are the inputs'. A custom operator (not ATen's) sets no
state of its own: its own kernel writes where its allocation left `empty`.

An output is PyTorch's when its storage ends `pytorch` or is an input's; one that
ends `empty`, `constant` or `own` was last written outside PyTorch's operators (a
correct answer is neither garbage nor a constant): by the candidate's code. So a
kernel of its own whose result PyTorch then computes on (an epilogue left to
PyTorch, a result multiplied by zero and added), that writes a buffer nobody reads,
or that never launches, does not count.
Not told apart: a kernel of its own that only copies what PyTorch computed into the
output.
"""
import functools
import re

ALLOCATE = frozenset("empty empty_like empty_strided new_empty new_empty_strided".split())
FILL = frozenset("zeros zeros_like new_zeros ones ones_like new_ones full full_like new_full fill_ zero_ "
                 "scalar_tensor".split())
COPY = frozenset("copy_ clone contiguous to _to_copy _copy_from _copy_from_and_resize lift_fresh_copy "
                 "resolve_conj resolve_neg".split())

_WRITES_RE = re.compile(r"\([a-z0-9]*!\)")

EMPTY, CONSTANT, PYTORCH, OWN, INPUT = "empty", "constant", "pytorch", "own", "input"


def pytorch_outputs(ops, count):
    """Why each of the call's `count` output tensors is PyTorch's (messages, empty when
    none is), or None when the trace does not name their storages."""
    storages = ops.output_storages()
    if count and len(storages) < count:
        return None
    state, names = flow(ops.nodes)
    found = []
    for position in range(count):
        sid = storages[position]
        now = state.get(sid, INPUT)
        if now in (PYTORCH, INPUT):
            why = ("output %d was written last by PyTorch (%s)" % (position, names.get(sid, "an operator"))
                   if now == PYTORCH else "output %d lies in an input's storage, never written" % position)
            found.append(why)
    return found


def flow(nodes):
    """Each storage id's state after the calls of `nodes` (in trace order: the order
    they ended), and the operator that last wrote each `pytorch` one."""
    from kvault_worker.op_policy import _field, _input_values, _output_values, _tensor_value
    state, names, setter = {}, {}, {}

    def read(sid):
        now = state.get(sid, INPUT)
        if now == EMPTY:  # what lies there, the candidate's code wrote
            state[sid] = now = OWN
        return now

    for node in nodes:
        name = str(node.get("name", ""))
        schema = _field(node, "op_schema")
        if not schema or name.startswith("[pytorch|profiler|"):
            continue
        aten = name.startswith("aten::")
        short = name[len("aten::"):] if aten else name
        ins = [_tensors(v, _tensor_value) for v in (_input_values(node) or [])]
        outs = [t for v in (_output_values(node) or []) for t in _tensors(v, _tensor_value)]
        in_sids = [t[1] for group in ins for t in group]
        written, read_too = set(), set()
        for index in _written_arguments(str(schema)):
            if index < len(ins):
                sids = [t[1] for t in ins[index]]
                written.update(sids)
                if index == 0 and short.endswith("_") and short not in COPY:
                    read_too.update(sids)  # in place: self is read, then written
        sources = [read(sid) for sid in in_sids if sid not in written or sid in read_too]
        if not aten:
            continue  # what its implementation dispatched, or left empty, stands
        if short in ALLOCATE:
            value = EMPTY
        elif short in FILL:
            value = CONSTANT
        elif short in COPY:
            copied = sources[0] if sources else CONSTANT
            value = PYTORCH if copied == INPUT else copied
        else:
            value = PYTORCH
        me = node.get("id") if isinstance(node.get("id"), int) else -1
        targets = set(written)
        targets.update(t[1] for t in outs if t[1] not in in_sids)  # new storages, not views
        for sid in targets:
            if state.get(sid) == PYTORCH and setter.get(sid, -1) > me:
                continue  # a computation nested inside this operator wrote it
            state[sid] = value
            setter[sid] = me
            if value == PYTORCH:
                names[sid] = name
    return state, names


def _tensors(value, tensor_value, depth=0):
    """The tensor values in one argument (a tensor, or a list of them)."""
    found = tensor_value(value)
    if found is not None:
        return [found]
    if isinstance(value, list) and depth < 4:
        return [t for item in value for t in _tensors(item, tensor_value, depth + 1)]
    return []


@functools.lru_cache(maxsize=4096)
def _written_arguments(schema):
    """Positions of the arguments an operator's schema marks as written (`Tensor(a!)`),
    keyword-only ones counted in order (the trace records every argument)."""
    start = schema.find("(")
    if start < 0:
        return []
    depth, args, current = 0, [], []
    for ch in schema[start + 1:]:
        if ch == ")" and depth == 0:
            break
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(current))
            current = []
        else:
            current.append(ch)
    if current:
        args.append("".join(current))
    arguments = [a for a in args if a.strip() != "*"]
    return tuple(i for i, a in enumerate(arguments) if _WRITES_RE.search(a))
