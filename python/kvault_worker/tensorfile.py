"""Writer and reader of the tensor file (`.kvt`), exactly as docs/tensor-file.md.

Writing is two steps so that failures are attributed correctly:
`capture(value)` walks the returned value and copies its tensors to host memory
(this can run candidate code, e.g. a tensor subclass, so callers attribute its
errors to whoever produced the value); `write(path, captured)` only does file I/O
and replaces `path` atomically. `read(path)` is the inverse, used by the tests.
"""
import hashlib
import json
import math
import os
import struct

import torch

from kvault_worker.tensorbytes import BY_NAME, SUPPORTED, dtype_name, host_contiguous, raw_bytes

MAGIC = b"KVTENS01"
VERSION = 1
ALIGN = 64
MAX_DEPTH = 64  # deeper (or cyclic) values are written as unsupported nodes


class Captured:
    """A value's tree plus the host copies of its tensors, ready to be written."""

    def __init__(self):
        self.tree = None
        self.tensors = []  # CPU, C-contiguous
        self.records = []  # the header's "tensors" entries, without offsets


class Unsupported:
    """What the reader returns for an `unsupported` node."""

    def __init__(self, type_name):
        self.type_name = type_name

    def __repr__(self):
        return "Unsupported(%r)" % self.type_name

    def __eq__(self, other):
        return isinstance(other, Unsupported) and other.type_name == self.type_name


def capture(value):
    captured = Captured()
    captured.tree = _node(value, captured, 0)
    return captured


def _node(value, captured, depth):
    if depth > MAX_DEPTH:
        return {"kind": "unsupported", "type": type(value).__name__}
    if isinstance(value, torch.Tensor):
        return _tensor_node(value, captured)
    if value is None:
        return {"kind": "none"}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "int", "value": int(value)}
    if isinstance(value, float):
        return {"kind": "float", "value": _float_json(float(value))}
    if isinstance(value, str):
        return {"kind": "str", "value": str(value)}
    if isinstance(value, (tuple, list)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {"kind": kind, "items": [_node(v, captured, depth + 1) for v in value]}
    if isinstance(value, dict):
        keys = list(value.keys())
        return {"kind": "dict", "keys": [str(k) for k in keys],
                "items": [_node(value[k], captured, depth + 1) for k in keys]}
    return {"kind": "unsupported", "type": type(value).__name__}


def _tensor_node(tensor, captured):
    if tensor.layout != torch.strided:
        return {"kind": "unsupported", "type": "tensor:%s" % str(tensor.layout).replace("torch.", "")}
    if tensor.dtype not in SUPPORTED or tensor.is_quantized:
        return {"kind": "unsupported", "type": "tensor:%s" % dtype_name(tensor.dtype)}
    if tensor.device.type == "meta":
        return {"kind": "unsupported", "type": "tensor:meta"}
    name, size = SUPPORTED[tensor.dtype]
    host = host_contiguous(tensor)
    if host.numel() and host.data_ptr() == tensor.data_ptr():
        # A CPU tensor's own memory: copied now, so that what is written later (the
        # deferred writes of a correctness run) is the value at capture, not what a
        # thread of the candidate's put there after its call returned.
        host = host.clone()
    index = len(captured.tensors)
    captured.tensors.append(host)
    captured.records.append({"dtype": name, "shape": list(tensor.shape),
                             "strides": list(tensor.stride()), "device": str(tensor.device),
                             "nbytes": host.numel() * size})
    return {"kind": "tensor", "index": index}


def _float_json(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _align(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def write(path, captured, sha256=False):
    """Writes the file; replaces `path` only once it is complete. With `sha256`,
    returns the SHA-256 (hex) of the bytes written, taken from memory as they are
    written: what the file held when this call made it, whatever happens to it later."""
    digest = hashlib.sha256() if sha256 else None
    records, offset = [], 0
    for record in captured.records:
        records.append(dict(record, offset=offset))
        offset = _align(offset + record["nbytes"])
    header = json.dumps({"version": VERSION, "tree": captured.tree, "tensors": records},
                        allow_nan=False, separators=(",", ":")).encode("utf-8")
    data_start = _align(len(MAGIC) + 8 + len(header))
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            def put(data):
                f.write(data)
                if digest is not None:
                    digest.update(data)
            put(MAGIC)
            put(struct.pack("<Q", len(header)))
            put(header)
            put(b"\0" * (data_start - f.tell()))
            for record, tensor in zip(records, captured.tensors):
                put(b"\0" * (data_start + record["offset"] - f.tell()))
                put(raw_bytes(tensor))
        os.replace(tmp, path)
        return digest.hexdigest() if digest is not None else None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_value(path, value):
    write(path, capture(value))


class FormatError(ValueError):
    """The file is not a valid tensor file."""


def read(path):
    """Returns (value, header). Tensors come back as CPU tensors; raises FormatError."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 16 or blob[:8] != MAGIC:
        raise FormatError("%s: not a tensor file (bad magic or truncated)" % path)
    (header_len,) = struct.unpack("<Q", blob[8:16])
    if 16 + header_len > len(blob):
        raise FormatError("%s: header runs past the end of the file" % path)
    try:
        header = json.loads(blob[16:16 + header_len].decode("utf-8"))
        records, tree = header["tensors"], header["tree"]
    except (ValueError, KeyError, TypeError) as e:
        raise FormatError("%s: bad header: %s" % (path, e)) from None
    data_start = _align(16 + header_len)
    tensors = [_read_tensor(blob, data_start, r, path) for r in records]
    return _value(tree, tensors, path), header


def _read_tensor(blob, data_start, record, path):
    if record.get("dtype") not in BY_NAME:
        raise FormatError("%s: unknown dtype %r" % (path, record.get("dtype")))
    dtype, size = BY_NAME[record["dtype"]]
    shape, offset = list(record["shape"]), record["offset"]
    numel = math.prod(shape)
    if record["nbytes"] != numel * size or offset % ALIGN:
        raise FormatError("%s: inconsistent tensor record %r" % (path, record))
    start = data_start + offset
    if start + record["nbytes"] > len(blob):
        raise FormatError("%s: tensor data runs past the end of the file" % path)
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    raw = bytearray(blob[start:start + record["nbytes"]])
    return torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape)


def _value(node, tensors, path):
    kind = node.get("kind")
    if kind == "tensor":
        return tensors[node["index"]]
    if kind in ("tuple", "list"):
        items = [_value(n, tensors, path) for n in node["items"]]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {k: _value(n, tensors, path) for k, n in zip(node["keys"], node["items"])}
    if kind == "float":
        return float(node["value"])
    if kind in ("int", "bool", "str"):
        return node["value"]
    if kind == "none":
        return None
    if kind == "unsupported":
        return Unsupported(node["type"])
    raise FormatError("%s: unknown tree node kind %r" % (path, kind))
