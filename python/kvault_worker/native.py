"""Native-format candidates (docs/native-format.md): a plain shared library that
exports `kvault_forward`, called through ctypes in destination-passing style.

The ctypes structures mirror include/kvault/native.h exactly. Arguments map as:
tensors (and None, as an empty KV_NONE descriptor) -> `inputs` in order;
Python int/float/bool -> `scalars` in order. Outputs are allocated here from the
reference's output layout (docs/worker-protocol.md, "output_layout"), contiguous,
filled with garbage when asked (NaN for floating dtypes), and handed back in the
reference's structure: one tensor, or a tuple/list of tensors.
"""
import ctypes
import math

import torch

from kvault_worker.errors import (BAD_REQUEST, LOAD_ERROR, RUNTIME_ERROR, UNSUPPORTED,
                                  WorkerError, attributed)

MAX_DIMS = 8

KV_NONE = 0
DTYPE_CODES = {
    torch.float32: 1, torch.float64: 2, torch.float16: 3, torch.bfloat16: 4,
    torch.int8: 5, torch.int16: 6, torch.int32: 7, torch.int64: 8,
    torch.uint8: 9, torch.bool: 10,
}
# Tensor-file dtype names (docs/tensor-file.md) -> torch dtypes.
DTYPES_BY_NAME = {
    "float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
    "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
    "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
}

SCALAR_INT, SCALAR_FLOAT, SCALAR_BOOL = 1, 2, 3
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1

# Garbage for integer outputs: the byte 0xA5 repeated, as a value of each type.
_INT_GARBAGE = {torch.int8: -91, torch.uint8: 0xA5, torch.int16: -23131,
                torch.int32: -1515870811, torch.int64: -6510615555426900571}


class KvTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("numel", ctypes.c_int64), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", ctypes.c_int64 * MAX_DIMS)]


class KvScalar(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("i", ctypes.c_int64), ("f", ctypes.c_double)]


def _unsupported(message):
    return WorkerError(UNSUPPORTED, "native format: " + message)


def describe_tensor(t, where):
    """A KvTensor for `t` (which must stay alive while the descriptor is used)."""
    code = DTYPE_CODES.get(t.dtype)
    if code is None:
        raise _unsupported("%s has dtype %s, which has no kv_dtype code" % (where, t.dtype))
    if t.dim() > MAX_DIMS:
        raise _unsupported("%s has %d dimensions; at most %d are supported" % (where, t.dim(), MAX_DIMS))
    d = KvTensor()
    d.data = t.data_ptr() or None
    d.dtype = code
    d.ndim = t.dim()
    d.numel = t.numel()
    for k, (size, stride) in enumerate(zip(t.shape, t.stride())):
        d.shape[k] = size
        d.strides[k] = stride
    return d


def describe_scalar(value, where):
    s = KvScalar()
    if isinstance(value, bool):
        s.kind, s.i, s.f = SCALAR_BOOL, int(value), float(value)
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _unsupported("%s = %d does not fit in int64" % (where, value))
        s.kind, s.i, s.f = SCALAR_INT, value, float(value)
    else:
        s.kind, s.f = SCALAR_FLOAT, value
        s.i = int(value) if math.isfinite(value) and _INT64_MIN <= value <= _INT64_MAX else 0
    return s


class Arguments:
    """The argument list split into kv_tensor and kv_scalar arrays. Holds the
    contiguous tensors the descriptors point into."""

    def __init__(self, args):
        self.keep = []
        tensors, scalars = [], []
        for i, value in enumerate(args):
            where = "argument %d" % i
            if value is None:
                tensors.append(KvTensor(data=None, dtype=KV_NONE, ndim=0, numel=0))
            elif isinstance(value, torch.Tensor):
                t = value.contiguous()  # the same tensor when it already is
                self.keep.append(t)
                tensors.append(describe_tensor(t, where))
            elif isinstance(value, (bool, int, float)):
                scalars.append(describe_scalar(value, where))
            else:
                raise _unsupported("%s is a %s; only tensors, None, int, float and bool can be "
                                   "passed" % (where, type(value).__name__))
        self.tensors = (KvTensor * max(len(tensors), 1))(*tensors)
        self.num_tensors = len(tensors)
        self.scalars = (KvScalar * max(len(scalars), 1))(*scalars)
        self.num_scalars = len(scalars)


