"""KernelBench candidates' load_inline calls: noted by record_inline, answered at
load with the modules the engine built (inline_ext.py), PyTorch's own load_inline
for any other call."""
import functools
import inspect

import pytest
from torch.utils import cpp_extension

from conftest import write_file
from kvault_worker import inline_ext

TWO_CALLS = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
import torch.utils.cpp_extension as ce
a = load_inline("a", "torch::Tensor f(torch::Tensor x) { return x; }", functions=["f"])
b = ce.load_inline(name="b", cpp_sources=["int g();", "int g() { return 1; }"],
                   functions={"g": "the doc"}, extra_cflags=["-O3"], verbose=True)
class ModelNew(nn.Module):
    def forward(self, x):
        return a.f(x)
'''

USES_IT = '''
from torch.utils.cpp_extension import load_inline
f = load_inline("a", "int f() { return 1; }", functions="f").f
never = load_inline("b", "int g() { return 2; }", functions="g")
'''

FAILS_FIRST = '''
import no_such_module_here
from torch.utils.cpp_extension import load_inline
'''


def test_record_notes_each_call_normalized(tmp_path):
    path = write_file(tmp_path, "two.py", TWO_CALLS)
    got = inline_ext.record(path)
    assert "stopped" not in got
    a, b = got["calls"]
    assert a["cpp_sources"] == ["torch::Tensor f(torch::Tensor x) { return x; }"]
    assert a["functions"] == [["f", "f"]] and a["cuda_sources"] == [] and a["extra_cflags"] == []
    assert a["with_pytorch_error_handling"] is True and a["is_python_module"] is True
    assert b["functions"] == [["g", "the doc"]] and b["extra_cflags"] == ["-O3"]
    assert a["other"] == {} and b["other"] == {}  # name and verbose decide nothing built
    assert "verbose" not in b
    # The name is noted (PyTorch's own build writes it into a shell's line), outside the digest.
    assert a["name"] == "a" and b["name"] == "b"
    renamed = inline_ext.normalized_call(inspect.signature(cpp_extension.load_inline), ("c", a["cpp_sources"]),
                                         {"functions": ["f"]})
    assert renamed["name"] == "c" and renamed["digest"] == a["digest"]
    # The digest covers what the call asks for, and only that.
    again = inline_ext.record(path)["calls"]
    assert [c["digest"] for c in again] == [a["digest"], b["digest"]] and a["digest"] != b["digest"]


def test_record_stops_at_the_first_use_of_a_module_and_at_a_failure(tmp_path):
    got = inline_ext.record(write_file(tmp_path, "uses.py", USES_IT))
    assert len(got["calls"]) == 1 and "used a module" in got["stopped"]
    got = inline_ext.record(write_file(tmp_path, "fails.py", FAILS_FIRST))
    assert got["calls"] == [] and "no_such_module_here" in got["stopped"]


def test_record_restores_pytorchs_load_inline(tmp_path):
    original = cpp_extension.load_inline
    inline_ext.record(write_file(tmp_path, "fails.py", FAILS_FIRST))
    inline_ext.record(write_file(tmp_path, "two.py", TWO_CALLS))
    assert cpp_extension.load_inline is original


def test_arguments_pytorch_would_reject_are_not_noted_as_a_call():
    signature = inspect.signature(cpp_extension.load_inline)
    with pytest.raises(TypeError):
        inline_ext.normalized_call(signature, ("a", 7), {})
    with pytest.raises(TypeError):
        inline_ext.normalized_call(signature, ("a", "x"), {"functions": 3})
    with pytest.raises(TypeError):
        inline_ext.normalized_call(signature, ("a", "x"), {"no_such_argument": 1})


def test_replaying_returns_the_built_module_for_the_noted_call_only(tmp_path, monkeypatch):
    path = write_file(tmp_path, "two.py", TWO_CALLS)
    a, b = inline_ext.record(path)["calls"]
    built = object()
    monkeypatch.setattr(inline_ext, "_load_built", lambda entry: (built, entry["module"]))
    pytorch_calls = []
    pytorch = functools.wraps(cpp_extension.load_inline)(  # with PyTorch's signature
        lambda *args, **kw: pytorch_calls.append((args, kw)) or "pytorch's")
    monkeypatch.setattr(cpp_extension, "load_inline", pytorch)
    entries = [{"digest": a["digest"], "path": "/x/kv_a.so", "module": "kv_a"}]
    with inline_ext.replaying(entries):
        assert cpp_extension.load_inline("any name", "torch::Tensor f(torch::Tensor x) { return x; }",
                                         functions=["f"], build_directory="/elsewhere") == (built, "kv_a")
        # b was not built; a call that differs in anything it asks for is PyTorch's.
        assert cpp_extension.load_inline("b", ["int g();", "int g() { return 1; }"],
                                         functions={"g": "the doc"}, extra_cflags=["-O3"]) == "pytorch's"
        assert cpp_extension.load_inline("a", "torch::Tensor f(torch::Tensor x) { return x; }",
                                         functions=["f"], extra_cflags=["-O2"]) == "pytorch's"
        assert cpp_extension.load_inline("a", 7) == "pytorch's"  # PyTorch says what is wrong
    assert len(pytorch_calls) == 3


def test_built_entries_are_checked():
    assert inline_ext.built_entries({}) == []
    for bad in ("x", [1], [{"digest": "d", "path": "/p"}], [{"digest": "d", "path": "/p", "module": "a-b"}]):
        with pytest.raises(ValueError):
            inline_ext.built_entries({"inline": bad})


def test_the_worker_records_then_loads_with_the_built_module(tmp_path, start_worker, fake_extensions):
    """Over the protocol: record_inline, then a load whose load_inline call gets the
    engine's build (here a tiny extension standing in for it)."""
    source = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
ext = load_inline("mine", "torch::Tensor forward(torch::Tensor x);", functions=["forward"])
assert ext.__name__ == "kv_echo", ext
class ModelNew(nn.Module):
    def forward(self, x):
        return ext.forward(x)
'''
    path = write_file(tmp_path, "cand.py", source)
    task = write_file(tmp_path, "task.py", "import torch\nclass Model(torch.nn.Module):\n"
                      "    def forward(self, x):\n        return x\ndef get_inputs():\n    return [torch.ones(2)]\n")
    recorder = start_worker()
    got = recorder.call("record_inline", candidate={"format": "kernelbench", "path": path})
    assert got["ok"] and len(got["calls"]) == 1, got
    bad = recorder.call("record_inline", candidate={"format": "extension", "path": path})
    assert not bad["ok"] and bad["kind"] == "bad_request"
    loader = start_worker()
    entry = {"digest": got["calls"][0]["digest"], "path": fake_extensions["kv_echo"], "module": "kv_echo"}
    loaded = loader.call("load", task=task, candidate={"format": "kernelbench", "path": path, "inline": [entry]})
    assert loaded["ok"], loaded
    malformed = loader.call("load", task=task, candidate={"format": "kernelbench", "path": path, "inline": "x"})
    assert not malformed["ok"] and malformed["kind"] == "bad_request"


