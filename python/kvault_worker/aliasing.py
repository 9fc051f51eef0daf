"""Outputs that share memory with inputs (docs/adversarial.md, "no aliased outputs").

A candidate that returns a view of its input (a transpose, a slice, `view`,
`as_strided`, a tensor made over the input's memory) does no work, yet its values
may be exactly the answer. `output_aliases(output, inputs)` finds every tensor of
the returned value (nested tuples, lists and dicts, named as the engine's Compare
names them: "output", "output[1]", "output['h']") whose storage overlaps the
storage of an input tensor: the same device and intersecting byte ranges of the
underlying memory, so views of any kind and separate storages over the same
memory (`torch.from_numpy(x.numpy())`, `torch::from_blob`) are all found.

The worker reports the list; the engine decides (check/aliasing.h): an aliased
output is allowed only where the reference's output aliases an input too.

    aliases = output_aliases(output, inputs)   # [{"output": "output", "input": 0}]
"""
import torch

MAX_DEPTH = 64  # as tensorfile.capture: deeper values are not walked


def output_aliases(output, inputs):
    """[{"output": path, "input": index}] for every output tensor whose memory
    overlaps that of input tensor `index`, in tree order, then input order."""
    spans = [(i, memory_span(x)) for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)]
    spans = [(i, s) for i, s in spans if s is not None]
    found = []
    for path, tensor in output_tensors(output):
        span = memory_span(tensor)
        if span is None:
            continue
        found.extend({"output": path, "input": i} for i, other in spans if overlaps(span, other))
    return found


def output_tensors(value, path="output", depth=0):
    """(path, tensor) for every tensor of `value`, in the order capture() writes them."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, torch.Tensor):
        yield path, value
    elif isinstance(value, (tuple, list)):
        for k, item in enumerate(value):
            yield from output_tensors(item, "%s[%d]" % (path, k), depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from output_tensors(item, "%s['%s']" % (path, key), depth + 1)


def memory_span(tensor):
    """(device, first byte, end byte) of the whole storage under `tensor`, or None
    when it has no addressable memory (empty, sparse, meta)."""
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
        start, size = storage.data_ptr(), storage.nbytes()
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    if not start or size <= 0:
        return None
    return (tensor.device, start, start + size)


def overlaps(a, b):
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]
