"""The per-task "custom kernel required" policy (docs/adversarial.md, "Policy").

KVAULT_META["policy"]:
- `any` (default): the candidate may compute with any PyTorch operator;
- `custom_kernel`: the candidate's forward may dispatch only PyTorch operators that
  allocate, view, reshape, copy or fill tensors (ALLOWED below); the computation
  itself must happen in the candidate's own kernel, which PyTorch's dispatcher does
  not see. Calling `torch.matmul`, the task's `Model`, an `einsum`, or falling back
  to PyTorch in an `except` branch dispatches a computing operator and is a
  `policy_violation`.

The forward is traced with a TorchDispatchMode, which sees every operator that goes
through PyTorch's dispatcher, from Python or from C++ (an extension calling
`at::matmul` is seen too). It applies to both candidate formats. Limits: a
candidate may compute with a library PyTorch does not dispatch (NumPy, cuBLAS
called directly) or leave the mode (private API); the trace is a rule check, not a
sandbox. Ops run by the task's own `Model` around a twin call (extension format,
`model(*inputs, fn=forward)`) are traced as well, so a twin must only pass tensors.
"""
from torch.utils._python_dispatch import TorchDispatchMode

ANY = "any"
CUSTOM_KERNEL = "custom_kernel"
POLICIES = (ANY, CUSTOM_KERNEL)

# Operators that move, shape or allocate data but compute nothing from it.
ALLOWED = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros
ones ones_like new_ones full full_like new_full fill_ zero_ scalar_tensor
view _unsafe_view _reshape_alias reshape as_strided view_as t transpose permute
unsqueeze squeeze expand expand_as slice select narrow unbind split split_with_sizes
chunk detach alias flatten unflatten movedim contiguous clone copy_ _to_copy to
lift_fresh lift_fresh_copy resize_ set_ _copy_from _copy_from_and_resize
""".split())


class OperatorTrace(TorchDispatchMode):
    """Records the names of the dispatched operators (overload packets), in order."""

    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        packet = getattr(func, "overloadpacket", func)
        self.names.append(getattr(packet, "__name__", str(packet)))
        return func(*args, **(kwargs or {}))

    def forbidden(self):
        """Computing operators seen, each once, in the order first seen."""
        seen = []
        for name in self.names:
            if name not in ALLOWED and name not in seen:
                seen.append(name)
        return seen
