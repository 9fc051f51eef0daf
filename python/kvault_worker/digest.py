"""Input digests and input-modification checks (docs/worker-protocol.md).

input_digest(inputs) is a SHA-256 over, for each input in order, a type tag and
length-prefixed fields: for a tensor its dtype, shape and values (all bytes up to
64 MiB; above that, a strided sample of 1 MiB and the float64 sum); for any other
value its type name and repr(). Reference and candidate workers compute it the
same way, so equal digests mean equal inputs.

A digest depends on the inputs alone, never on the memory free beside them: a large
tensor is read in chunks of CHUNK elements of its row-major order, through views
(no copy of the whole tensor, whatever its strides), so the temporaries stay near
CHUNK * 8 bytes however large the tensor. A failure, running out of memory included,
raises; reported_input_digest makes it the worker's `oom` or `internal` answer.
same_bits reads tensors in the same chunks.
"""
import hashlib
import math

import torch

from kvault_worker.errors import INTERNAL, attributed
from kvault_worker.tensorbytes import dtype_name, host_contiguous, raw_bytes

FULL_LIMIT = 64 << 20  # bytes hashed in full up to this size
SAMPLE_BYTES = 1 << 20
# Elements per step over a large tensor: a float64 chunk is 128 MiB. A constant, so
# that both workers sum the same chunks and get the same bits.
CHUNK = 1 << 24


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


def reported_input_digest(inputs):
    """input_digest for a reply: any failure becomes a WorkerError, `oom` when memory
    ran out (the engine runs the stage again alone), else `internal`."""
    with attributed(INTERNAL, "computing the digest of the inputs"):
        return input_digest(inputs)


def _hash_tensor(h, t):
    _field(h, "tensor", dtype_name(t.dtype))
    _field(h, "shape", list(t.shape))
    nbytes = t.numel() * t.element_size()
    if nbytes <= FULL_LIMIT:
        host = host_contiguous(t)
        _field(h, "bytes", raw_bytes(host))
        return
    count = max(1, SAMPLE_BYTES // t.element_size())
    step = max(1, t.numel() // count)
    sample = host_contiguous(_strided_sample(t, step, count))  # alive while its bytes are read
    _field(h, "sample", raw_bytes(sample))
    _field(h, "sum", repr(_float64_sum(t)))


def _strided_sample(t, step, count):
    """The elements at row-major positions 0, step, 2 * step, ... (at most `count`),
    as a 1-D tensor, without a contiguous copy of `t`."""
    if t.is_contiguous():
        return t.view(-1)[::step][:count]
    index = torch.arange(0, min(t.numel(), count * step), step, device=t.device)
    coordinates = []
    for size in reversed(t.shape):
        coordinates.append(index % size)
        index = index // size
    return t[tuple(reversed(coordinates))]


def _float64_sum(t):
    """The sum of t's values in float64; None for a dtype without float64 values (the
    sample alone identifies those). Each chunk is converted into one float64 buffer
    and summed there, and the chunk sums are added exactly (math.fsum): the result
    depends on the values, the device and CHUNK only. Failures raise."""
    if t.is_complex():
        t = torch.view_as_real(t)
    if not _has_float64_values(t):
        return None
    if t.numel() == 0:
        return 0.0
    chunks = -(-t.numel() // CHUNK)
    buffer = torch.empty(min(t.numel(), CHUNK), dtype=torch.float64, device=t.device)
    sums = torch.empty(chunks, dtype=torch.float64, device=t.device)
    for i, pieces in enumerate(flat_chunks((t,), CHUNK)):
        filled = 0
        for (piece,) in pieces:
            buffer[filled:filled + piece.numel()].view(piece.shape).copy_(piece)
            filled += piece.numel()
        sums[i] = torch.sum(buffer[:filled])
    return math.fsum(sums.tolist())


def _has_float64_values(t):
    """Whether t's elements convert to float64: asked of one zero of its dtype on the
    host, so that the answer never depends on the device's state or free memory."""
    if t.is_quantized or t.layout != torch.strided:
        return False
    try:
        torch.zeros(1, dtype=t.dtype).to(torch.float64)
    except (RuntimeError, TypeError):
        return False
    return True


def flat_chunks(tensors, size):
    """For tensors of one shape: each run of `size` elements of their row-major order
    (the last may be shorter), as a list of tuples of views, one view per tensor, whose
    elements in row-major order, piece after piece, are that run. No view copies."""
    n = tensors[0].numel()
    for begin in range(0, n, size):
        yield list(_pieces(tuple(tensors), begin, min(n, begin + size)))


def _pieces(tensors, begin, end):
    if all(t.is_contiguous() for t in tensors):
        yield tuple(t.view(-1)[begin:end] for t in tensors)
        return
    if tensors[0].dim() == 1:
        yield tuple(t[begin:end] for t in tensors)
        return
    inner = math.prod(tensors[0].shape[1:])  # elements per index of the first dimension
    row, offset = divmod(begin, inner)
    if offset:  # the tail of a partial first row
        stop = min(end, (row + 1) * inner)
        yield from _pieces(tuple(t[row] for t in tensors), offset, stop - row * inner)
        begin, row = stop, row + 1
    whole = (end - begin) // inner
    if whole:
        yield tuple(t[row:row + whole] for t in tensors)
        begin, row = begin + whole * inner, row + whole
    if begin < end:  # the head of a partial last row
        yield from _pieces(tuple(t[row] for t in tensors), 0, end - begin)


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
    """Compared a chunk at a time (flat_chunks): temporaries of at most CHUNK elements."""
    b = b.detach()
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    return all(_same_piece(x, y) for pieces in flat_chunks((a, b), CHUNK) for x, y in pieces)


def _same_piece(a, b):
    if not a.is_floating_point():
        return torch.equal(a, b)
    as_int = _INT_OF_SIZE[a.element_size()]
    a_bits, b_bits = a.view(as_int), b.view(as_int)
    if torch.equal(a_bits, b_bits):
        return True  # the usual answer, in one pass
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
