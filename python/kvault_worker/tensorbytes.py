"""The dtypes the tensor file carries and zero-copy access to a tensor's bytes."""
import ctypes
import sys

import torch

# dtype -> (name in files, item size in bytes); docs/tensor-file.md lists these.
SUPPORTED = {
    torch.float64: ("float64", 8),
    torch.float32: ("float32", 4),
    torch.float16: ("float16", 2),
    torch.bfloat16: ("bfloat16", 2),
    torch.int64: ("int64", 8),
    torch.int32: ("int32", 4),
    torch.int16: ("int16", 2),
    torch.int8: ("int8", 1),
    torch.uint8: ("uint8", 1),
    torch.bool: ("bool", 1),
}
BY_NAME = {name: (dtype, size) for dtype, (name, size) in SUPPORTED.items()}

if sys.byteorder != "little":  # pragma: no cover - all supported hosts are little endian
    raise ImportError("kvault_worker writes little-endian files and needs a little-endian host")


def dtype_name(dtype):
    """`float32` for torch.float32, `complex64` for torch.complex64, ..."""
    return str(dtype).replace("torch.", "")


def host_contiguous(tensor):
    """A detached, C-contiguous CPU tensor with the same values."""
    return tensor.detach().to("cpu").contiguous()


def raw_bytes(tensor):
    """A read-only buffer over the bytes of a CPU, C-contiguous tensor.

    The buffer aliases the tensor's memory: keep the tensor alive while using it.
    bfloat16 (and every other dtype) comes out as its raw bit patterns.
    """
    if tensor.device.type != "cpu" or not tensor.is_contiguous():
        raise ValueError("raw_bytes needs a CPU, contiguous tensor")
    nbytes = tensor.numel() * tensor.element_size()
    if nbytes == 0:
        return memoryview(b"")
    return memoryview((ctypes.c_char * nbytes).from_address(tensor.data_ptr())).cast("B")
