"""kernelvault: the Python client of KernelVault's reward service, `kvault serve`.

    from kernelvault import Client
    result = Client().verify(task_source=task, completion=answer)

Adapters for RL trainers (each module's docstring says how to wire it; docs/rl.md):
    kernelvault.rewards   verl: compute_score, compute_score_batch, compute_score_async
    kernelvault.trl       TRL GRPOTrainer: KernelVaultReward, AsyncKernelVaultReward
    kernelvault.openrlhf  OpenRLHF: reward_func, and `python -m kernelvault.openrlhf`
    kernelvault.slime     slime: reward_func for --custom-rm-path

Stdlib only. Infrastructure failures raise (errors.py); they never become a reward of 0.
"""
__version__ = "0.1.0"

from .async_client import AsyncClient  # noqa: E402
from .client import Client, new_idempotency_key  # noqa: E402
from .errors import (  # noqa: E402
    BatchCancelledError,
    BatchNotFoundError,
    DeadlineError,
    InfrastructureError,
    KernelVaultError,
    RequestError,
    TaskError,
    UnsupportedError,
)

__all__ = [
    "AsyncClient",
    "BatchCancelledError",
    "BatchNotFoundError",
    "Client",
    "DeadlineError",
    "InfrastructureError",
    "KernelVaultError",
    "RequestError",
    "TaskError",
    "UnsupportedError",
    "new_idempotency_key",
]
