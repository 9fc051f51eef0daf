"""row_sum in Triton, WRONG reduction: tl.max where the task sums (2-D masked
blocks otherwise as in row_sum.py)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, rows, cols, BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_mask = row < rows
    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for start in range(0, cols, BLOCK_COLS):
        col = start + tl.arange(0, BLOCK_COLS)
        mask = row_mask[:, None] & (col[None, :] < cols)
        x = tl.load(x_ptr + row[:, None] * cols + col[None, :], mask=mask, other=0.0)
        acc += tl.max(x, axis=1)
    tl.store(out_ptr + row, acc, mask=row_mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        block_rows = 16 if x.is_cuda else 256  # fewer, larger programs for the interpreter
        row_sum_kernel[(triton.cdiv(rows, block_rows),)](x, out, rows, cols,
                                                          BLOCK_ROWS=block_rows, BLOCK_COLS=256)
        return out
