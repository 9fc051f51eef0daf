"""The held-out sizes (held_out.py; docs/adversarial.md, "Hard-coded shapes"): a task
drawn at module-level sizes gets two more correctness cases, at smaller sizes and at
larger ones drawn from the engine's key, each listed by describe only when its
reference runs there."""
import pytest

from conftest import write_file
from kvault_worker import held_out
from kvault_worker.tasks import load_task, release_task

SIZED = """
import torch, torch.nn as nn
batch_size = 64
class Model(nn.Module):
    def forward(self, x):
        %s
        return x * 2
def get_inputs():
    return [torch.randn(batch_size, 8)]
"""


def test_the_held_out_batch_is_another_size():
    assert [held_out.held_out_batch(b) for b in (1, 2, 3, 4, 64, 128)] == [2, 3, 4, 3, 33, 65]


def test_other_data_sizes_are_about_half_with_their_alignment():
    assert [held_out.held_out_size(s) for s in (16, 17, 24, 100, 224, 16384, 4095)] == \
        [8, 8, 8, 48, 112, 8192, 2047]


DATA_SIZED = """
import torch, torch.nn as nn
batch_size = 16
height = width = 64
M = 1024 * 2
channels = 32
small = 8
class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.channels = channels
    def forward(self, x, a):
        return x.sum() + a.sum()
def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(M, small)]
def get_init_inputs():
    return [channels]
"""


def test_sizes_only_the_inputs_read_change_and_the_models_stay(tmp_path):
    # height, width and M are the data's sizes; channels is also the model's (through
    # get_init_inputs), small is too small to say anything.
    task = load_task(write_file(tmp_path, "data.py", DATA_SIZED))
    try:
        smaller, larger = task.cases[-2:]
        x, a = smaller.get_inputs()
        assert tuple(x.shape) == (9, 32, 32, 32) and tuple(a.shape) == (1024, 8)
        assert smaller.get_init_inputs() == [32]
        x, a = larger.get_inputs()
        assert x.shape[:2] == (x.shape[0], 32) and x.shape[0] > 16 and x.shape[2] == x.shape[3] > 64
        assert a.shape[0] > 2048 and a.shape[1] == 8 and larger.get_init_inputs() == [32]
    finally:
        release_task(task)


def test_a_size_the_model_reads_by_name_stays(tmp_path):
    # The class reads `dim` itself: it is the task's hyperparameter, not a data size.
    source = DATA_SIZED.replace("return x.sum() + a.sum()", "return x.sum() + a.sum() * M")
    task = load_task(write_file(tmp_path, "hyper.py", source))
    try:
        assert tuple(task.cases[-2].get_inputs()[1].shape) == (2048, 8)
        assert tuple(task.cases[-1].get_inputs()[1].shape) == (2048, 8)
    finally:
        release_task(task)


def test_a_task_with_a_batch_size_gets_a_held_out_case_last(tmp_path):
    task = load_task(write_file(tmp_path, "sized.py", SIZED % "pass"))
    try:
        assert [c.name for c in task.cases] == ["default", held_out.HELD_OUT, held_out.HELD_OUT_LARGER]
        smaller, larger = task.cases[1:]
        assert smaller.correctness and not smaller.performance
        assert larger.correctness and not larger.performance
        assert tuple(smaller.get_inputs()[0].shape) == (33, 8)
        rows = larger.get_inputs()[0].shape[0]
        assert 64 < rows <= 80 and rows % 2 == 1
        assert tuple(task.cases[0].get_inputs()[0].shape) == (64, 8)
    finally:
        release_task(task)


def test_tasks_with_their_own_cases_or_opting_out_get_none(tmp_path):
    opted = SIZED % "pass" + "KVAULT_META = {'held_out': False}\n"
    cased = SIZED % "pass" + "def get_cases():\n    return [{'name': 'a', 'get_inputs': get_inputs}]\n"
    unsized = (SIZED % "pass").replace("batch_size = 64", "").replace("batch_size, 8", "64, 8")
    for name, source in (("opted.py", opted), ("cased.py", cased), ("unsized.py", unsized)):
        task = load_task(write_file(tmp_path, name, source))
        try:
            assert not {held_out.HELD_OUT, held_out.HELD_OUT_LARGER} & {c.name for c in task.cases}, name
        finally:
            release_task(task)