def test_record_is_bounded(tmp_path):
    """A file cannot make the reply unbounded: 16 calls, or 4 MiB of them, at most."""
    many = "from torch.utils.cpp_extension import load_inline\nfor i in range(40):\n" \
           "    load_inline('m%d' % i, 'int f%d();' % i, functions=['f%d' % i])\n"
    got = inline_ext.record(write_file(tmp_path, "many.py", many))
    assert len(got["calls"]) == inline_ext.MAX_RECORDED_CALLS and "at most" in got["stopped"]
    big = "from torch.utils.cpp_extension import load_inline\n" \
          "for i in range(3):\n    load_inline('m', 'int f();', extra_cflags=['-DY%d' % i + '-DX' * (1 << 20)])\n"
    got = inline_ext.record(write_file(tmp_path, "big.py", big))
    assert len(got["calls"]) == 1 and "at most" in got["stopped"]


BUILDS_IN_INIT = '''
import torch.nn as nn
import torch.utils.cpp_extension as ce
class ModelNew(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.ext = ce.load_inline("w", "int f() { return %d; }" % width, functions=["f"])
        self.same = ce.load_inline("s", "int g() { return 0; }", functions=["g"])
    def forward(self, x):
        return x
'''


def test_record_constructs_model_new_once_per_distinct_init_inputs(tmp_path):
    """Calls ModelNew's constructor makes are noted when the task's init inputs are
    given; a call noted already (the same arguments) is noted once."""
    path = write_file(tmp_path, "init.py", BUILDS_IN_INIT)
    assert inline_ext.record(path)["calls"] == []  # without construct: the file alone
    made = []

    def inputs(width):
        return lambda: made.append(width) or [width]

    def construct(module, calls):
        inline_ext.construct_models(module, [inputs(8), inputs(8), inputs(4)])

    got = inline_ext.record(path, construct)
    assert "stopped" not in got, got
    assert [c["cpp_sources"] for c in got["calls"]] == [["int f() { return 8; }"], ["int g() { return 0; }"],
                                                        ["int f() { return 4; }"]]
    assert made == [8, 8, 4]
    # A constructor that uses what load_inline returned ends the execution.
    uses = BUILDS_IN_INIT.replace("super().__init__()", "super().__init__(); ce.load_inline('u', 'int u();').u")
    got = inline_ext.record(write_file(tmp_path, "uses.py", uses), construct)
    assert got["calls"][0]["cpp_sources"] == ["int u();"] and "used a module" in got["stopped"]


