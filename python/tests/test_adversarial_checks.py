"""Unit tests of the worker's adversarial defences (docs/adversarial.md) that need no
worker process: input distributions, the harness snapshot, the operator policy."""
import time

import pytest
import torch

from kvault_worker import distributions, op_policy
from kvault_worker.integrity import Snapshot


def test_task_distribution_is_the_identity():
    x = [torch.rand(4, 5), 3]
    assert distributions.transform(x, "task", 1) is x


@pytest.mark.parametrize("name", distributions.EXTRA)
def test_other_distributions_keep_shape_dtype_and_are_signed(name):
    x = torch.rand(256, 33, dtype=torch.float16) + 1  # all positive
    (y,) = distributions.transform([x], name, 1)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert (y < 0).any() and (y > 0).any()
    assert torch.isfinite(y).all()


def test_other_distributions_are_functions_of_the_seed():
    x = [torch.rand(100)]
    a = distributions.transform(x, "heavy_tailed", 5)[0]
    assert torch.equal(a, distributions.transform(x, "heavy_tailed", 5)[0])
    assert not torch.equal(a, distributions.transform(x, "heavy_tailed", 6)[0])
    assert not torch.equal(a, distributions.transform(x, "signed", 5)[0])


def test_heavy_tails_are_heavier_than_signed():
    x = [torch.randn(1 << 16)]
    signed = distributions.transform(x, "signed", 1)[0]
    heavy = distributions.transform(x, "heavy_tailed", 1)[0]
    assert heavy.abs().max() > 2 * signed.abs().max()


@pytest.mark.parametrize("name", distributions.EXTRA)
def test_the_task_inputs_structure_is_kept(name):
    # KernelBench's triangular and symmetric matmuls promise their kernels that structure.
    lower = torch.tril(torch.rand(64, 64))
    a = torch.rand(3, 32, 32)
    symmetric = (a + a.mT) / 2
    y_lower, y_symmetric = distributions.transform([lower, symmetric], name, 1)
    assert torch.equal(y_lower, torch.tril(y_lower)) and (y_lower.tril() < 0).any()
    assert torch.equal(y_symmetric, y_symmetric.mT) and (y_symmetric < 0).any()
    rms = lambda t: t.double().pow(2).mean().sqrt().item()
    assert 0.7 < rms(y_symmetric) / rms(symmetric) < 1.4  # at the task's scale
    square_images = torch.rand(2, 3, 16, 16)  # square last dimensions, not symmetric
    (y,) = distributions.transform([square_images], name, 1)
    assert not torch.equal(y, y.mT) and (y != 0).all()


def test_symmetry_is_checked_in_bounded_blocks(monkeypatch):
    monkeypatch.setattr(distributions, "_CHUNK", 10)
    seen, real_equal = [], torch.equal
    monkeypatch.setattr(torch, "equal", lambda a, b: seen.append(a.numel()) or real_equal(a, b))
    a = torch.randn(3, 6, 6)
    symmetric = a + a.mT
    assert distributions._symmetric(symmetric)
    # After the first row and column (3 x 6 elements), every element a block at a time.
    assert seen[0] == 18 and max(seen[1:]) <= 10 and sum(seen[1:]) == symmetric.numel()
    assert distributions._symmetric(symmetric.mT[:, ::2, ::2])
    for batch, i, j in ((0, 2, 3), (2, 5, 4), (1, 4, 1)):  # off the first row and column
        broken = symmetric.clone()
        broken[batch, i, j] += 1
        assert not distributions._symmetric(broken) and not distributions._symmetric(broken.mT)
    generator = torch.Generator().manual_seed(5)
    for trial in range(30):
        x = torch.randint(3, (2, 5, 5), generator=generator).float()
        x = (x + x.mT) if trial % 2 else x
        x[0, trial % 5, trial % 5] = float("nan") if trial % 7 == 0 else x[0, trial % 5, trial % 5]
        for view in (x, x.permute(2, 1, 0), x[:, 1:, 1:], x[..., ::2, ::2]):
            assert distributions._symmetric(view) == real_equal(view, view.mT), trial


def test_integer_and_scalar_inputs_are_kept():
    idx = torch.arange(10)
    out = distributions.transform([idx, 2.5, None], "signed", 1)
    assert out[0] is idx and out[1:] == [2.5, None]


def test_unknown_distribution_raises():
    with pytest.raises(ValueError):
        distributions.transform([torch.ones(2)], "uniform", 1)


def test_snapshot_sees_a_patched_clock_and_nothing_else():
    snap = Snapshot()
    snap.settle()
    assert snap.changes() == []
    real = time.perf_counter
    time.perf_counter = lambda: 0.0
    try:
        assert snap.changes() == ["time.perf_counter"]
    finally:
        time.perf_counter = real
    assert snap.changes() == []


def test_snapshot_sees_patched_methods_and_precision_switches():
    snap = Snapshot()
    snap.settle()
    real = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, end: 0.0
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = not before
    try:
        changed = snap.changes()
        assert "torch.cuda.Event.elapsed_time" in changed
        assert any(c.startswith("torch.backends.cuda.matmul.allow_tf32") for c in changed)
    finally:
        torch.cuda.Event.elapsed_time = real
        snap.restore_switches()
    assert torch.backends.cuda.matmul.allow_tf32 == before
    assert snap.changes() == []


def test_snapshot_sees_the_workers_own_functions_replaced():
    from kvault_worker import digest
    snap = Snapshot()
    snap.settle()
    real = digest.modified_inputs
    digest.modified_inputs = lambda pristine, current: []
    try:
        assert snap.changes() == ["kvault_worker.digest.modified_inputs"]
    finally:
        digest.modified_inputs = real


def test_operator_trace_allows_allocation_and_views_only():
    a, b = torch.randn(4, 3), torch.randn(3, 2)
    with op_policy.OperatorTrace() as trace:
        out = torch.empty(4, 2)
        a.t().contiguous().view(-1)
        out.fill_(0)
    assert trace.forbidden() == []
    with op_policy.OperatorTrace() as trace:
        torch.matmul(a, b)
        torch.relu(a)
        torch.relu(a)
    assert trace.forbidden() == ["mm", "relu"]