def test_describe_lists_them_only_where_the_reference_runs(shared_worker, tmp_path):
    runs = shared_worker.call("describe", task=write_file(tmp_path, "runs.py", SIZED % "pass"))
    assert runs["ok"], runs
    assert [c["name"] for c in runs["task"]["cases"]] == ["default", held_out.HELD_OUT, held_out.HELD_OUT_LARGER]
    assert [n["listed"] for n in runs["task"]["held_out"]] == [True, True]
    fails = shared_worker.call("describe", task=write_file(
        tmp_path, "fails.py", SIZED % "assert x.shape[0] == 64, 'written for one size'"))
    assert fails["ok"], fails  # the task keeps its own case
    assert [c["name"] for c in fails["task"]["cases"]] == ["default"]
    notes = fails["task"]["held_out"]
    assert [n["listed"] for n in notes] == [False, False]
    assert "written for one size" in notes[0]["why"], notes


def test_a_task_that_cannot_grow_keeps_the_smaller_case(shared_worker, tmp_path):
    # The reference accepts at most the task's 64 rows: the larger case goes, recorded.
    task = write_file(tmp_path, "capped.py", SIZED % "assert x.shape[0] <= 64, 'at most 64 rows'")
    reply = shared_worker.call("describe", task=task)
    assert reply["ok"], reply
    assert [c["name"] for c in reply["task"]["cases"]] == ["default", held_out.HELD_OUT]
    larger = reply["task"]["held_out"][1]
    assert larger["case"] == held_out.HELD_OUT_LARGER and not larger["listed"]
    assert "at most 64 rows" in larger["why"]


GROWN = """
import torch, torch.nn as nn
batch_size = 128
dim = 16384
class Model(nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.randn(batch_size, dim)]
"""


def _grown_shapes(tmp_path, key, name="grown.py", source=GROWN):
    held_out.set_key(key)
    task = load_task(write_file(tmp_path, name, source))
    try:
        return tuple(task.cases[-1].get_inputs()[0].shape)
    finally:
        release_task(task)
        held_out.set_key("")


def test_larger_sizes_are_not_round_and_bounded(tmp_path):
    for key in ("a", "b", "c", "d", "e", "f"):
        rows, cols = _grown_shapes(tmp_path, key)
        assert 128 < rows and rows % 2 == 1  # an odd batch
        assert 16384 < cols and cols % 16 == 0 and cols % 32 != 0  # kept alignment, no more
        assert rows * cols <= 1.25 * 128 * 16384


def test_larger_sizes_come_from_the_key(tmp_path):
    # The same key, the same sizes (every worker of a process agrees); other keys,
    # other sizes, which the task's text alone does not tell.
    assert _grown_shapes(tmp_path, "k1") == _grown_shapes(tmp_path, "k1")
    assert len({_grown_shapes(tmp_path, "k%d" % i) for i in range(12)}) > 3


@pytest.mark.parametrize("size,batch,expected", [
    (1, True, 2), (8, True, 9), (64, True, 65), (16, False, 20), (512, False, 528), (4095, False, 4097)])
def test_the_smallest_growth(size, batch, expected):
    assert held_out.grown_size(size, batch, 1.0, lambda count: 0) == expected


def test_a_larger_case_past_its_byte_bound_is_not_listed(shared_worker, tmp_path, monkeypatch):
    # A size used twice in one shape grows the data by its square: past
    # MAX_GROWN_RATIO, the larger case is dropped, recorded.
    squared = GROWN.replace("torch.randn(batch_size, dim)", "torch.randn(dim, dim)").replace(
        "dim = 16384", "dim = 64")
    assert held_out.MAX_GROWN_RATIO < (80 / 64) ** 2  # 64 grows to 80 at least
    monkeypatch.setattr(held_out, "GROWN_SLACK_BYTES", 0)
    task = load_task(write_file(tmp_path, "squared.py", squared))
    try:
        from kvault_worker.session.reference import describe_task
        described = describe_task(task)
    finally:
        release_task(task)
    assert [c["name"] for c in described["cases"]] == ["default", held_out.HELD_OUT]
    assert "more than" in described["held_out"][1]["why"]
