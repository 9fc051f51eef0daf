"""describe: task shape, twin detection, cases, metadata and broken tasks."""
import os

import pytest

from conftest import write_file

HEADER = "import torch, torch.nn as nn\n"

LINEAR_TWIN = HEADER + """
import torch.nn.functional as F
def module_fn(x, weight, bias):
    return F.linear(x, weight, bias)
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


def describe(worker, folder, source, name="task.py"):
    return worker.call("describe", task=write_file(folder, name, source))


def test_plain_task(shared_worker, tmp_path):
    source = HEADER + """
class Model(nn.Module):
    def forward(self, x, y):
        return x + y
def get_inputs():
    return [torch.randn(3), torch.randn(3)]
"""
    response = describe(shared_worker, tmp_path, source, "add.py")
    assert response["ok"], response
    assert response["task"] == {
        "name": "add", "has_twin": False, "num_parameters": 0,
        "cases": [{"name": "default", "correctness": True, "performance": True, "input_bytes": 24}],
        "meta": {"rtol": None, "atol": None, "nan_policy": "match", "seeds": 3, "policy": "any",
                 "input_distributions": ["signed", "heavy_tailed"], "plausible_speedup": None},
        "held_out": []}


def test_twin_is_detected_and_parameters_counted(shared_worker, tmp_path):
    task = describe(shared_worker, tmp_path, LINEAR_TWIN)["task"]
    assert task["has_twin"] is True
    assert task["num_parameters"] == 8 * 3 + 3


def test_module_fn_without_fn_parameter_is_no_twin(shared_worker, tmp_path):
    source = LINEAR_TWIN.replace("def forward(self, x, fn=module_fn):\n        return fn(",
                                 "def forward(self, x):\n        return module_fn(")
    task = describe(shared_worker, tmp_path, source)["task"]
    assert task["has_twin"] is False and task["num_parameters"] == 27


def test_buffers_count_as_parameters(shared_worker, tmp_path):
    source = HEADER + """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(5))
    def forward(self, x):
        return x * self.scale
def get_inputs():
    return [torch.randn(5)]
"""
    assert describe(shared_worker, tmp_path, source)["task"]["num_parameters"] == 5


def test_get_cases_and_meta(shared_worker, tmp_path):
    source = HEADER + """
