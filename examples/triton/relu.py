"""relu in Triton (module_fn entry): the task has no twin, so module_fn(x) is called."""
import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(x, 0.0), mask=mask)


def module_fn(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    block = 4096 if out.is_cuda else 1 << 16  # the interpreter runs one program at a time
    relu_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
    return out
