"""Input digests and the bitwise, NaN-aware modification check."""
import torch

from kvault_worker import digest
from kvault_worker.digest import input_digest, modified_inputs, same_bits


def test_digest_depends_on_values_dtype_shape_and_scalars():
    x = torch.arange(6, dtype=torch.float32)
    base = input_digest([x, 3])
    assert base == input_digest([x.clone(), 3])
    assert base != input_digest([x.reshape(2, 3), 3])
    assert base != input_digest([x.double(), 3])
    assert base != input_digest([x, 3.0])
    changed = x.clone()
    changed[5] = 5.0000005
    assert base != input_digest([changed, 3])
    m = torch.arange(6.0).reshape(2, 3)
    assert input_digest([m.t()]) == input_digest([m.t().contiguous()])


def test_digest_fields_cannot_run_together():
    assert input_digest([torch.ones(2), torch.ones(1)]) != input_digest([torch.ones(1), torch.ones(2)])


def test_large_tensors_use_sample_and_sum(monkeypatch):
    monkeypatch.setattr(digest, "FULL_LIMIT", 1024)
    monkeypatch.setattr(digest, "SAMPLE_BYTES", 64)
    x = torch.randn(4096)
    assert input_digest([x]) == input_digest([x.clone()])
    unsampled = x.clone()
    unsampled[1] += 1.0  # not in the strided sample (step 256), but the sum changes
    assert input_digest([unsampled]) != input_digest([x])
    assert input_digest([torch.ones(4096, dtype=torch.bool)]) != input_digest([torch.zeros(4096, dtype=torch.bool)])


def test_same_bits_is_bitwise_and_nan_aware():
    a = torch.tensor([1.0, float("nan"), -0.0])
    assert same_bits(a, a.clone())
    assert not same_bits(a, torch.tensor([1.0, float("nan"), 0.0]))  # -0.0 vs 0.0
    other_nan = a.clone()
    other_nan.view(torch.int32)[1] = 0x7FC00001  # a NaN with another payload
    assert torch.isnan(other_nan[1]) and same_bits(a, other_nan)
    assert not same_bits(a, torch.tensor([1.0, 2.0, -0.0]))
    assert not same_bits(a, a[:2].clone())
    assert same_bits(torch.tensor([1, 2]), torch.tensor([1, 2]))
    assert not same_bits(torch.tensor([1, 2]), torch.tensor([1, 3]))
    bf = torch.tensor([1.5], dtype=torch.bfloat16)
    assert not same_bits(bf, bf + 1)


def test_modified_inputs_lists_changed_tensors_only():
    inputs = [torch.randn(3), 4, torch.randn(2), torch.randn(5)]
    pristine = digest.pristine_copy(inputs)
    inputs[2].add_(1)
    inputs[3].resize_(6)
    assert modified_inputs(pristine, inputs) == [2, 3]