class OutputLayout:
    """The reference output's structure, dtypes and shapes (no values).

    `kind` is "tensor", "tuple" or "list"; `specs` is [(dtype, shape)] in order.
    """

    def __init__(self, kind, specs):
        self.kind = kind
        self.specs = specs

    @staticmethod
    def from_json(value):
        """Parses the `output_layout` request field; bad_request when malformed,
        unsupported when the structure is not one tensor or a flat tuple/list."""
        if not isinstance(value, dict) or not isinstance(value.get("tree"), dict) \
                or not isinstance(value.get("tensors"), list):
            raise WorkerError(BAD_REQUEST, "'output_layout' must be {tree, tensors}")
        specs = []
        for entry in value["tensors"]:
            dtype = DTYPES_BY_NAME.get(entry.get("dtype")) if isinstance(entry, dict) else None
            shape = entry.get("shape") if isinstance(entry, dict) else None
            if dtype is None or not isinstance(shape, list) or not all(
                    isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
                raise WorkerError(BAD_REQUEST, "malformed output_layout tensor %r" % (entry,))
            if len(shape) > MAX_DIMS:
                raise _unsupported("the reference returns a tensor of %d dimensions; at most %d "
                                   "are supported" % (len(shape), MAX_DIMS))
            specs.append((dtype, shape))
        tree = value["tree"]
        kind = tree.get("kind")
        if kind == "tensor":
            order = [tree.get("index")]
        elif kind in ("tuple", "list") and isinstance(tree.get("items"), list) and all(
                isinstance(n, dict) and n.get("kind") == "tensor" for n in tree["items"]):
            order = [n.get("index") for n in tree["items"]]
        else:
            raise _unsupported("the reference returns %s; native candidates return one tensor "
                               "or a flat tuple/list of tensors" % _describe_tree(tree))
        if not all(isinstance(i, int) and 0 <= i < len(specs) for i in order):
            raise WorkerError(BAD_REQUEST, "output_layout tree names a tensor it does not list")
        return OutputLayout(kind, [specs[i] for i in order])

    @staticmethod
    def of_output(output):
        """The layout of an output computed in this process (the `time` request)."""
        if isinstance(output, torch.Tensor):
            return OutputLayout("tensor", [_spec(output)])
        if isinstance(output, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in output):
            return OutputLayout("tuple" if isinstance(output, tuple) else "list",
                                [_spec(t) for t in output])
        raise _unsupported("the reference returns a %s; native candidates return one tensor "
                           "or a flat tuple/list of tensors" % type(output).__name__)

    def allocate(self, device, fill):
        outputs = []
        for dtype, shape in self.specs:
            if dtype not in DTYPE_CODES:
                raise _unsupported("the reference returns a tensor of dtype %s" % dtype)
            t = torch.empty(shape, dtype=dtype, device=device)
            if fill:
                fill_garbage(t)
            outputs.append(t)
        return outputs

    def assemble(self, outputs):
        if self.kind == "tensor":
            return outputs[0]
        return tuple(outputs) if self.kind == "tuple" else list(outputs)


def _spec(t):
    if t.dim() > MAX_DIMS:
        raise _unsupported("the reference returns a tensor of %d dimensions" % t.dim())
    return (t.dtype, list(t.shape))


def _describe_tree(tree):
    kind = tree.get("kind")
    if kind in ("tuple", "list"):
        return "a %s that holds more than tensors" % kind
    return "a %s" % kind if isinstance(kind, str) else "an unknown structure"


def fill_garbage(t):
    """NaN for floating dtypes, the byte 0xA5 repeated for integers, alternating
    True/False for bool: values a kernel that skips elements cannot pass with."""
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        flat = t.view(-1)
        flat[0::2] = True
        flat[1::2] = False
    else:
        t.fill_(_INT_GARBAGE[t.dtype])


class NativeLibrary:
    """A loaded native candidate; `forward(*args)` calls kvault_forward."""

    def __init__(self, path):
        with attributed(LOAD_ERROR, "the native library does not load"):
            self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        entry = getattr(self.lib, "kvault_forward", None)
        if entry is None:
            raise WorkerError(LOAD_ERROR, "the native library exports no kvault_forward (declare it "
                                          "extern \"C\" with the signature of kvault/native.h)")
        entry.restype = ctypes.c_int
        entry.argtypes = [ctypes.POINTER(KvTensor), ctypes.c_int, ctypes.POINTER(KvScalar),
                          ctypes.c_int, ctypes.POINTER(KvTensor), ctypes.c_int, ctypes.c_void_p]
        self.entry = entry
        self.last_error = getattr(self.lib, "kvault_last_error", None)
        if self.last_error is not None:
            self.last_error.restype = ctypes.c_char_p
            self.last_error.argtypes = []

    def bind(self, layout, device, fill):
        """A callable f(*args) -> outputs in `layout`'s structure, for `device`."""
        def forward(*args):
            return self.call(args, layout, device, fill)
        return forward

    def call(self, args, layout, device, fill):
        arguments = Arguments(args)
        outputs = layout.allocate(device.torch_device, fill)
        descriptors = [describe_tensor(t, "output %d" % i) for i, t in enumerate(outputs)]
        out_array = (KvTensor * max(len(descriptors), 1))(*descriptors)
        stream = torch.cuda.current_stream().cuda_stream if device.is_gpu else None
        rc = self.entry(arguments.tensors, arguments.num_tensors, arguments.scalars,
                        arguments.num_scalars, out_array, len(descriptors), stream)
        if rc != 0:
            raise WorkerError(RUNTIME_ERROR, "kvault_forward returned %d%s" % (rc, self._message()))
        return layout.assemble(outputs)

    def _message(self):
        if self.last_error is None:
            return ""
        with attributed(RUNTIME_ERROR, "kvault_last_error raised"):
            text = self.last_error()
        return ": " + text.decode("utf-8", "replace") if text else ""
