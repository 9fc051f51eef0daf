"""The custom-kernel policy (op_policy.py, docs/adversarial.md "Policy"): operators
seen on every thread and whatever dispatch keys are excluded, the policy the
engine asks for in `load`, and the names of a candidate's own kernels."""
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch

from conftest import write_file
from kvault_worker import op_policy

WORKER_ROOT = str(Path(__file__).resolve().parents[1])


def observed(body):
    with op_policy.ProcessOperators() as ops:
        body()
    return ops


def test_allocation_copies_and_views_are_allowed_with_their_own_calls():
    a = torch.randn(4, 3)
    ops = observed(lambda: (torch.zeros(4, 2), a.t().contiguous().view(-1), a.to(torch.float64)))
    assert ops.forbidden() == []
    assert "aten::contiguous" in ops.outermost() or "aten::clone" in ops.outermost()
    assert not ops.switched_off


def test_computing_operators_are_named_once_in_order():
    a, b = torch.randn(4, 3), torch.randn(3, 2)
    ops = observed(lambda: (torch.matmul(a, b), torch.relu(a), torch.relu(a)))
    assert ops.forbidden()[-1] == "relu"
    assert ops.forbidden().count("relu") == 1
    assert ops.forbidden()[0] in ("matmul", "mm")


def test_operators_on_another_python_thread_are_seen():
    a = torch.randn(8, 8)

    def body():
        t = threading.Thread(target=torch.mm, args=(a, a))
        t.start()
        t.join()
    assert observed(body).forbidden() == ["mm"]


def test_operators_with_the_python_dispatch_key_excluded_are_seen():
    a = torch.randn(8)

    def body():
        guard = torch._C._DisableTorchDispatch()
        torch.sigmoid(a)
        del guard
    assert observed(body).forbidden() == ["sigmoid"]
    # The thread-local dispatch mode is blind to the same call.
    with op_policy.OperatorTrace() as trace:
        guard = torch._C._DisableTorchDispatch()
        torch.sigmoid(a)
        del guard
    assert trace.forbidden() == []


