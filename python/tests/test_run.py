"""reference / load / run on the CPU backend: round trips through tensor files,
seeding, input-modification detection and error mapping."""
import pytest
import torch

from conftest import write_file
from kvault_worker import tensorfile

LINEAR = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out)
    def forward(self, x):
        return self.lin(x)
def get_inputs():
    return [torch.randn(5, 16)]
def get_init_inputs():
    return [16, 4]
"""

# Same layers as Model, so identical seeding gives identical weights.
LINEAR_CANDIDATE = """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out)
    def forward(self, x):
        return torch.addmm(self.lin.bias, x, self.lin.weight.t())
"""

RELU = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x, y):
        return torch.relu(x) + y
def get_inputs():
    return [torch.randn(64), torch.randn(64)]
"""


def candidate(body, imports="import torch, torch.nn as nn, sys, os\n"):
    return imports + "class ModelNew(nn.Module):\n" + body


def load(worker, tmp_path, task_source, candidate_source):
    task = write_file(tmp_path, "task.py", task_source)
    cand = write_file(tmp_path, "cand.py", candidate_source)
    return worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand}), task


def reference(worker, task, tmp_path, seed=1, case=0):
    out = str(tmp_path / ("ref_%d_%d.kvt" % (case, seed)))
    response = worker.call("reference", task=task, case=case, seed=seed, out=out)
    return response, out


def run(worker, tmp_path, seed=1, case=0):
    out = str(tmp_path / ("cand_%d_%d.kvt" % (case, seed)))
    return worker.call("run", case=case, seed=seed, out=out), out


def test_reference_and_candidate_round_trip(shared_worker, tmp_path):
    loaded, task = load(shared_worker, tmp_path, LINEAR, LINEAR_CANDIDATE)
    assert loaded == {"id": loaded["id"], "ok": True}
    for seed in (1, 2, 3):
        ref, ref_path = reference(shared_worker, task, tmp_path, seed)
        cand, cand_path = run(shared_worker, tmp_path, seed)
        assert ref["ok"] and cand["ok"], (ref, cand)
        assert cand["input_digest"] == ref["input_digest"]
        assert cand["inputs_modified"] == [] and cand["seconds"] >= 0
        ref_out, header = tensorfile.read(ref_path)
        cand_out, _ = tensorfile.read(cand_path)
        assert header["tensors"][0]["shape"] == [5, 4]
        torch.testing.assert_close(cand_out, ref_out, rtol=1e-5, atol=1e-5)
    first, _ = reference(shared_worker, task, tmp_path, 1)
    second, _ = reference(shared_worker, task, tmp_path, 2)
    assert first["input_digest"] != second["input_digest"]


def test_reference_matches_an_independent_computation(shared_worker, tmp_path):
    """The documented seeding order, replayed in this process, gives the same output."""
    from kvault_worker import fresh_module
    from kvault_worker.seeding import seed

    random_init = LINEAR.replace("    return [16, 4]", "    torch.rand(3)\n    return [16, 4]").replace(
        "return self.lin(x)", "return self.lin(x) * torch.rand(1)")
    task = write_file(tmp_path, "task.py", random_init)
    response, out = reference(shared_worker, task, tmp_path, seed=7)
    assert response["ok"], response
    module = fresh_module.exec_file(task, "test")
    seed(7)
    init = module.get_init_inputs()
    seed(7)
    model = module.Model(*init)
    seed(7)
    inputs = module.get_inputs()
    seed(7)
    with torch.no_grad():
        expected = model(*inputs)
    fresh_module.release(module)
    value, _ = tensorfile.read(out)
    assert torch.equal(value, expected)


def test_wrong_candidate_gives_different_output(shared_worker, tmp_path):
    _, task = load(shared_worker, tmp_path, RELU, candidate(
        "    def forward(self, x, y):\n        return torch.relu(x) - y\n"))
    _, ref_path = reference(shared_worker, task, tmp_path)
    response, cand_path = run(shared_worker, tmp_path)
    assert response["ok"]
    assert not torch.allclose(tensorfile.read(ref_path)[0], tensorfile.read(cand_path)[0])


def test_input_modification_is_reported(shared_worker, tmp_path):
    load(shared_worker, tmp_path, RELU, candidate(
        "    def forward(self, x, y):\n        y.mul_(1.0)\n        x.relu_()\n        return x + y\n"))
    response, _ = run(shared_worker, tmp_path)
    assert response["ok"] and response["inputs_modified"] == [0]


def test_cases_with_own_init_inputs(shared_worker, tmp_path):
    task_source = LINEAR + """
def get_cases():
    return [{"name": "default", "get_inputs": get_inputs},
            {"name": "wide", "get_inputs": lambda: [torch.randn(2, 32)], "get_init_inputs": lambda: [32, 6]}]
"""
    _, task = load(shared_worker, tmp_path, task_source, LINEAR_CANDIDATE)
    ref, ref_path = reference(shared_worker, task, tmp_path, case=1)
    cand, cand_path = run(shared_worker, tmp_path, case=1)
    assert ref["ok"] and cand["ok"] and ref["input_digest"] == cand["input_digest"]
    assert tensorfile.read(cand_path)[0].shape == (2, 6)
    out_of_range = shared_worker.call("run", case=2, seed=1, out=str(tmp_path / "x.kvt"))
    assert out_of_range["kind"] == "bad_request"


