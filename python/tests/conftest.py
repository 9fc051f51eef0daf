"""Fixtures: workers as real subprocesses, and helpers that write task and
candidate files into tmp_path."""
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # kvault_worker

from worker_client import WorkerClient  # noqa: E402


def write_file(folder, name, source):
    path = Path(folder) / name
    path.write_text(textwrap.dedent(source).lstrip("\n"))
    return str(path)


def timed_samples(worker, method, cold, warm, seed=100, graph_calls=None):
    """What the engine does for one side's batch (docs/worker-protocol.md, `time_sample`):
    `cold` flushed samples then `warm` ones, each on the inputs of its own seed. With
    the graph method the graph is captured first (`graph_calls`, or the side's own
    sizing); a capture that fails answers {"graph_failed": why}."""
    out = {"cold_ms": [], "warm_ms": [], "wall_ms": []}
    if method == "cuda_graph":
        graph = worker.call("time_graph", **({"calls": graph_calls} if graph_calls else {}))
        assert graph["ok"], graph
        if "graph_failed" in graph:
            return {"ok": True, "graph_failed": graph["graph_failed"]}
        out["graph_calls"] = graph["graph_calls"]
    for k, flushed in enumerate([True] * cold + [False] * warm):
        if flushed:
            assert worker.call("time_flush")["ok"]
        sample = worker.call("time_sample", method=method, seed=seed + k)
        if not sample["ok"]:
            return sample
        out["cold_ms" if flushed else "warm_ms"].append(sample["ms"])
        out["wall_ms"].append(sample["wall_ms"])
    out["ok"] = True
    return out


@pytest.fixture
def start_worker(tmp_path):
    """start_worker(backend="cpu") -> a client that has said hello (unless backend=None)."""
    clients = []

    def start(backend="cpu"):
        client = WorkerClient(tmp_path / ("worker%d.log" % len(clients)))
        clients.append(client)
        if backend is not None:
            hello = client.call("hello", backend=backend, device_index=0)
            assert hello["ok"], hello
        return client

    yield start
    for client in clients:
        client.close()


@pytest.fixture
def worker(start_worker):
    return start_worker()


@pytest.fixture(scope="module")
def shared_worker(tmp_path_factory):
    """One CPU worker for a whole test module (starting one costs about a second)."""
    client = WorkerClient(tmp_path_factory.mktemp("shared") / "worker.log")
    assert client.call("hello", backend="cpu", device_index=0)["ok"]
    yield client
    client.close()


_FAKE_EXTENSION = r"""
#include <Python.h>
/* forward(*args) returns its arguments as a tuple. */
static PyObject* forward(PyObject* self, PyObject* args) { Py_INCREF(args); return args; }
static PyMethodDef methods[] = {
#ifdef WITH_FORWARD
  {"forward", forward, METH_VARARGS, "returns its arguments"},
#endif
  {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "@NAME@", NULL, -1, methods};
PyMODINIT_FUNC PyInit_@NAME@(void) { return PyModule_Create(&def); }
"""


@pytest.fixture(scope="session")
def fake_extensions(tmp_path_factory):
    """Two tiny C extensions (no torch): kv_echo (forward returns its arguments)
    and kv_noforward (no forward). Returns {name: path}."""
    cc = shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if cc is None or not (Path(include) / "Python.h").exists():
        pytest.skip("needs a C compiler and Python.h to build a test extension")
    folder = tmp_path_factory.mktemp("fake_ext")
    built = {}
    for name, flags in (("kv_echo", ["-DWITH_FORWARD"]), ("kv_noforward", [])):
        source = folder / (name + ".c")
        source.write_text(_FAKE_EXTENSION.replace("@NAME@", name))
        target = folder / (name + sysconfig.get_config_var("EXT_SUFFIX"))
        subprocess.run([cc, "-shared", "-fPIC", "-I" + include, *flags, str(source), "-o", str(target)],
                       check=True, capture_output=True)
        built[name] = str(target)
    return built


_TORCH_EXTENSION = r"""
#include <torch/extension.h>
// forward(x) = relu(x); forward(x, weight, bias) = x @ weight^T + bias.
torch::Tensor forward(torch::Tensor x, c10::optional<torch::Tensor> weight,
                      c10::optional<torch::Tensor> bias) {
  if (!weight) return torch::relu(x);
  auto y = torch::matmul(x, weight->t());
  if (bias) y = y + *bias;
  return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &forward, py::arg("x"), py::arg("weight") = py::none(),
        py::arg("bias") = py::none());
}
"""


@pytest.fixture(scope="session")
def torch_extension(tmp_path_factory):
    """A real PyTorch C++ extension, built once per session: (path, module name)."""
    from torch.utils import cpp_extension

    folder = tmp_path_factory.mktemp("torch_ext")
    source = folder / "kv_torch_ext.cpp"
    source.write_text(_TORCH_EXTENSION)
    try:
        cpp_extension.load(name="kv_torch_ext", sources=[str(source)], build_directory=str(folder),
                           verbose=False)
    except Exception as e:  # no compiler, no ninja
        pytest.skip("cannot build a PyTorch extension here: %s" % e)
    built = sorted(folder.glob("kv_torch_ext*.so"))
    assert built, list(folder.iterdir())
    return str(built[0]), "kv_torch_ext"
