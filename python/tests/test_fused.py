"""The `fused` policy (fused.py, op_policy.Enforcer; docs/adversarial.md, "Policy"):
PyTorch may compute part of the answer, but what becomes the output must have been
written last by the candidate's own code (here: NumPy writing a tensor's memory,
which dispatches no operator, as an extension's loop or kernel would)."""
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kvault_worker import op_policy

A, B, BIAS = torch.randn(16, 8), torch.randn(8, 4), torch.randn(4)


def own_write(out, value):
    out.numpy()[:] = value.numpy()  # no operator dispatched: "its own code"
    return out


def gemm_then_own_epilogue(fill):
    y = torch.mm(A, B)  # PyTorch's GEMM: allowed
    out = fill(y)
    out.numpy()[:] = (y.numpy() + BIAS.numpy()).clip(min=0)  # the epilogue, its own
    return out


def answer():
    return torch.relu(torch.mm(A, B) + BIAS)


class CloneIsAnswer(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.clone.default:
            return answer()
        return func(*args, **(kwargs or {}))


def nested_in_clone():
    marker = torch.empty(16, 4)
    with CloneIsAnswer():
        return marker.clone()


def own_transposed():
    y = torch.mm(A, B)
    out = torch.empty(4, 16)
    out.numpy()[:] = (y.numpy() + BIAS.numpy()).clip(min=0).T
    return out.t()


HONEST = {
    "own epilogue into empty": lambda: gemm_then_own_epilogue(torch.empty_like),
    "own epilogue into zeros": lambda: gemm_then_own_epilogue(torch.zeros_like),
    "a view of what it wrote": lambda: own_transposed(),
}
CHEATS = {
    "all PyTorch": answer,
    "epilogue left to PyTorch": lambda: own_write(torch.empty(16, 4), torch.mm(A, B) + BIAS).relu_(),
    "own result times zero": lambda: answer() + own_write(torch.empty(16, 4), torch.ones(16, 4)) * 0,
    "own kernel unused": lambda: (own_write(torch.empty(4), BIAS), answer())[1],
    "out= of a computing operator": lambda: torch.mm(A, B, out=torch.empty(16, 4)),
    "PyTorch's result copied": lambda: torch.empty(16, 4).copy_(answer()),
    "a computation nested in clone": nested_in_clone,
    "one of two outputs PyTorch's": lambda: (gemm_then_own_epilogue(torch.empty_like), answer()),
    "an input returned": lambda: A,
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_output_written_by_its_own_code_passes(name):
    out = op_policy.Enforcer("fused").call(HONEST[name])
    assert torch.allclose(out.contiguous(), answer(), atol=1e-5)


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_output_written_by_pytorch_is_a_violation(name):
    with pytest.raises(op_policy.Violation, match="policy fused: output"):
        op_policy.Enforcer("fused").call(CHEATS[name])


def test_computing_operators_are_allowed_for_the_rest():
    out = op_policy.Enforcer("fused").call(lambda: gemm_then_own_epilogue(torch.empty_like))
    assert out.shape == (16, 4)
    with pytest.raises(op_policy.Violation, match="custom_kernel"):
        op_policy.Enforcer("custom_kernel").call(lambda: gemm_then_own_epilogue(torch.empty_like))
