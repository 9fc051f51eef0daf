"""Outputs that share memory with inputs (aliasing.py): the finder itself, the `run`
and `reference` replies that carry it, and native outputs, which the harness
allocates and no candidate can point at an input."""
import shutil
import subprocess
from pathlib import Path

import numpy
import pytest
import torch

from conftest import write_file
from kvault_worker import native
from kvault_worker.aliasing import output_aliases
from kvault_worker.device import Device


def paths(output, inputs):
    return [(a["output"], a["input"]) for a in output_aliases(output, inputs)]


@pytest.mark.parametrize("view", [
    lambda x: x,
    lambda x: x.t(),
    lambda x: x.transpose(0, 1),
    lambda x: x.view(-1),
    lambda x: x.reshape(4, 6),
    lambda x: x[1:3],
    lambda x: x.narrow(1, 2, 3),
    lambda x: x[:, -1],
    lambda x: x.as_strided((4,), (7,)),
    lambda x: x.as_strided((2, 2), (1, 1), 20),  # overlapping, far into the storage
    lambda x: x.expand(2, 4, 6),
    lambda x: x.detach(),
    lambda x: torch.from_numpy(x.numpy()),  # another storage object over the same memory
    lambda x: x.view(torch.int32),
])
def test_every_kind_of_view_of_an_input_is_found(view):
    x = torch.randn(4, 6)
    assert paths(view(x), [x]) == [("output", 0)]


def test_a_view_of_part_of_a_storage_the_input_does_not_cover_is_found():
    base = torch.randn(100)
    x = base[:10]  # an input that is itself a view: the storage is what counts
    assert paths(base[50:60], [x]) == [("output", 0)]


@pytest.mark.parametrize("computed", [
    lambda x: x.clone(),
    lambda x: x.t().contiguous(),
    lambda x: x + 0,
    lambda x: torch.empty_like(x),
    lambda x: torch.from_numpy(numpy.array(x.numpy())),
])
def test_computed_outputs_alias_nothing(computed):
    x = torch.randn(4, 6)
    assert paths(computed(x), [x]) == []


def test_nested_outputs_are_named_as_compare_names_them():
    x, y = torch.randn(3, 3), torch.randn(5)
    out = (x.clone(), [y[1:], {"h": x.t(), "c": 3}], x)
    assert paths(out, [x, 2.5, y]) == [("output[1][0]", 2), ("output[1][1]['h']", 0), ("output[2]", 0)]


def test_one_output_over_two_inputs_names_both():
    base = torch.randn(8)
    a, b = base[:4], base[4:]
    assert paths(base, [a, b]) == [("output", 0), ("output", 1)]


def test_non_tensors_and_empty_tensors_alias_nothing():
    x = torch.randn(3)
    assert paths([None, 3, "s", 1.5], [x]) == []
    empty = torch.empty(0)
    assert paths(empty, [empty]) == []


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_views_of_device_inputs_are_found_and_copies_are_not():
    import torch.utils.dlpack as dlpack
    x = torch.randn(64, 48, device="cuda")
    for view in (x.t(), x[3:9], x.view(-1), x.as_strided((48,), (49,)),
                 dlpack.from_dlpack(dlpack.to_dlpack(x)).t()):
        assert paths(view, [x]) == [("output", 0)]
    for copy in (x.t().contiguous(), x.clone(), x.cpu(), torch.empty_like(x)):
        assert paths(copy, [x]) == []
    host = torch.randn(64, 48)
    assert paths(x, [host]) == []  # another device: never the same memory


RELU_TASK = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return %s
def get_inputs():
    return [torch.randn(6, 4)]
"""


def candidate(expression):
    return ("import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n"
            "    def forward(self, x):\n        return %s\n" % expression)


@pytest.mark.parametrize("expression, aliased", [
    ("x.t()", [{"output": "output", "input": 0}]),
    ("(x.t().contiguous(), x[1:])", [{"output": "output[1]", "input": 0}]),
    ("x.t().contiguous()", []),
])
def test_run_and_reference_replies_report_aliased_outputs(shared_worker, tmp_path, expression, aliased):
    task = write_file(tmp_path, "task.py", RELU_TASK % expression)
    cand = write_file(tmp_path, "cand.py", candidate(expression))
    assert shared_worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})["ok"]
    ran = shared_worker.call("run", case=0, seed=1, out=str(tmp_path / "c.kvt"),
                             repeat_out=str(tmp_path / "r.kvt"))
    assert ran["ok"], ran
    assert ran["output_aliases"] == aliased
    ref = shared_worker.call("reference", task=task, case=0, seed=1, out=str(tmp_path / "ref.kvt"))
    assert ref["ok"], ref
    assert ref["output_aliases"] == aliased


def test_a_view_returned_only_by_the_repeated_call_is_reported(shared_worker, tmp_path):
    task = write_file(tmp_path, "task.py", RELU_TASK % "x.t().contiguous()")
    cand = write_file(tmp_path, "cand.py", """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    calls = 0
    def forward(self, x):
        ModelNew.calls += 1
        return x.t() if ModelNew.calls == 3 else x.t().contiguous()
""")
    assert shared_worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})["ok"]
    ran = shared_worker.call("run", case=0, seed=1, out=str(tmp_path / "c.kvt"),
                             repeat_out=str(tmp_path / "r.kvt"))
    assert ran["ok"] and ran["output_aliases"] == [{"output": "output", "input": 0}], ran


# A native candidate cannot return memory of its own choosing: it is handed output
# descriptors, and pointing one at an input changes nothing the harness returns.
RETARGET = r"""
#include <kvault/native.h>
extern "C" int kvault_forward(const kv_tensor* in, int ni, const kv_scalar* sc, int ns,
                              kv_tensor* out, int no, void* stream) {
  for (int k = 0; k < no && k < ni; ++k) out[k].data = in[k].data;
  return 0;
}
"""


def test_native_outputs_are_the_harness_own_even_when_retargeted(tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    src, so = tmp_path / "retarget.cpp", tmp_path / "retarget.so"
    src.write_text(RETARGET)
    include = Path(__file__).resolve().parents[2] / "include"
    subprocess.run(["g++", "-std=c++17", "-fPIC", "-shared", "-I", str(include), str(src), "-o", str(so)],
                   check=True)
    x = torch.randn(4, 4)
    layout = native.OutputLayout("tensor", [(torch.float32, [4, 4])])
    out = native.NativeLibrary(str(so)).call((x,), layout, Device("cpu", 0), fill=True)
    assert output_aliases(out, [x]) == []
    assert torch.isnan(out).all()  # still the harness's garbage, never the input's values