def test_a_constructor_gets_the_built_module_at_every_run(tmp_path, start_worker, fake_extensions):
    """Over the protocol: record_inline with the task notes the constructor's call;
    the loaded candidate's constructor, which runs for every run, gets the build."""
    source = '''
import torch.nn as nn
import torch.utils.cpp_extension as ce
class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        ext = ce.load_inline("mine", "torch::Tensor forward(torch::Tensor x);", functions=["forward"])
        assert ext.__name__ == "kv_echo", ext
    def forward(self, x):
        return x.clone()
'''
    path = write_file(tmp_path, "cand.py", source)
    task = write_file(tmp_path, "task.py", "import torch\nclass Model(torch.nn.Module):\n"
                      "    def forward(self, x):\n        return x.clone()\n"
                      "def get_inputs():\n    return [torch.ones(2)]\n")
    candidate = {"format": "kernelbench", "path": path}
    recorder = start_worker()
    assert recorder.call("record_inline", candidate=candidate)["calls"] == []
    got = recorder.call("record_inline", candidate=candidate, task=task)
    assert got["ok"] and len(got["calls"]) == 1, got
    loader = start_worker()
    entry = {"digest": got["calls"][0]["digest"], "path": fake_extensions["kv_echo"], "module": "kv_echo"}
    assert loader.call("load", task=task, candidate=dict(candidate, inline=[entry]))["ok"]
    for seed in (1, 2):
        ran = loader.call("run", case=0, seed=seed, out=str(tmp_path / ("c%d.kvt" % seed)))
        assert ran["ok"], ran


def test_a_file_that_builds_at_its_first_forward_is_noted_with_the_task(tmp_path, start_worker):
    """Nothing noted by the import and the constructor: the model is called once on
    the first case's inputs; a constructor that raises leaves the file's own calls."""
    lazy = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
_ext = None
class ModelNew(nn.Module):
    def forward(self, x):
        global _ext
        if _ext is None:
            _ext = load_inline("lazy", "torch::Tensor f(torch::Tensor x);", functions=["f"])
        return _ext.f(x)
'''
    task = write_file(tmp_path, "task.py", "import torch\nclass Model(torch.nn.Module):\n"
                      "    def forward(self, x):\n        return x.clone()\n"
                      "def get_inputs():\n    return [torch.ones(2)]\n")
    worker = start_worker()
    candidate = {"format": "kernelbench", "path": write_file(tmp_path, "lazy.py", lazy)}
    assert worker.call("record_inline", candidate=candidate)["calls"] == []
    got = worker.call("record_inline", candidate=candidate, task=task)
    assert got["ok"] and [c["cpp_sources"] for c in got["calls"]] == [["torch::Tensor f(torch::Tensor x);"]], got
    assert "used a module" in got["stopped"]
    raising = lazy.replace("    def forward", "    def __init__(self):\n        raise ValueError('no')\n    def forward")
    got = worker.call("record_inline", candidate={"format": "kernelbench",
                                                  "path": write_file(tmp_path, "raising.py", raising)}, task=task)
    assert got["ok"] and got["calls"] == [] and "ValueError" in got["stopped"], got
