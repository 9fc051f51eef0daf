"""Input digests and the bitwise, NaN-aware modification check."""
import pytest
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


# Bounded memory: large tensors are read in chunks of digest.CHUNK elements.

def _spy_sums(monkeypatch):
    """Records the element count and dtype of every torch.sum call."""
    seen, real = [], torch.sum

    def spy(t, *args, **kwargs):
        seen.append((t.numel(), t.dtype))
        return real(t, *args, **kwargs)
    monkeypatch.setattr(torch, "sum", spy)
    return seen


def test_chunked_sum_is_a_float64_sum_of_bounded_chunks(monkeypatch):
    monkeypatch.setattr(digest, "CHUNK", 1000)
    x = torch.randn(4500, dtype=torch.float32) * 1e3 + 7
    seen = _spy_sums(monkeypatch)
    total = digest._float64_sum(x)
    assert seen == [(1000, torch.float64)] * 4 + [(500, torch.float64)]
    expected = x.double().sum().item()
    assert abs(total - expected) <= 1e-12 * abs(expected)
    assert total == digest._float64_sum(x.clone()) == digest._float64_sum(x)  # bit for bit
    ints = torch.arange(-3000, 4000, dtype=torch.int64)
    assert digest._float64_sum(ints) == float(ints.sum().item())


def test_strided_tensors_give_the_contiguous_digest_without_a_copy(monkeypatch):
    monkeypatch.setattr(digest, "CHUNK", 37)
    monkeypatch.setattr(digest, "FULL_LIMIT", 256)
    monkeypatch.setattr(digest, "SAMPLE_BYTES", 48)
    base = torch.randn(9, 11, 13)
    strided = [base.transpose(0, 2), base[:, 2:9, ::3], torch.randn(50, 1).expand(50, 40),
               base.permute(1, 2, 0)[3]]
    for t in strided:
        assert not t.is_contiguous()
        assert digest._float64_sum(t) == digest._float64_sum(t.contiguous())
        assert input_digest([t]) == input_digest([t.contiguous()])
        for size in (1, 37, 500, 10_000):
            pieces = [p for chunk in digest.flat_chunks((t,), size) for (p,) in chunk]
            assert all(p._is_view() for p in pieces)
            assert torch.equal(torch.cat([p.reshape(-1) for p in pieces]), t.reshape(-1))
    changed = strided[1].contiguous()
    changed[8, 6, 4] += 1.0
    assert input_digest([changed]) != input_digest([strided[1]])


def test_same_bits_reads_chunks(monkeypatch):
    monkeypatch.setattr(digest, "CHUNK", 16)
    a = torch.randn(10, 12).t()
    a[3, 5] = float("nan")
    assert same_bits(a, a.contiguous())
    b = a.contiguous()
    b.view(torch.int32)[3, 5] = 0x7FC00001  # another NaN payload: unchanged
    assert same_bits(a, b)
    b[11, 9] = -b[11, 9]  # the last chunk
    assert not same_bits(a, b)
    assert same_bits(torch.arange(100), torch.arange(100)) and not same_bits(torch.arange(100), torch.arange(1, 101))


def _raising(error):
    def fail(*args, **kwargs):
        raise error
    return fail


def test_running_out_of_memory_is_not_a_digest(monkeypatch):
    from kvault_worker.errors import INTERNAL, OOM, WorkerError
    monkeypatch.setattr(digest, "FULL_LIMIT", 1024)
    x = torch.randn(4096)
    for error in (torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB"),
                  RuntimeError("CUDA error: out of memory")):
        monkeypatch.setattr(torch, "sum", _raising(error))
        with pytest.raises(RuntimeError, match="out of memory"):
            input_digest([x])
        with pytest.raises(WorkerError) as reported:
            digest.reported_input_digest([x])
        assert reported.value.kind == OOM and "out of memory" in reported.value.message
    monkeypatch.setattr(torch, "sum", _raising(RuntimeError("CUDA error: misaligned address")))
    with pytest.raises(WorkerError) as reported:
        digest.reported_input_digest([x])
    assert reported.value.kind == INTERNAL


def test_dtypes_without_float64_values_have_no_sum(monkeypatch):
    monkeypatch.setattr(digest, "FULL_LIMIT", 64)
    q = torch.quantize_per_tensor(torch.randn(1000), 0.1, 0, torch.qint8)
    assert digest._float64_sum(q) is None
    assert input_digest([q]) == input_digest([q.clone()])
    assert digest._float64_sum(torch.ones(100, dtype=torch.bool)) == 100.0
    z = torch.complex(torch.ones(100), torch.full((100,), 2.0))
    assert digest._float64_sum(z) == 300.0
