"""The timer: sampling rules (with a fake clock) and the `time` op end to end."""
import pytest

from conftest import write_file
from kvault_worker import timing

RELU = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(256)]
def get_cases():
    return [{"name": "a", "get_inputs": get_inputs},
            {"name": "b", "kind": "performance", "get_inputs": lambda: [torch.randn(512)]}]
"""

SLOW_CANDIDATE = """
import time, torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(0.004)
        return x.clamp(min=0)
"""


class FakeTime:
    """Time advances only when a fake runner runs (step_ms per call)."""

    def __init__(self, step_ms):
        self.now, self.step_ms = 0.0, step_ms

    def tick(self):
        self.now += self.step_ms


class FakeRunner(timing.Runner):
    def __init__(self, name, log, clock_time):
        super().__init__(None, None, None, None, name)
        self.name, self.log, self.time = name, log, clock_time

    def call(self):
        self.log.append("warm-" + self.name)
        self.time.tick()


class FakeClock:
    def __init__(self, log, clock_time):
        self.log, self.time = log, clock_time

    def sample(self, runner):
        self.log.append(runner.name)
        self.time.tick()
        runner.samples.append(self.time.step_ms)
        runner.wall.append(self.time.step_ms)


def fake_measure(monkeypatch, settings, step_ms=1.0):
    log, clock_time = [], FakeTime(step_ms)
    monkeypatch.setattr(timing, "_now_ms", lambda: clock_time.now)
    ref, cand = FakeRunner("ref", log, clock_time), FakeRunner("cand", log, clock_time)
    timing.measure(FakeClock(log, clock_time), ref, cand, settings)
    return log, ref, cand


def test_samples_are_interleaved_and_bounded_by_max_samples(monkeypatch):
    log, ref, cand = fake_measure(monkeypatch, timing.Settings(0, 3, 7, 1e9, False))
    assert log[:2] == ["warm-ref", "warm-cand"]
    assert log[2:] == ["ref", "cand"] * 7
    assert len(ref.samples) == len(cand.samples) == 7


def test_max_ms_stops_after_min_samples(monkeypatch):
    _, ref, cand = fake_measure(monkeypatch, timing.Settings(0, 4, 1000, 10.0, False))
    assert len(ref.samples) == len(cand.samples) == 5  # 2 ms per pair: 10 ms after 5 pairs


def test_min_samples_wins_over_max_ms(monkeypatch):
    _, ref, cand = fake_measure(monkeypatch, timing.Settings(0, 12, 20, 0.0, False))
    assert len(ref.samples) == len(cand.samples) == 12


def test_warmup_lasts_warmup_ms(monkeypatch):
    log, _, _ = fake_measure(monkeypatch, timing.Settings(30.0, 1, 1, 0.0, False))
    warm = [entry for entry in log if entry.startswith("warm-")]
    assert len(warm) == 30 and warm[:2] == ["warm-ref", "warm-cand"]


def test_median_and_iqr():
    assert timing.median([5.0, 1.0, 3.0]) == 3.0
    assert timing.median([1.0, 2.0, 3.0, 10.0]) == 2.5
    assert timing.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.25) == 2.0
    assert timing.quantile([7.0], 0.75) == 7.0
    ref, cand = timing.Runner(None, None, None, None, "r"), timing.Runner(None, None, None, None, "c")
    ref.samples, ref.wall = [1.0, 2.0, 3.0, 4.0, 5.0], [2.0] * 5
    cand.samples, cand.wall = [4.0], [4.5]
    row = timing.summary(3, ref, cand)
    assert row == {"case": 3, "reference_ms": 3.0, "reference_samples": 5, "reference_iqr_ms": 2.0,
                   "reference_wall_ms": 2.0, "candidate_ms": 4.0, "candidate_samples": 1,
                   "candidate_iqr_ms": 0.0, "candidate_wall_ms": 4.5}


def load(worker, tmp_path, candidate_source):
    task = write_file(tmp_path, "task.py", RELU)
    cand = write_file(tmp_path, "cand.py", candidate_source)
    response = worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})
    assert response["ok"], response


@pytest.mark.parametrize("flush", [True, False])
def test_time_op_returns_sane_numbers(shared_worker, tmp_path, flush):
    load(shared_worker, tmp_path, SLOW_CANDIDATE)
    response = shared_worker.call("time", cases=[1, 0], seed=1000, warmup_ms=5, min_samples=4,
                                  max_samples=6, max_ms=10000, flush=flush)
    assert response["ok"], response
    assert response["method"] == "monotonic_clock"
    assert [row["case"] for row in response["timings"]] == [1, 0]
    for row in response["timings"]:
        assert row["reference_samples"] == row["candidate_samples"] == 6
        assert 4.0 <= row["candidate_ms"] < 200.0
        assert 0.0 < row["reference_ms"] < row["candidate_ms"]
        assert row["reference_iqr_ms"] >= 0.0 and row["candidate_iqr_ms"] >= 0.0
        assert row["candidate_wall_ms"] >= 4.0


def test_time_op_stops_at_max_ms(shared_worker, tmp_path):
    load(shared_worker, tmp_path, SLOW_CANDIDATE)
    response = shared_worker.call("time", cases=[0], seed=1000, warmup_ms=0, min_samples=3,
                                  max_samples=100000, max_ms=60, flush=False)
    samples = response["timings"][0]["candidate_samples"]
    assert 3 <= samples <= 20


def test_candidate_failure_while_timing(shared_worker, tmp_path):
    load(shared_worker, tmp_path, SLOW_CANDIDATE.replace("time.sleep(0.004)", "raise KeyError('late')"))
    response = shared_worker.call("time", cases=[0], seed=1000, warmup_ms=0, min_samples=2,
                                  max_samples=2, max_ms=0, flush=False)
    assert response["kind"] == "runtime_error" and "KeyError" in response["message"]


def test_bad_timing_requests(shared_worker, tmp_path):
    load(shared_worker, tmp_path, SLOW_CANDIDATE)
    for fields in ({"cases": [5]}, {"cases": 0}, {"min_samples": 0}, {"min_samples": 5, "max_samples": 2},
                   {"warmup_ms": -1}, {"flush": "yes"}):
        request = {"cases": [0], "seed": 1000, **fields}
        assert shared_worker.call("time", **request)["kind"] == "bad_request", fields