class Model(nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.n = n
    def forward(self, x):
        return x[: self.n]
def get_inputs():
    return [torch.randn(16)]
def get_cases():
    return [
        {"name": "small", "kind": "correctness", "get_inputs": lambda: [torch.randn(7)]},
        {"name": "large", "kind": "performance", "get_inputs": get_inputs},
        {"name": "odd", "get_inputs": lambda: [torch.randn(9), 2.5], "get_init_inputs": lambda: [3]},
    ]
KVAULT_META = {"rtol": 1e-3, "atol": 0, "nan_policy": "forbid", "seeds": 5,
               "policy": "custom_kernel", "input_distributions": [], "plausible_speedup": 20}
"""
    task = describe(shared_worker, tmp_path, source)["task"]
    assert task["cases"] == [
        {"name": "small", "correctness": True, "performance": False, "input_bytes": 28},
        {"name": "large", "correctness": False, "performance": True, "input_bytes": 64},
        {"name": "odd", "correctness": True, "performance": True, "input_bytes": 36}]
    assert task["meta"] == {"rtol": 1e-3, "atol": 0.0, "nan_policy": "forbid", "seeds": 5,
                            "policy": "custom_kernel", "input_distributions": [],
                            "plausible_speedup": 20.0}


@pytest.mark.parametrize("source, expected", [
    ("import torch\nclass Model(:\n", "SyntaxError"),
    (HEADER + "def get_inputs():\n    return [torch.randn(2)]\n", "no class Model"),
    (HEADER + "class Model(nn.Module):\n    pass\n", "no function get_inputs"),
    (HEADER + "Model = 3\ndef get_inputs():\n    return []\n", "torch.nn.Module subclass"),
    (HEADER + "raise RuntimeError('boom at import')\n", "boom at import"),
    (HEADER + "import sys\nsys.exit(4)\n", "SystemExit"),
    (HEADER + "import no_such_module_kv\n", "no_such_module_kv"),
])
def test_broken_tasks_are_task_errors(shared_worker, tmp_path, source, expected):
    response = describe(shared_worker, tmp_path, source)
    assert response["ok"] is False and response["kind"] == "task_error", response
    assert expected in response["message"]
    assert "\n" not in response["message"]


MODEL = HEADER + """
class Model(nn.Module):
    def forward(self, *args):
        return args[0]
"""


@pytest.mark.parametrize("get_inputs, expected", [
    ("return {'x': torch.randn(2)}", "got a value of type dict"),
    ("return torch.randn(2)", "got a value of type torch.Tensor"),
    ("return [torch.randn(2), 'text']", "list with item 1 of type str"),
    ("return [[torch.randn(2)]]", "list with item 0 of type list"),
    ("return None", "got None"),
])
def test_non_tensor_inputs_are_task_errors(shared_worker, tmp_path, get_inputs, expected):
    source = MODEL + "def get_inputs():\n    %s\n" % get_inputs
    response = describe(shared_worker, tmp_path, source)
    assert response["kind"] == "task_error", response
    assert response["message"].startswith("get_inputs must return a list of tensors and scalars, got ")
    assert expected in response["message"]


def test_scalars_and_none_are_valid_inputs(shared_worker, tmp_path):
    source = MODEL + "def get_inputs():\n    return (torch.randn(2), 3, 0.5, True, None)\n"
    assert describe(shared_worker, tmp_path, source)["ok"]


@pytest.mark.parametrize("meta, expected", [
    ("{'seeds': 2}", "seeds"),
    ("{'seeds': 3.0}", "seeds"),
    ("{'rtol': -1}", "rtol"),
    ("{'atol': float('nan')}", "atol"),
    ("{'nan_policy': 'ignore'}", "nan_policy"),
    ("{'rtols': 1e-3}", "unknown key(s) rtols"),
    ("{'policy': 'kernels'}", "policy"),
    ("{'input_distributions': ['uniform']}", "input_distributions"),
    ("{'input_distributions': 'signed'}", "input_distributions"),
    ("{'plausible_speedup': 1}", "plausible_speedup"),
    ("{'plausible_speedup': float('inf')}", "plausible_speedup"),
    ("[1, 2]", "must be a dict"),
])
def test_bad_meta_is_task_error(shared_worker, tmp_path, meta, expected):
    source = MODEL + "def get_inputs():\n    return [torch.randn(2)]\nKVAULT_META = %s\n" % meta
    response = describe(shared_worker, tmp_path, source)
    assert response["kind"] == "task_error", response
    assert "KVAULT_META" in response["message"] and expected in response["message"]


@pytest.mark.parametrize("cases, expected", [
    ("[]", "non-empty list"),
    ("[{'kind': 'both', 'get_inputs': get_inputs}]", "'name'"),
    ("[{'name': 'a', 'kind': 'speed', 'get_inputs': get_inputs}]", "kind must be"),
    ("[{'name': 'a'}]", "get_inputs"),
    ("[{'name': 'a', 'get_inputs': get_inputs}, {'name': 'a', 'get_inputs': get_inputs}]", "twice"),
    ("[{'name': 'a', 'get_inputs': lambda: 5}]", "get_inputs must return a list"),
])
def test_bad_cases_are_task_errors(shared_worker, tmp_path, cases, expected):
    source = MODEL + "def get_inputs():\n    return [torch.randn(2)]\ndef get_cases():\n    return %s\n" % cases
    response = describe(shared_worker, tmp_path, source)
    assert response["kind"] == "task_error", response
    assert expected in response["message"]


def test_each_describe_imports_the_file_afresh(shared_worker, tmp_path):
    """Edited files are re-read (no module or bytecode cache), and no earlier task
    module is left in sys.modules."""
    guard = ("import sys\nassert not [m for m in sys.modules if m.startswith('_kvault_task')"
             " and m != __name__], 'a task module leaked'\n")
    body = guard + MODEL + "def get_inputs():\n    return [torch.randn(2)]\n"
    path = write_file(tmp_path, "fresh.py", body)
    stat = os.stat(path)
    assert shared_worker.call("describe", task=path)["task"]["cases"][0]["name"] == "default"
    write_file(tmp_path, "fresh.py", body + "def get_cases():\n    return [{'name': 'edited', 'get_inputs': get_inputs}]\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = shared_worker.call("describe", task=path)
    assert second["ok"], second
    assert second["task"]["cases"][0]["name"] == "edited"
    assert not (tmp_path / "__pycache__").exists()