def test_inputs_not_a_function_of_the_seed_give_different_digests(shared_worker, tmp_path):
    task_source = RELU.replace("return [torch.randn(64), torch.randn(64)]",
                               "import os\n    return [torch.tensor(list(os.urandom(8)), dtype=torch.uint8), torch.zeros(8)]")
    _, task = load(shared_worker, tmp_path, task_source, candidate(
        "    def forward(self, x, y):\n        return x\n"))
    ref, _ = reference(shared_worker, task, tmp_path)
    cand, _ = run(shared_worker, tmp_path)
    assert ref["ok"] and cand["ok"]
    assert ref["input_digest"] != cand["input_digest"]


@pytest.mark.parametrize("body, kind, text", [
    ("    def forward(self, x, y):\n        raise ValueError('bad kernel')\n", "runtime_error", "ValueError: bad kernel"),
    ("    def forward(self, x, y):\n        sys.exit(3)\n", "runtime_error", "SystemExit"),
    ("    def forward(self, x, y):\n        raise MemoryError()\n", "oom", "MemoryError"),
    ("    def forward(self, x, y):\n        raise RuntimeError('CUDA out of memory. Tried to allocate 2 GiB')\n",
     "oom", "out of memory"),
    ("    def __init__(self):\n        super().__init__()\n        raise TypeError('ctor')\n"
     "    def forward(self, x, y):\n        return x\n", "load_error", "constructing ModelNew"),
    ("    def forward(self, x, y):\n        return torch.zeros(2, 2) @ torch.zeros(3, 3)\n", "runtime_error",
     "RuntimeError"),
])
def test_candidate_failures_are_mapped(shared_worker, tmp_path, body, kind, text):
    loaded, _ = load(shared_worker, tmp_path, RELU, candidate(body))
    assert loaded["ok"], loaded
    response, out = run(shared_worker, tmp_path)
    assert response["ok"] is False and response["kind"] == kind, response
    assert text in response["message"] and "\n" not in response["message"]
    assert 0 < len(response["traceback"].encode()) <= 8192
    assert not (tmp_path / "cand_0_1.kvt").exists()
    assert shared_worker.call("unload")["ok"]  # the worker is still in step


def test_huge_errors_are_bounded(shared_worker, tmp_path):
    load(shared_worker, tmp_path, RELU, candidate(
        "    def forward(self, x, y):\n        raise ValueError('start\\n' + 'x' * 100000 + '\\nend')\n"))
    response, _ = run(shared_worker, tmp_path)
    assert response["kind"] == "runtime_error" and "ValueError: start x" in response["message"]
    assert len(response["message"]) <= 2000 and "\n" not in response["message"]
    traceback = response["traceback"]
    assert len(traceback.encode()) <= 8192 and "omitted" in traceback
    assert traceback.startswith("Traceback") and traceback.rstrip().endswith("end")


@pytest.mark.parametrize("source, text", [
    ("import torch\nclass ModelNew(:\n", "SyntaxError"),
    ("import torch\n", "no class ModelNew"),
    ("import torch\nModelNew = 5\n", "must be a class"),
    ("import torch\nraise SystemExit(1)\n", "SystemExit"),
])
def test_candidate_load_errors(shared_worker, tmp_path, source, text):
    response, _ = load(shared_worker, tmp_path, RELU, source)
    assert response["ok"] is False and response["kind"] == "load_error", response
    assert text in response["message"]
    assert run(shared_worker, tmp_path)[0]["kind"] == "bad_request"  # nothing is loaded now


def test_load_of_a_broken_task_is_task_error(shared_worker, tmp_path):
    response, _ = load(shared_worker, tmp_path, "import torch\n", candidate("    pass\n"))
    assert response["kind"] == "task_error"


def test_malformed_candidate_descriptions(shared_worker, tmp_path):
    task = write_file(tmp_path, "task.py", RELU)
    for cand in ({"format": "cuda", "path": "/x.cu"}, {"format": "kernelbench", "path": "rel.py"},
                 {"format": "extension", "path": "/x.so", "module": "not-a-name"}, "text"):
        response = shared_worker.call("load", task=task, candidate=cand)
        assert response["kind"] == "bad_request", (cand, response)


def test_reference_failures_are_task_errors(shared_worker, tmp_path):
    broken = RELU.replace("return torch.relu(x) + y", "raise RuntimeError('reference broke')")
    task = write_file(tmp_path, "broken.py", broken)
    response = shared_worker.call("reference", task=task, case=0, seed=1, out=str(tmp_path / "r.kvt"))
    assert response["kind"] == "task_error" and "reference broke" in response["message"]
    bad_inputs = RELU.replace("return [torch.randn(64), torch.randn(64)]", "return {'x': 1}")
    task = write_file(tmp_path, "inputs.py", bad_inputs)
    response = shared_worker.call("reference", task=task, case=0, seed=1, out=str(tmp_path / "r.kvt"))
    assert response["kind"] == "task_error" and "get_inputs must return a list" in response["message"]


