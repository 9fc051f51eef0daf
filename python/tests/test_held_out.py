"""The held-out size (held_out.py; docs/adversarial.md, "Hard-coded shapes"): a task
drawn at a module-level `batch_size` gets one more correctness case at another batch,
listed by describe only when its reference runs there."""
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
        x, a = task.cases[-1].get_inputs()
        assert tuple(x.shape) == (9, 32, 32, 32) and tuple(a.shape) == (1024, 8)
        assert task.cases[-1].get_init_inputs() == [32]
    finally:
        release_task(task)


def test_a_size_the_model_reads_by_name_stays(tmp_path):
    # The class reads `dim` itself: it is the task's hyperparameter, not a data size.
    source = DATA_SIZED.replace("return x.sum() + a.sum()", "return x.sum() + a.sum() * M")
    task = load_task(write_file(tmp_path, "hyper.py", source))
    try:
        assert tuple(task.cases[-1].get_inputs()[1].shape) == (2048, 8)
    finally:
        release_task(task)


def test_a_task_with_a_batch_size_gets_a_held_out_case_last(tmp_path):
    task = load_task(write_file(tmp_path, "sized.py", SIZED % "pass"))
    try:
        assert [c.name for c in task.cases] == ["default", held_out.HELD_OUT]
        held = task.cases[-1]
        assert held.correctness and not held.performance
        assert tuple(held.get_inputs()[0].shape) == (33, 8)
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
            assert held_out.HELD_OUT not in [c.name for c in task.cases], name
        finally:
            release_task(task)


def test_describe_lists_it_only_where_the_reference_runs(shared_worker, tmp_path):
    runs = shared_worker.call("describe", task=write_file(tmp_path, "runs.py", SIZED % "pass"))
    assert runs["ok"], runs
    assert [c["name"] for c in runs["task"]["cases"]] == ["default", held_out.HELD_OUT]
    fails = shared_worker.call("describe", task=write_file(
        tmp_path, "fails.py", SIZED % "assert x.shape[0] == 64, 'written for one size'"))
    assert fails["ok"], fails  # the task keeps its own case
    assert [c["name"] for c in fails["task"]["cases"]] == ["default"]
