"""Native-format candidates (docs/native-format.md): the ctypes marshalling of
tensors, scalars and None, output allocation and garbage fill, error returns, and
the worker's load/run/time path. The libraries are built here with g++ from small
probe sources (skipped without g++)."""
import math
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from conftest import timed_samples, write_file
from kvault_worker import native, tensorfile
from kvault_worker.device import Device
from kvault_worker.errors import WorkerError

INCLUDE = Path(__file__).resolve().parents[2] / "include"

# MODE_PROBE: output 0 [16, 20] float64 gets one row per input tensor (dtype, ndim,
# numel, data == NULL, shape[8], strides[8]); output 1 [8, 3] float64 one row per
# scalar (kind, i, f); output 2 (0-d float64) the sum of input 0 read through its
# strides as float32; output 3 (0-d int64) num_inputs * 100 + num_scalars * 10 +
# (stream == NULL).
# MODE_FAIL: returns 3 (with kvault_last_error when WITH_MESSAGE).
# MODE_SKIP: writes nothing and returns 0.
PROBE = r"""
#include <kvault/native.h>
#ifdef WITH_MESSAGE
extern "C" const char* kvault_last_error(void) { return "bad tile size"; }
#endif
extern "C" int kvault_forward(const kv_tensor* in, int ni, const kv_scalar* sc, int ns,
                              kv_tensor* out, int no, void* stream) {
#if defined(MODE_FAIL)
  return 3;
#elif defined(MODE_SKIP)
  return 0;
#else
  if (no != 4) return 9;
  double* rows = (double*)out[0].data;
  for (int k = 0; k < ni && k < 16; ++k) {
    double* r = rows + k * 20;
    r[0] = in[k].dtype; r[1] = in[k].ndim; r[2] = (double)in[k].numel; r[3] = in[k].data == 0;
    for (int d = 0; d < 8; ++d) { r[4 + d] = (double)in[k].shape[d]; r[12 + d] = (double)in[k].strides[d]; }
  }
  double* s = (double*)out[1].data;
  for (int k = 0; k < ns && k < 8; ++k) { s[3*k] = sc[k].kind; s[3*k+1] = (double)sc[k].i; s[3*k+2] = sc[k].f; }
  double sum = 0;
  const float* x = (const float*)in[0].data;
  if (in[0].ndim == 2)
    for (int64_t i = 0; i < in[0].shape[0]; ++i)
      for (int64_t j = 0; j < in[0].shape[1]; ++j) sum += x[i * in[0].strides[0] + j * in[0].strides[1]];
  *(double*)out[2].data = sum;
  *(int64_t*)out[3].data = ni * 100 + ns * 10 + (stream == 0);
  return 0;
#endif
}
"""

PROBE_LAYOUT = native.OutputLayout("tuple", [(torch.float64, [16, 20]), (torch.float64, [8, 3]),
                                            (torch.float64, []), (torch.int64, [])])
CPU = Device("cpu", 0)


def _build(tmp_dir, name, defines):
    src = Path(tmp_dir) / (name + ".cpp")
    src.write_text(PROBE)
    so = Path(tmp_dir) / (name + ".so")
    subprocess.run(["g++", "-O1", "-std=c++17", "-fPIC", "-shared", "-I", str(INCLUDE)]
                   + ["-D" + d for d in defines] + [str(src), "-o", str(so)], check=True)
    return str(so)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    d = tmp_path_factory.mktemp("native")
    return {"probe": _build(d, "probe", ["MODE_PROBE"]),
            "fail_msg": _build(d, "fail_msg", ["MODE_FAIL", "WITH_MESSAGE"]),
            "fail": _build(d, "fail", ["MODE_FAIL"]),
            "skip": _build(d, "skip", ["MODE_SKIP"])}


def probe(libs, *args):
    lib = native.NativeLibrary(libs["probe"])
    return lib.call(args, PROBE_LAYOUT, CPU, fill=True)


def test_tensors_carry_dtype_shape_strides_and_data(libs):
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    h = torch.zeros(2, 3, 5, dtype=torch.float16)
    b = torch.ones(7, dtype=torch.bfloat16)
    rows, _, total, counts = probe(libs, x, h, b, torch.zeros((), dtype=torch.int64),
                                   torch.zeros(1, dtype=torch.bool))
    assert rows[0, :4].tolist() == [native.DTYPE_CODES[torch.float32], 2, 12, 0]
    assert rows[0, 4:6].tolist() == [3, 4] and rows[0, 12:14].tolist() == [4, 1]
    assert rows[0, 6:12].abs().sum() == 0 and rows[0, 14:20].abs().sum() == 0  # past ndim: 0
    assert rows[1, :4].tolist() == [3, 3, 30, 0]
    assert rows[1, 4:7].tolist() == [2, 3, 5] and rows[1, 12:15].tolist() == [15, 5, 1]
    assert rows[2, :3].tolist() == [4, 1, 7]
    assert rows[3, :3].tolist() == [8, 0, 1]  # 0-d: ndim 0, numel 1
    assert rows[4, 0] == 10
    assert total.item() == sum(range(12))
    assert counts.item() == 5 * 100 + 0 * 10 + 1  # stream is NULL on the cpu backend