def test_deferred_writes_wait_for_write_outputs(shared_worker, tmp_path):
    load(shared_worker, tmp_path, RELU, candidate(
        "    def forward(self, x, y):\n        return torch.relu(x) + y\n"))
    out, repeat_out = str(tmp_path / "first.kvt"), str(tmp_path / "repeat.kvt")
    ran = shared_worker.call("run", case=0, seed=1, out=out, repeat_out=repeat_out, defer_writes=True)
    assert ran["ok"] and ran["deferred"] is True, ran
    assert not (tmp_path / "first.kvt").exists() and not (tmp_path / "repeat.kvt").exists()
    written = shared_worker.call("write_outputs")
    assert written["ok"] and written["written"] == 2, written
    ref, ref_path = reference(shared_worker, write_file(tmp_path, "task.py", RELU), tmp_path)
    for path in (out, repeat_out):
        torch.testing.assert_close(tensorfile.read(path)[0], tensorfile.read(ref_path)[0])
    again = shared_worker.call("write_outputs")  # nothing held back any more
    assert again["kind"] == "bad_request" and "defer_writes" in again["message"], again
    plain = shared_worker.call("run", case=0, seed=2, out=str(tmp_path / "plain.kvt"))
    assert "deferred" not in plain and (tmp_path / "plain.kvt").exists()
    bad = shared_worker.call("run", case=0, seed=1, out=out, defer_writes="yes")
    assert bad["kind"] == "bad_request", bad


def test_unwritable_output_is_internal(shared_worker, tmp_path):
    task = write_file(tmp_path, "task.py", RELU)
    response = shared_worker.call("reference", task=task, case=0, seed=1,
                                  out=str(tmp_path / "missing_dir" / "r.kvt"))
    assert response["kind"] == "internal", response


def test_candidate_output_structures_are_written(shared_worker, tmp_path):
    load(shared_worker, tmp_path, RELU, candidate(
        "    def forward(self, x, y):\n"
        "        return {'sum': x + y, 'parts': (x[:3], [1, 2.5, None]), 'name': 'ok'}\n"))
    response, out = run(shared_worker, tmp_path)
    assert response["ok"], response
    value, _ = tensorfile.read(out)
    assert set(value) == {"sum", "parts", "name"} and value["name"] == "ok"
    assert value["parts"][1] == [1, 2.5, None] and value["parts"][0].shape == (3,)


def test_each_stage_is_seeded(shared_worker, tmp_path):
    """A candidate whose constructor draws more random numbers than Model's still
    gets the same inputs and the same random stream in forward."""
    task_source = RELU.replace("return torch.relu(x) + y", "return torch.relu(x) + y * torch.rand_like(y)")
    _, task = load(shared_worker, tmp_path, task_source, candidate(
        "    def __init__(self):\n        super().__init__()\n        self.noise = torch.randn(1000)\n"
        "    def forward(self, x, y):\n        return torch.relu(x) + y * torch.rand_like(y)\n"))
    ref, ref_path = reference(shared_worker, task, tmp_path, seed=4)
    cand, cand_path = run(shared_worker, tmp_path, seed=4)
    assert ref["input_digest"] == cand["input_digest"]
    assert torch.equal(tensorfile.read(ref_path)[0], tensorfile.read(cand_path)[0])


# get_inputs makes the worker's digest of its (large, from FULL_LIMIT) inputs run out
# of memory, as a float64 sum beside other lanes on a full device can.
DIGEST_OUT_OF_MEMORY = RELU.replace("    return [torch.randn(64), torch.randn(64)]", """\
    import kvault_worker.digest as digest
    def no_memory(*args, **kwargs):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB")
    digest.FULL_LIMIT, torch.sum = 16, no_memory
    return [torch.randn(64), torch.randn(64)]""")


def test_a_digest_out_of_memory_is_reported_as_such(start_worker, tmp_path):
    """Never as another digest (which the engine would call a forged reply)."""
    ref_worker, cand_worker = start_worker(), start_worker()
    task = write_file(tmp_path, "task.py", DIGEST_OUT_OF_MEMORY)
    ref, _ = reference(ref_worker, task, tmp_path)
    assert ref["ok"] is False and ref["kind"] == "task_error" and "out of memory" in ref["message"], ref
    loaded, _ = load(cand_worker, tmp_path, DIGEST_OUT_OF_MEMORY, candidate(
        "    def forward(self, x, y):\n        return x + y\n"))
    assert loaded["ok"], loaded
    cand, _ = run(cand_worker, tmp_path)
    assert cand["ok"] is False and cand["kind"] == "oom" and "digest" in cand["message"], cand
