"""Error mapping helpers: one-line messages, bounded tracebacks, OOM detection."""
import pytest
import torch

from kvault_worker import errors
from kvault_worker.errors import WorkerError, attributed


def test_one_line_collapses_whitespace_and_bounds_length():
    assert errors.one_line("a\n  b\r\n\tc ") == "a b c"
    long = errors.one_line("x" * 5000)
    assert len(long) == errors.MESSAGE_LIMIT and long.endswith("...")


def test_bound_traceback_keeps_head_and_tail():
    text = "HEAD" + "é" * 10000 + "TAIL"
    bounded = errors.bound_traceback(text)
    assert len(bounded.encode()) <= errors.TRACEBACK_LIMIT
    assert bounded.startswith("HEAD") and bounded.endswith("TAIL") and "omitted" in bounded
    assert errors.bound_traceback("short") == "short"


@pytest.mark.parametrize("exc, kind", [
    (MemoryError(), "oom"),
    (RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"), "oom"),
    (RuntimeError("HIP out of memory"), "oom"),
    (RuntimeError("[enforce fail at alloc_cpu.cpp:75] DefaultCPUAllocator: can't allocate memory: you tried to allocate 9007199254740992 bytes"), "oom"),
    (RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 8 bytes"), "oom"),
    (RuntimeError("CUDA error: an illegal memory access was encountered"), "runtime_error"),
    (SystemExit(2), "runtime_error"),
    (ValueError("x"), "runtime_error"),
])
def test_attributed_maps_exceptions(exc, kind):
    with pytest.raises(WorkerError) as caught:
        with attributed("runtime_error", "the candidate's forward raised"):
            raise exc
    assert caught.value.kind == kind
    assert caught.value.message.startswith("the candidate's forward raised: " + type(exc).__name__)
    assert "Traceback" in caught.value.to_response()["traceback"]


def test_torch_oom_type_is_oom():
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is None:
        pytest.skip("this PyTorch has no torch.cuda.OutOfMemoryError")
    assert errors.is_out_of_memory(oom_type("no memory left"))


def test_attributed_keeps_inner_errors_and_lets_interrupts_through():
    with pytest.raises(WorkerError) as caught:
        with attributed("runtime_error", "outer"):
            with attributed("load_error", "inner"):
                raise KeyError("k")
    assert caught.value.kind == "load_error" and caught.value.message.startswith("inner")
    with pytest.raises(KeyboardInterrupt):
        with attributed("runtime_error", "outer"):
            raise KeyboardInterrupt()
