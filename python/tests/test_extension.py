"""Extension-format candidates: loading by module name, twin calling, the
unsupported path. Fast tests use tiny C extensions whose forward returns its
arguments; the slow ones build a real PyTorch extension once per session."""
import pytest
import torch

from conftest import timed_samples, write_file
from kvault_worker import tensorfile

# A twin whose module_fn returns its arguments: the reference output is then
# exactly what an extension receives, weights included.
ECHO_TWIN = """
import torch, torch.nn as nn
def module_fn(x, weight, bias):
    return (x, weight, bias)
class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        lin = nn.Linear(n_in, n_out)
        self.weight, self.bias = lin.weight, lin.bias
    def forward(self, x, fn=module_fn):
        return fn(x, self.weight, self.bias)
def get_inputs():
    return [torch.randn(4, 8)]
def get_init_inputs():
    return [8, 3]
"""

ECHO_PLAIN = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x, y):
        return (x, y)
def get_inputs():
    return [torch.randn(6), torch.randn(2, 3)]
"""

LINEAR_NO_TWIN = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 3)
    def forward(self, x):
        return self.lin(x)
def get_inputs():
    return [torch.randn(4, 8)]
"""

LINEAR_TWIN = ECHO_TWIN.replace("return (x, weight, bias)", "return torch.nn.functional.linear(x, weight, bias)")

RELU = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(33, 7)]
"""

def load_extension(worker, tmp_path, task_source, path, module):
    task = write_file(tmp_path, "task.py", task_source)
    response = worker.call("load", task=task, candidate={"format": "extension", "path": path, "module": module})
    return response, task


def reference_and_run(worker, task, tmp_path, seed=1):
    ref_out, cand_out = str(tmp_path / "ref.kvt"), str(tmp_path / "cand.kvt")
    ref = worker.call("reference", task=task, case=0, seed=seed, out=ref_out)
    cand = worker.call("run", case=0, seed=seed, out=cand_out)
    assert ref["ok"] and cand["ok"], (ref, cand)
    assert ref["input_digest"] == cand["input_digest"]
    return tensorfile.read(ref_out)[0], tensorfile.read(cand_out)[0]


def assert_same(a, b):
    assert type(a) is type(b) and len(a) == len(b)
    for x, y in zip(a, b):
        assert torch.equal(x, y)


def test_twin_passes_the_model_weights(shared_worker, tmp_path, fake_extensions):
    loaded, task = load_extension(shared_worker, tmp_path, ECHO_TWIN, fake_extensions["kv_echo"], "kv_echo")
    assert loaded["ok"], loaded
    ref, cand = reference_and_run(shared_worker, task, tmp_path, seed=2)
    assert_same(ref, cand)
    assert cand[1].shape == (3, 8) and cand[2].shape == (3,)


def test_without_twin_forward_gets_the_inputs(shared_worker, tmp_path, fake_extensions):
    loaded, task = load_extension(shared_worker, tmp_path, ECHO_PLAIN, fake_extensions["kv_echo"], "kv_echo")
    assert loaded["ok"], loaded
    ref, cand = reference_and_run(shared_worker, task, tmp_path)
    assert_same(ref, cand)


def test_parameters_without_twin_follow_the_inputs(shared_worker, tmp_path, fake_extensions):
    # What a functional twin would give: the inputs, then the parameters, then the buffers.
    loaded, _ = load_extension(shared_worker, tmp_path, LINEAR_NO_TWIN, fake_extensions["kv_echo"], "kv_echo")
    assert loaded["ok"], loaded
    response = shared_worker.call("run", case=0, seed=1, out=str(tmp_path / "c.kvt"))
    assert response["ok"], response
    echoed = tensorfile.read(str(tmp_path / "c.kvt"))[0]
    assert [tuple(t.shape) for t in echoed] == [(4, 8), (3, 8), (3,)]


def test_extension_load_errors(shared_worker, tmp_path, fake_extensions):
    cases = [(fake_extensions["kv_noforward"], "kv_noforward", "extension module has no forward"),
             (fake_extensions["kv_echo"], "kv_other_name", "PyInit_kv_other_name"),
             (str(tmp_path / "missing.so"), "missing", "does not load")]
    for path, module, text in cases:
        response, _ = load_extension(shared_worker, tmp_path, RELU, path, module)
        assert response["ok"] is False and response["kind"] == "load_error", response
        assert text in response["message"], response


@pytest.mark.slow
def test_real_extension_with_twin(shared_worker, tmp_path, torch_extension):
    path, module = torch_extension
    loaded, task = load_extension(shared_worker, tmp_path, LINEAR_TWIN, path, module)
    assert loaded["ok"], loaded
    for seed in (1, 2, 3):
        ref, cand = reference_and_run(shared_worker, task, tmp_path, seed)
        assert cand.shape == (4, 3)
        torch.testing.assert_close(cand, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_real_extension_without_twin(shared_worker, tmp_path, torch_extension):
    path, module = torch_extension
    loaded, task = load_extension(shared_worker, tmp_path, RELU, path, module)
    assert loaded["ok"], loaded
    ref, cand = reference_and_run(shared_worker, task, tmp_path)
    assert torch.equal(ref, cand)
    assert shared_worker.call("time_start", side="candidate", case=0, seed=1000, warmup_ms=1, flush=False)["ok"]
    timed = timed_samples(shared_worker, "monotonic_clock", cold=0, warm=3)
    assert timed["ok"] and len(timed["warm_ms"]) == 3
    assert shared_worker.call("time_finish")["ok"]
    # A task with parameters and no twin: forward(x, weight, bias) matches Model's linear.
    loaded, task = load_extension(shared_worker, tmp_path, LINEAR_NO_TWIN, path, module)
    assert loaded["ok"], loaded
    ref, cand = reference_and_run(shared_worker, task, tmp_path)
    torch.testing.assert_close(cand, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_real_extension_runtime_error(shared_worker, tmp_path, torch_extension):
    path, module = torch_extension
    bad_shapes = LINEAR_TWIN.replace("return [torch.randn(4, 8)]", "return [torch.randn(4, 5)]").replace(
        "def forward(self, x, fn=module_fn):\n        return fn(x, self.weight, self.bias)",
        "def forward(self, x, fn=module_fn):\n        return fn(torch.cat([x, x[:, :3]], 1) if fn is module_fn else x,"
        " self.weight, self.bias)")
    loaded, _ = load_extension(shared_worker, tmp_path, bad_shapes, path, module)
    assert loaded["ok"], loaded
    response = shared_worker.call("run", case=0, seed=1, out=str(tmp_path / "c.kvt"))
    assert response["kind"] == "runtime_error", response
