"""Input digests and input-modification checks (docs/worker-protocol.md).

input_digest(inputs) is a SHA-256 over, for each input in order, a type tag and
length-prefixed fields: for a tensor its dtype, shape and values (all bytes up to
64 MiB; above that, a strided sample of 1 MiB and the float64 sum); for any other
value its type name and repr(). Reference and candidate workers compute it the
same way, so equal digests mean equal inputs.
"""
import hashlib

import torch

from kvault_worker.tensorbytes import dtype_name, host_contiguous, raw_bytes

FULL_LIMIT = 64 << 20  # bytes hashed in full up to this size
SAMPLE_BYTES = 1 << 20


def _field(h, tag, payload):
    data = payload if isinstance(payload, (bytes, memoryview)) else str(payload).encode("utf-8")
    h.update(tag.encode("ascii") + b":" + str(len(data)).encode("ascii") + b":")
    h.update(data)


def input_digest(inputs):
    h = hashlib.sha256()
    _field(h, "count", len(inputs))
    for item in inputs:
        if isinstance(item, torch.Tensor):
            _hash_tensor(h, item.detach())
        else:
            _field(h, "value", "%s=%r" % (type(item).__name__, item))
    return h.hexdigest()


def _hash_tensor(h, t):
    _field(h, "tensor", dtype_name(t.dtype))
    _field(h, "shape", list(t.shape))
    nbytes = t.numel() * t.element_size()
    if nbytes <= FULL_LIMIT:
        host = host_contiguous(t)
        _field(h, "bytes", raw_bytes(host))
        return
    flat = t.reshape(-1)
    count = max(1, SAMPLE_BYTES // t.element_size())
    step = max(1, flat.numel() // count)
    sample = host_contiguous(flat[::step][:count])
    _field(h, "sample", raw_bytes(sample))
    _field(h, "sum", repr(_float64_sum(t)))


def _float64_sum(t):
    if t.is_complex():
        t = torch.view_as_real(t)
    try:
        return torch.sum(t, dtype=torch.float64).item()
    except RuntimeError:
        return None  # dtypes without a float64 sum: the sample alone identifies them


def pristine_copy(inputs):
    """A private clone of every tensor input (other values are immutable)."""
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def modified_inputs(pristine, current):
    """Indices of tensor inputs whose value changed: shape, dtype or bits, NaN-aware
    (a NaN is unchanged if it is still a NaN, whatever its payload)."""
    return [i for i, (before, after) in enumerate(zip(pristine, current))
            if isinstance(before, torch.Tensor) and not same_bits(before, after)]


_INT_OF_SIZE = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def same_bits(a, b):
    b = b.detach()
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.numel() == 0:
        return True
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if not a.is_floating_point():
        return torch.equal(a, b)
    as_int = _INT_OF_SIZE[a.element_size()]
    a_bits, b_bits = a.view(as_int), b.view(as_int)
    if torch.equal(a_bits, b_bits):
        return True  # the usual answer, in one pass and no temporaries
    equal = a_bits == b_bits
    equal |= torch.isnan(a) & torch.isnan(b)
    return bool(equal.all())


def same_layout(a, b):
    """Whether two input lists have the same length and, position by position, tensors
    of the same shape, dtype and strides (or non-tensors in both)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor) and (x.shape != y.shape or x.dtype != y.dtype or x.stride() != y.stride()):
            return False
    return True