def test_non_contiguous_inputs_arrive_contiguous(libs):
    x = torch.arange(12, dtype=torch.float32).reshape(4, 3).t()  # strides (1, 3)
    rows, _, total, _ = probe(libs, x)
    assert rows[0, 4:6].tolist() == [3, 4] and rows[0, 12:14].tolist() == [4, 1]
    assert total.item() == sum(range(12))


def test_scalars_and_none_in_order(libs):
    x = torch.ones(2, 2)
    rows, scalars, _, counts = probe(libs, x, 3, None, 2.75, True, -5, float("inf"))
    assert counts.item() == 2 * 100 + 5 * 10 + 1
    assert rows[1, :4].tolist() == [native.KV_NONE, 0, 0, 1]  # None: an empty descriptor
    assert scalars[:5].tolist() == [[1, 3, 3.0], [2, 2, 2.75], [3, 1, 1.0], [1, -5, -5.0],
                                    [2, 0, math.inf]]


def test_unsupported_arguments_are_unsupported(libs):
    lib = native.NativeLibrary(libs["probe"])
    for bad in ([1, 2], "text", torch.zeros(2, dtype=torch.complex64), torch.zeros([1] * 9), 2**70):
        with pytest.raises(WorkerError) as e:
            lib.call((torch.ones(2, 2), bad), PROBE_LAYOUT, CPU, fill=True)
        assert e.value.kind == "unsupported", bad


def test_error_returns_are_runtime_errors_with_the_message(libs):
    for name, text in (("fail_msg", "kvault_forward returned 3: bad tile size"),
                       ("fail", "kvault_forward returned 3")):
        with pytest.raises(WorkerError) as e:
            native.NativeLibrary(libs[name]).call((torch.ones(2),), PROBE_LAYOUT, CPU, fill=True)
        assert e.value.kind == "runtime_error" and e.value.message == text


def test_outputs_are_garbage_filled_and_shaped_like_the_layout(libs):
    layout = native.OutputLayout("list", [(torch.float32, [3]), (torch.bfloat16, [2, 2]),
                                          (torch.int32, [2]), (torch.uint8, [1]), (torch.bool, [4])])
    out = native.NativeLibrary(libs["skip"]).call((), layout, CPU, fill=True)
    assert isinstance(out, list) and [tuple(t.shape) for t in out] == [(3,), (2, 2), (2,), (1,), (4,)]
    assert torch.isnan(out[0]).all() and torch.isnan(out[1].float()).all()
    assert out[2].tolist() == [-1515870811] * 2 and out[3].tolist() == [0xA5]
    assert out[4].tolist() == [True, False, True, False]
    single = native.OutputLayout("tensor", [(torch.float64, [2])])
    assert isinstance(native.NativeLibrary(libs["skip"]).call((), single, CPU, fill=True), torch.Tensor)


def test_missing_symbol_and_missing_file_are_load_errors(tmp_path):
    for path in (str(tmp_path / "none.so"), "/usr/lib/x86_64-linux-gnu/libm.so.6"):
        if not Path(path).exists() and "none" not in path:
            continue
        with pytest.raises(WorkerError) as e:
            native.NativeLibrary(path)
        assert e.value.kind == "load_error"


def test_output_layout_from_the_engine():
    layout = native.OutputLayout.from_json(
        {"tree": {"kind": "tuple", "items": [{"kind": "tensor", "index": 1}, {"kind": "tensor", "index": 0}]},
         "tensors": [{"dtype": "float16", "shape": [2]}, {"dtype": "int64", "shape": []}]})
    assert layout.kind == "tuple" and layout.specs == [(torch.int64, []), (torch.float16, [2])]
    for bad in (None, {"tree": {}}, {"tree": {"kind": "tensor", "index": 0}, "tensors": [{"dtype": "x", "shape": [1]}]},
                {"tree": {"kind": "tensor", "index": 3}, "tensors": [{"dtype": "int8", "shape": [1]}]},
                {"tree": {"kind": "tensor", "index": 0}, "tensors": [{"dtype": "int8", "shape": [-1]}]}):
        with pytest.raises(WorkerError) as e:
            native.OutputLayout.from_json(bad)
        assert e.value.kind == "bad_request", bad
    for tree in ({"kind": "int", "value": 3}, {"kind": "dict", "keys": ["a"], "items": [{"kind": "tensor", "index": 0}]},
                 {"kind": "tuple", "items": [{"kind": "tensor", "index": 0}, {"kind": "none"}]}):
        with pytest.raises(WorkerError) as e:
            native.OutputLayout.from_json({"tree": tree, "tensors": [{"dtype": "int8", "shape": [1]}]})
        assert e.value.kind == "unsupported", tree