def test_a_computing_operator_beneath_an_allowed_one_is_seen():
    from torch.utils._python_dispatch import TorchDispatchMode
    a = torch.randn(4, 4)

    class CloneIsMatmul(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.clone.default:
                return torch.mm(a, a)
            return func(*args, **(kwargs or {}))

    def body():
        with CloneIsMatmul():
            a.clone()
    ops = observed(body)
    assert "aten::clone" in ops.outermost() and "aten::mm" not in ops.outermost()
    assert ops.forbidden() == ["mm"]


def test_only_the_outermost_of_a_nest_of_computing_operators_is_named():
    a = torch.randn(4, 3)
    assert observed(lambda: torch.matmul(a, a.t())).forbidden() == ["matmul"]


def test_a_label_named_like_an_allowed_operator_hides_nothing():
    a = torch.randn(4, 4)

    def body():
        with torch.autograd.profiler.record_function("aten::empty"):
            torch.mm(a, a)
    assert observed(body).forbidden() == ["mm"]


def test_the_observer_switched_off_is_noticed():
    disable = op_policy._OBSERVER[2]
    ops = observed(disable)
    assert ops.switched_off


def test_enforcer_any_calls_through_and_custom_kernel_raises():
    a = torch.randn(4)
    assert torch.equal(op_policy.Enforcer("any").call(lambda: torch.relu(a)), torch.relu(a))
    with pytest.raises(op_policy.Violation, match="relu"):
        op_policy.Enforcer("custom_kernel").call(lambda: torch.relu(a))
    out = op_policy.Enforcer("custom_kernel").call(lambda: torch.empty(3).fill_(1.0))
    assert out.tolist() == [1.0, 1.0, 1.0]


def test_resolve_takes_the_task_policy_for_task_and_none():
    assert op_policy.resolve(None, "any") == "any"
    assert op_policy.resolve("task", "custom_kernel") == "custom_kernel"
    assert op_policy.resolve("custom_kernel", "any") == "custom_kernel"
    assert op_policy.resolve("any", "custom_kernel") == "any"
    with pytest.raises(ValueError):
        op_policy.resolve("kernels", "any")


def test_tripwires_record_private_switches_and_keep_observing():
    # In a fresh interpreter: the tripwires stay for the life of the process.
    script = textwrap.dedent("""
        import torch
        from kvault_worker import op_policy
        op_policy.install_tripwires()
        a = torch.randn(4)
        def body():
            torch._C._autograd._enable_record_function(False)
            torch.relu(a)
        try:
            op_policy.Enforcer("custom_kernel").call(body)
        except op_policy.Violation as e:
            print("violation:", e)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=WORKER_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert "violation:" in done.stdout, done.stderr
    assert "_enable_record_function" in done.stdout


def test_own_kernel_names_from_cuda_and_triton_sources():
    source = """
    template <typename T>
    __global__ void __launch_bounds__(256) relu_kernel(const T* x, T* y, int n) {}
    extern "C" __global__ void row_sum(float* y) {}
    @triton.autotune(configs=[], key=["n"])
    @triton.jit
    def add_kernel(x_ptr, n):
        pass
    def helper():
        pass
    """
    assert op_policy.own_kernel_names(source) == {"relu_kernel", "row_sum", "add_kernel"}


@pytest.mark.parametrize("launched, own", [
    ("void relu_kernel<float>(float const*, float*, int)", True),
    ("void (anonymous namespace)::relu_kernel(float const*, float*, int)", True),
    ("relu_kernel_0d1d2d", True),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)", False),
    ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32", False),
])
def test_launched_kernels_are_matched_by_function_name(launched, own):
    assert op_policy.is_own_kernel(launched, {"relu_kernel"}) is own


def test_a_name_declared_like_pytorchs_kernel_does_not_make_it_its_own():
    launched = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)"
    assert not op_policy.is_own_kernel(launched, {"vectorized_elementwise_kernel"})
    assert op_policy.is_own_kernel("void mine::vectorized_elementwise_kernel<4>(int)",
                                   {"vectorized_elementwise_kernel"})


THREADED_RELU = """
import threading
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        out = []
        t = threading.Thread(target=lambda: out.append(torch.relu(x)))
        t.start()
        t.join()
        return out[0]
"""

RELU_TASK = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(64)]
"""


@pytest.mark.parametrize("policy, kind", [("custom_kernel", "policy_violation"), ("any", None),
                                          ("task", None), (None, None)])
def test_the_policy_of_load_applies_to_every_thread(start_worker, tmp_path, policy, kind):
    worker = start_worker()
    task = write_file(tmp_path, "task.py", RELU_TASK)
    cand = write_file(tmp_path, "cand.py", THREADED_RELU)
    request = {"task": task, "candidate": {"format": "kernelbench", "path": cand}}
    if policy is not None:
        request["policy"] = policy
    assert worker.call("load", **request)["ok"]
    response = worker.call("run", case=0, seed=1, out=str(tmp_path / "out.kvt"))
    if kind is None:
        assert response["ok"], response
    else:
        assert not response["ok"] and response["kind"] == kind, response
        assert "relu" in response["message"]


def test_an_unknown_policy_is_a_bad_request(worker, tmp_path):
    task = write_file(tmp_path, "task.py", RELU_TASK)
    cand = write_file(tmp_path, "cand.py", THREADED_RELU)
    response = worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand},
                           policy="kernels")
    assert not response["ok"] and response["kind"] == "bad_request"


GPU = torch.cuda.is_available()
try:
    import triton
    import triton.language as tl

    @triton.jit
    def policy_scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)
except ImportError:  # no Triton: the GPU tests below are skipped
    triton = None

gpu_only = pytest.mark.skipif(not GPU or triton is None, reason="needs a CUDA or ROCm GPU and Triton")


def _gpu_enforcer():
    from kvault_worker.device import Device
    return op_policy.Enforcer("custom_kernel", Device("hip" if torch.version.hip else "cuda", 0),
                              op_policy.own_kernel_names(open(__file__).read()))


@gpu_only
def test_a_kernel_of_its_own_launched_on_another_thread_is_seen():
    x = torch.randn(4096, device="cuda")
    y = torch.empty_like(x)

    def body():
        t = threading.Thread(target=lambda: policy_scale_kernel[(4,)](x, y, x.numel(), BLOCK=1024))
        t.start()
        t.join()
        return y
    enforcer = _gpu_enforcer()
    assert torch.equal(enforcer.call(body, kernels=True), x * 2)
    assert enforcer.launched == {"policy_scale_kernel"}


@gpu_only
def test_only_kernels_of_others_is_a_violation():
    x = torch.randn(4096, device="cuda")
    with pytest.raises(op_policy.Violation, match="no device kernel of its own"):
        _gpu_enforcer().call(lambda: x.clone(), kernels=True)  # PyTorch's copy kernel only