# Through the worker: a task without a twin whose Model has a parameter and takes
# scalars. The candidate receives (x, alpha, n, flag, weight): x and weight as
# tensors 0 and 1, alpha/n/flag as scalars 0..2.
SCALED = """
import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cols))
    def forward(self, x, alpha, n, flag):
        y = x * self.weight * alpha + n
        return (y if flag else -y), y.sum(dim=1)
def get_inputs():
    return [torch.randn(5, 6), 1.5, 2, True]
def get_init_inputs():
    return [6]
"""

SCALED_KERNEL = r"""
#include <kvault/native.h>
extern "C" int kvault_forward(const kv_tensor* in, int ni, const kv_scalar* sc, int ns,
                              kv_tensor* out, int no, void*) {
  if (ni != 2 || ns != 3 || no != 2 || sc[0].kind != KV_SCALAR_FLOAT || sc[2].kind != KV_SCALAR_BOOL) return 1;
  const float* x = (const float*)in[0].data; const float* w = (const float*)in[1].data;
  float* y = (float*)out[0].data; float* rows = (float*)out[1].data;
  int64_t R = in[0].shape[0], C = in[0].shape[1];
  for (int64_t r = 0; r < R; ++r) {
    float acc = 0;
    for (int64_t c = 0; c < C; ++c) {
      float v = x[r * C + c] * w[c] * (float)sc[0].f + (float)sc[1].i;
      acc += v;
      y[r * C + c] = sc[2].i ? v : -v;
    }
    rows[r] = acc;
  }
  return 0;
}
"""

SCALED_LAYOUT = {"tree": {"kind": "tuple", "items": [{"kind": "tensor", "index": 0}, {"kind": "tensor", "index": 1}]},
                 "tensors": [{"dtype": "float32", "shape": [5, 6]}, {"dtype": "float32", "shape": [5]}]}


@pytest.fixture(scope="module")
def scaled_kernel(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    d = tmp_path_factory.mktemp("scaled")
    src = d / "scaled.cpp"
    src.write_text(SCALED_KERNEL)
    so = d / "scaled.so"
    subprocess.run(["g++", "-O1", "-std=c++17", "-fPIC", "-shared", "-I", str(INCLUDE), str(src), "-o", str(so)],
                   check=True)
    return str(so)


def test_worker_runs_a_native_candidate_with_scalars_and_weights(shared_worker, tmp_path, scaled_kernel):
    task = write_file(tmp_path, "task.py", SCALED)
    loaded = shared_worker.call("load", task=task, candidate={"format": "native", "path": scaled_kernel})
    assert loaded["ok"], loaded
    missing = shared_worker.call("run", case=0, seed=1, out=str(tmp_path / "c0.kvt"))
    assert missing["kind"] == "bad_request" and "output_layout" in missing["message"]
    for seed in (1, 2):
        ref_out, cand_out = str(tmp_path / "ref.kvt"), str(tmp_path / "cand.kvt")
        ref = shared_worker.call("reference", task=task, case=0, seed=seed, out=ref_out)
        cand = shared_worker.call("run", case=0, seed=seed, out=cand_out, output_layout=SCALED_LAYOUT)
        assert ref["ok"] and cand["ok"], (ref, cand)
        assert ref["input_digest"] == cand["input_digest"] and cand["inputs_modified"] == []
        r, c = tensorfile.read(ref_out)[0], tensorfile.read(cand_out)[0]
        assert isinstance(c, tuple) and len(c) == 2
        torch.testing.assert_close(c[0], r[0], rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(c[1], r[1], rtol=1e-5, atol=1e-5)
    # Timing without the engine's layout takes it from the reference in this process.
    for extra in ({}, {"output_layout": SCALED_LAYOUT}):
        started = shared_worker.call("time_start", side="candidate", case=0, seed=1000, warmup_ms=1,
                                     flush=False, **extra)
        assert started["ok"], started
        timed = timed_samples(shared_worker, "monotonic_clock", cold=0, warm=3)
        assert timed["ok"] and len(timed["warm_ms"]) == 3, timed
        assert shared_worker.call("time_finish")["ok"]


def test_worker_reports_a_native_load_error(shared_worker, tmp_path):
    task = write_file(tmp_path, "task.py", SCALED)
    loaded = shared_worker.call("load", task=task, candidate={"format": "native", "path": str(tmp_path / "no.so")})
    assert loaded["ok"] is False and loaded["kind"] == "load_error", loaded
