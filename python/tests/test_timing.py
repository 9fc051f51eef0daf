"""The timer: statistics and stopping rule on synthetic samples, interleaved rounds
with fake sides, flush sizing, and the time_start/time_sample/time_finish ops end to
end on the CPU backend."""
import hashlib
import math

import pytest
import torch

from conftest import write_file
from kvault_worker import tensorfile
from kvault_worker.timing import flush, rounds, stats, timers

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


def test_quantiles_interpolate_linearly():
    assert stats.median([5.0, 1.0, 3.0]) == 3.0
    assert stats.median([1.0, 2.0, 3.0, 10.0]) == 2.5
    assert stats.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.25) == 2.0
    assert stats.quantile([7.0], 0.75) == 7.0
    assert stats.iqr([1.0, 2.0, 3.0, 4.0, 5.0]) == 2.0
    with pytest.raises(ValueError):
        stats.median([])


def test_relative_noise_is_the_standard_error_of_the_median():
    values = [12.0, 8.0, 10.0, 11.0, 9.0]  # median 10, IQR 2
    expected = math.sqrt(math.pi / 2) * (2.0 / 1.349) / math.sqrt(5) / 10.0
    assert stats.relative_noise(values) == pytest.approx(expected)
    assert stats.relative_noise([1.0]) == math.inf
    assert stats.relative_noise([0.0, 0.0]) == math.inf
    assert stats.relative_noise([2.0] * 5) == 0.0


def test_stopping_rule():
    rule = stats.StoppingRule(min_samples=4, max_samples=50, min_ms=10.0, max_ms=100.0,
                              noise_target=0.01)
    steady, noisy = [1.0] * 4, [1.0, 2.0, 3.0, 4.0]
    assert rule.decide([steady, steady[:3]], 50.0) == stats.CONTINUE  # one side below min
    assert rule.decide([steady, steady], 5.0) == stats.CONTINUE  # below min_ms
    assert rule.decide([steady, steady], 10.0) == stats.SETTLED
    assert rule.decide([steady, noisy], 50.0) == stats.CONTINUE  # noise above target
    assert rule.decide([steady, noisy], 100.0) == stats.WALL_CAP
    assert rule.decide([steady * 13, noisy], 50.0) == stats.MAX_SAMPLES
    assert rule.decide([steady[:2], noisy[:2]], 1e9) == stats.CONTINUE  # min_samples first
    with pytest.raises(ValueError):
        stats.StoppingRule(min_samples=5, max_samples=4)


def test_noise_target_sets_the_sample_count():
    """A series with 10% spread needs more samples than one with 1% spread."""
    rule = stats.StoppingRule(min_samples=5, max_samples=10000, min_ms=0, max_ms=1e9,
                              noise_target=0.005)

    def samples_needed(spread):
        values = []
        while rule.decide([values], 0.0) == stats.CONTINUE:
            values.append(1.0 + spread * ((len(values) * 7919) % 101 - 50) / 50.0)
        return len(values)

    tight, loose = samples_needed(0.01), samples_needed(0.10)
    assert tight == 5 and 150 < loose < 10000


class FakeDevice:
    is_gpu = False


class FakeSide:
    """Returns `ms` per sample and logs the order of batches."""

    def __init__(self, name, ms, log):
        self.name, self.ms, self.log, self.device = name, ms, log, FakeDevice()

    def batch(self, method, cold, warm):
        self.log.append(self.name)
        return {"cold_ms": [self.ms] * cold, "warm_ms": [self.ms / 2] * warm,
                "wall_ms": [self.ms] * (cold + warm)}


def test_rounds_alternate_order_and_stop_by_the_rule():
    log = []
    sides = [FakeSide("ref", 2.0, log), FakeSide("cand", 1.0, log)]
    rule = stats.StoppingRule(min_samples=9, max_samples=100, min_ms=0, max_ms=1e9)
    result = rounds.measure(sides, rule, timers.CLOCK, batch=3)
    assert log == ["ref", "cand", "cand", "ref", "ref", "cand"]
    assert result["rounds"] == 3 and result["stop"] == stats.SETTLED
    ref, cand = result["sides"]
    assert (ref["ms"], ref["cold_ms"], ref["warm_ms"], ref["samples"]) == (2.0, 2.0, 1.0, 9)
    assert (cand["ms"], cand["iqr_ms"]) == (1.0, 0.0)


def test_rounds_without_flush_use_warm_samples():
    sides = [FakeSide("ref", 2.0, []), FakeSide("cand", 1.0, [])]
    rule = stats.StoppingRule(min_samples=2, max_samples=2, min_ms=0, max_ms=1e9)
    result = rounds.measure(sides, rule, timers.CLOCK, batch=2, flush=False)
    assert result["stop"] == stats.MAX_SAMPLES
    assert result["sides"][0]["ms"] == 1.0 and "cold_ms" not in result["sides"][0]


class _GpuLikeDevice:
    is_gpu, backend = True, "cuda"

    def synchronize(self):
        pass


class _FakeGraph:
    """Stands in for timers.GraphReplay: each call takes `per_call_ms` of device time."""
    per_call_ms = 0.002
    captures = []

    def __init__(self, call, calls, synchronize):
        self.calls = calls
        self.outputs = [call(i) for i in range(calls)]
        _FakeGraph.captures.append(calls)

    def replay(self, replays=1):
        pass

    def replay_ms(self, replays, synchronize):
        return self.per_call_ms

    def release(self):
        pass


class _LegacyStreamGraph:
    """A graph of calls whose kernel ran on the legacy default stream while captured:
    the capture holds only torch::zeros, so a replay leaves zeros (or, with `empty`,
    whatever the buffer held)."""

    def __init__(self, call, calls, synchronize, empty=False):
        self.calls, self.empty = calls, empty
        self.outputs = [call(i) for i in range(calls)]  # what the eager kernel wrote

    def replay(self, replays=1):
        if not self.empty:
            for out in self.outputs:
                out.zero_()


class _FaithfulGraph(_LegacyStreamGraph):
    def __init__(self, call, calls, synchronize):
        super().__init__(call, calls, synchronize)
        self.call = call

    def replay(self, replays=1):
        for i, out in enumerate(self.outputs):
            out.copy_(self.call(i))


@pytest.mark.parametrize("graph", [_LegacyStreamGraph, lambda *a: _LegacyStreamGraph(*a, empty=True)])
def test_a_graph_that_leaves_the_work_out_is_not_used(graph):
    from kvault_worker.timing import side as side_module
    x = torch.randn(64)
    call = lambda i: torch.relu(x + i)  # noqa: E731
    why = side_module.work_outside_graph(graph(call, 3, None), call, lambda: None)
    assert why is not None and "legacy default stream" in why
    assert side_module.work_outside_graph(_FaithfulGraph(call, 3, None), call, lambda: None) is None


def test_replayed_outputs_compare_within_the_bits_atomics_change():
    from kvault_worker.timing.side import _same_work
    e = torch.tensor([1.0, float("nan"), float("inf"), -2.0])
    assert _same_work(e * (1 + 1e-6), e)
    assert not _same_work(torch.tensor([1.0, 0.0, float("inf"), -2.0]), e)
    assert not _same_work(e * 1.1, e)
    assert _same_work(torch.arange(4), torch.arange(4)) and not _same_work(torch.arange(4), torch.arange(4) + 1)


def _whole_tensor_same_work(replayed, eager):
    """The comparison _same_work makes, on whole float64 copies (real floats only)."""
    from kvault_worker.timing import side
    r, e = replayed.double(), eager.double()
    if not torch.equal(torch.isnan(r), torch.isnan(e)):
        return False
    r, e = r[~torch.isnan(r)], e[~torch.isnan(e)]
    finite = torch.isfinite(e)
    if not torch.equal(r[~finite], e[~finite]):
        return False
    r, e = r[finite], e[finite]
    return e.numel() == 0 or float((r - e).abs().max()) <= side.REPLAY_RTOL * float(e.abs().max()) + 1e-30


def test_replayed_outputs_compare_in_bounded_chunks_against_the_global_scale(monkeypatch):
    from kvault_worker import digest
    from kvault_worker.timing import side
    monkeypatch.setattr(digest, "CHUNK", 7)
    seen, real_isnan = [], torch.isnan
    monkeypatch.setattr(torch, "isnan", lambda t: seen.append(t.numel()) or real_isnan(t))
    # Small values off by 10% in the first chunks, a large one in the last: within
    # the tolerance of the largest eager value, which only the last chunk holds.
    e = torch.full((6, 5), 1e-6)
    e[5, 4] = 1000.0
    r = e.clone()
    r[0, :] *= 1.1
    assert side._same_work(r, e) and side._same_work(r.t(), e.t())
    assert seen and max(seen) <= 7 and sum(seen) == 2 * e.numel() * 2
    r[5, 4] = 1002.0  # off by more than REPLAY_RTOL of the largest value
    assert not side._same_work(r, e) and not side._same_work(r.t(), e.t())
    generator, verdicts = torch.Generator().manual_seed(3), set()
    for trial in range(40):
        e = torch.randn(5, 9, generator=generator, dtype=torch.float64) * 10 ** (trial % 5)
        r = e * (1 + torch.randn(5, 9, generator=generator, dtype=torch.float64) * 10 ** -(trial % 4 + 1))
        for t in (r, e):  # NaNs and infinities at the same places, but for a few trials
            t.view(-1)[[trial % 45, 2 * trial % 45]] = float("nan")
            t.view(-1)[[(trial + 9) % 45]] = float("-inf")
        if trial % 7 == 0:
            r.view(-1)[trial % 45 + 1] = float("nan") if trial % 2 else float("inf")
        for a, b in ((r, e), (r.t(), e.t()), (r[:, ::2], e[:, ::2]), (r.half(), e.half())):
            verdicts.add(side._same_work(a, b))
            assert side._same_work(a, b) == _whole_tensor_same_work(a, b), trial
    assert verdicts == {True, False}
    for dtype in (torch.int32, torch.bool):
        x = torch.arange(30).reshape(6, 5).to(dtype)
        y = x.clone()
        y[5, 4] = 0
        assert side._same_work(x.t(), x.t().clone()) and not side._same_work(x.t(), y.t())
    z = torch.complex(torch.randn(4, 5), torch.randn(4, 5))
    assert side._same_work(z, z.clone()) and not side._same_work(z + 0.1j, z)


@pytest.mark.parametrize("output_mib,expected", [(1, [33, 500]), (4, [33, 256]), (0, [33, 500])])
def test_graph_size_comes_from_a_measured_replay(monkeypatch, output_mib, expected):
    from kvault_worker.timing import side as side_module
    monkeypatch.setattr(side_module.timers, "GraphReplay", _FakeGraph)
    _FakeGraph.captures = []
    s = side_module.TimedSide(lambda inputs: None, [], _GpuLikeDevice(), "runtime_error", "x", flush=False)
    s.call_ms = 0.03  # the warm-up's call time: 2 us of work plus a host round trip
    s.last_output = torch.empty(output_mib << 18) if output_mib else 3.0  # float32: MiB << 18 elements
    assert s.prepare_graph() is None
    assert _FakeGraph.captures == expected  # first from call_ms, then from the replay
    assert s.graph.calls == expected[-1]


class _OverheadGraph(_FakeGraph):
    """A replay measured with a fixed overhead: small graphs look slow per call."""
    def replay_ms(self, replays, synchronize):
        return 0.002 + 0.2 / self.calls


def test_a_graph_too_small_after_one_step_is_captured_again(monkeypatch):
    from kvault_worker.timing import side as side_module
    monkeypatch.setattr(side_module.timers, "GraphReplay", _OverheadGraph)
    _FakeGraph.captures = []
    s = side_module.TimedSide(lambda inputs: None, [], _GpuLikeDevice(), "runtime_error", "x", flush=False)
    s.call_ms, s.device_call_ms = 0.3, 0.1  # a slow launch path: 10 calls first
    assert s.prepare_graph() is None
    # 10 calls: 0.022 ms each -> 45; 45 calls: 0.0064 ms each -> 155 (then 0.99 ms: kept)
    assert _FakeGraph.captures == [10, 45, 155]


def test_a_graph_holding_enough_work_is_kept(monkeypatch):
    from kvault_worker.timing import side as side_module
    monkeypatch.setattr(side_module.timers, "GraphReplay", _FakeGraph)
    monkeypatch.setattr(_FakeGraph, "per_call_ms", 0.025)
    _FakeGraph.captures = []
    s = side_module.TimedSide(lambda inputs: None, [], _GpuLikeDevice(), "runtime_error", "x", flush=False)
    s.call_ms = 0.03
    assert s.prepare_graph() is None
    assert _FakeGraph.captures == [33]  # 33 x 25 us = 0.8 ms: no second capture


def test_prime_captures_ahead_and_the_quiet_device_sizes_the_graph(monkeypatch):
    from kvault_worker.timing import side as side_module
    monkeypatch.setattr(side_module.timers, "GraphReplay", _FakeGraph)
    monkeypatch.setattr(side_module.timers, "burst_ms", lambda call, calls, sync: 0.02)  # busy device
    _FakeGraph.captures = []
    s = side_module.TimedSide(lambda inputs: 3.0, [], _GpuLikeDevice(), "runtime_error", "x", flush=False)
    s.prime(graph_below_ms=0.5)
    assert _FakeGraph.captures == [50] and not s.graph_sized  # 1 ms at the guessed 20 us a call
    assert s.prepare_graph() is None  # the quiet replay says 2 us a call: captured again
    assert _FakeGraph.captures == [50, 500] and s.graph_sized
    assert s.prepare_graph() is None and _FakeGraph.captures == [50, 500]  # sized once


def test_held_bytes_count_inputs_and_graph_outputs(monkeypatch):
    from kvault_worker.timing import side as side_module
    monkeypatch.setattr(side_module.timers, "GraphReplay", _FakeGraph)
    monkeypatch.setattr(side_module.timers, "burst_ms", lambda call, calls, sync: 0.1)
    out = torch.empty(256)  # 1 KiB a call
    s = side_module.TimedSide(lambda inputs: out, [torch.empty(1024), 3], _GpuLikeDevice(), "task_error", "x",
                              flush=False)
    assert s.held_bytes() == 4096
    s.prime(graph_below_ms=0.5)  # 1 ms at 0.1 ms a call: 10 calls captured
    assert s.graph.calls == 10 and s.held_bytes() == 4096 + 10 * 1024


def test_prime_leaves_slow_calls_to_events_and_remembers_failed_captures(monkeypatch):
    from kvault_worker.timing import side as side_module
    monkeypatch.setattr(side_module.timers, "GraphReplay", _FakeGraph)
    monkeypatch.setattr(side_module.timers, "burst_ms", lambda call, calls, sync: 0.8)
    _FakeGraph.captures = []
    calls = []
    s = side_module.TimedSide(lambda inputs: calls.append(1), [], _GpuLikeDevice(), "runtime_error", "x",
                              flush=False)
    s.prime(graph_below_ms=0.5)
    assert len(calls) == 2 and s.graph is None and _FakeGraph.captures == []

    class _Refused(_FakeGraph):
        def __init__(self, call, calls, synchronize):
            _FakeGraph.captures.append(calls)
            raise side_module.timers.GraphUnavailable("graph capture failed: it synchronises")
    monkeypatch.setattr(side_module.timers, "GraphReplay", _Refused)
    monkeypatch.setattr(side_module.timers, "burst_ms", lambda call, calls, sync: 0.01)
    s = side_module.TimedSide(lambda inputs: None, [], _GpuLikeDevice(), "runtime_error", "x", flush=False)
    s.prime(graph_below_ms=0.5)
    assert "synchronises" in s.prepare_graph() and "synchronises" in s.prepare_graph()
    assert _FakeGraph.captures == [100]  # tried once


class _Clock:
    """A fake device and host clock for GraphReplay.sample: a replay takes `graph_ms`
    on the device, the device-wide synchronisation `tail_ms` more (work left behind),
    and the host wakes `host_delay_ms` after the graph ends."""

    def __init__(self, graph_ms, tail_ms, host_delay_ms):
        self.graph_ms, self.tail_ms, self.host_delay_ms = graph_ms, tail_ms, host_delay_ms
        self.device_ms = self.host_ms = 0.0

    def install(self, monkeypatch):
        clock = self

        class Event:
            def __init__(self, enable_timing=True):
                self.at = None
        monkeypatch.setattr(timers, "_Event", Event)
        monkeypatch.setattr(timers, "_event_record", lambda e: setattr(e, "at", clock.device_ms))
        monkeypatch.setattr(timers, "_event_synchronize", lambda e: clock.wait(e.at))
        monkeypatch.setattr(timers, "_event_elapsed", lambda a, b: b.at - a.at)
        monkeypatch.setattr(timers, "_perf_counter_ns", lambda: int(clock.host_ms * 1e6))

    def wait(self, device_ms):
        self.host_ms = max(self.host_ms, device_ms + self.host_delay_ms)

    def replay(self):
        self.device_ms += self.graph_ms

    def synchronize(self):
        self.device_ms += self.tail_ms
        self.host_ms = max(self.host_ms, self.device_ms) + 0.002


@pytest.mark.parametrize("tail_ms,host_delay_ms,expected_ms", [
    (0.0, 0.0, 1.0),    # idle after the graph: the graph alone
    (0.0, 3.0, 1.0),    # a host descheduled for 3 ms changes nothing
    (0.4, 0.0, 1.4),    # work left behind after the graph is counted
])
def test_graph_samples_end_with_the_graph_unless_work_is_left_behind(monkeypatch, tail_ms, host_delay_ms,
                                                                      expected_ms):
    clock = _Clock(graph_ms=1.0, tail_ms=tail_ms, host_delay_ms=host_delay_ms)
    clock.install(monkeypatch)
    graph = object.__new__(timers.GraphReplay)
    graph.calls, graph.outputs = 10, []
    graph._graph = clock
    sample = graph.sample(clock.synchronize)
    assert sample.ms == pytest.approx(expected_ms / 10)


def test_sides_of_one_worker_share_its_flush_buffer():
    from kvault_worker.timing import side as side_module

    class CpuDevice:
        is_gpu, backend, torch_device = False, "cpu", torch.device("cpu")
    flush.release_shared_flushers()
    a = side_module.TimedSide(lambda inputs: None, [torch.empty(16)], CpuDevice(), "task_error", "a", flush=True)
    b = side_module.TimedSide(lambda inputs: None, [], CpuDevice(), "task_error", "b", flush=True)
    assert a.flusher is b.flusher and a.flush_bytes == b.flush_bytes >= 64 << 20
    assert a.held_bytes() == 64  # its inputs; the flush buffer is the worker's
    a.release()
    b.flusher.flush()  # still usable by the other side
    flush.release_shared_flushers()
    c = side_module.TimedSide(lambda inputs: None, [], CpuDevice(), "task_error", "c", flush=True)
    assert c.flusher is not b.flusher  # made again once forgotten
    b.release(), c.release()
    flush.release_shared_flushers()


def test_flush_sizes_follow_the_last_level_cache():
    mib = 1 << 20
    assert flush.gpu_flush_bytes("cuda", 60 * mib, "sm_90") == 256 * mib  # the floor
    assert flush.gpu_flush_bytes("cuda", 200 * mib, "sm_100") == 400 * mib
    assert flush.gpu_flush_bytes("hip", 4 * mib, "gfx942:sramecc+:xnack-") == 520 * mib
    assert flush.gpu_flush_bytes("hip", 8 * mib, "gfx90a") == 256 * mib  # no Infinity Cache
    assert flush.cpu_flush_bytes() >= 64 * mib
    assert flush.cpu_flush_bytes() >= 2 * flush.largest_cpu_cache_bytes()


def start_both(worker, tmp_path, candidate_source, case=1, **settings):
    task = write_file(tmp_path, "task.py", RELU)
    cand = write_file(tmp_path, "cand.py", candidate_source)
    loaded = worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})
    assert loaded["ok"], loaded
    common = dict(case=case, seed=1000, warmup_ms=settings.get("warmup_ms", 5),
                  flush=settings.get("flush", True))
    return task, common


def test_one_side_round_trip(shared_worker, tmp_path):
    task, common = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    outputs = {}
    digests = set()
    for side in ("reference", "candidate"):
        extra = {"task": task} if side == "reference" else {}
        started = shared_worker.call("time_start", side=side, **extra, **common)
        assert started["ok"], started
        assert started["timer"] == "monotonic_clock" and started["warmup_calls"] >= 2
        assert started["flush_bytes"] >= 64 << 20 and started["sensors"] is None
        digests.add(started["input_digest"])
        layout = {"tree": {"kind": "tensor", "index": 0}, "tensors": [{"dtype": "float32", "shape": [512]}]}
        assert started["output_layout"] == (layout if side == "reference" else None)
        for k in range(3):
            assert shared_worker.call("time_flush")["ok"]
            sample_out = str(tmp_path / ("%s-sample%d.kvt" % (side, k)))
            sample = shared_worker.call("time_sample", method="monotonic_clock", seed=77 + k, out=sample_out)
            assert sample["ok"] and sample["inputs_modified"] is False, sample
            # The digest of what was written, which the engine checks the file against.
            assert sample["out_sha256"] == hashlib.sha256(open(sample_out, "rb").read()).hexdigest()
            if side == "candidate":
                assert sample["ms"] >= 4.0  # it sleeps 4 ms
            outputs[(side, k)], _ = tensorfile.read(sample_out)
        if side == "candidate":
            assert started["call_ms"] >= 4.0
        out = str(tmp_path / (side + ".kvt"))
        finished = shared_worker.call("time_finish", out=out)
        assert finished == {"id": finished["id"], "ok": True, "inputs_modified": False, "kept": False,
                            "sensors": None}
        outputs[side], _ = tensorfile.read(out)
    assert len(digests) == 1
    assert outputs["reference"].shape == (512,)
    assert torch.equal(outputs["reference"], outputs["candidate"])
    for k in range(3):  # every sample on inputs of its own seed, the same on both sides
        assert torch.equal(outputs[("reference", k)], outputs[("candidate", k)])
        assert not torch.equal(outputs[("reference", k)], outputs["reference"])
    assert not torch.equal(outputs[("reference", 0)], outputs[("reference", 1)])
    assert shared_worker.call("time_sample", method="monotonic_clock", seed=1)["kind"] == "bad_request"


def test_kept_sample_outputs_are_handed_over_after_the_round(shared_worker, tmp_path):
    # Samples kept with keep_as (instead of a file each) are handed over by time_output
    # once the engine has chosen them; without a device offer, as files. Each kept
    # output is its own sample's (a copy later samples do not change).
    task, common = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    outputs = {}
    for side in ("reference", "candidate"):
        extra = {"task": task} if side == "reference" else {}
        assert shared_worker.call("time_start", side=side, **extra, **common)["ok"]
        for k in range(3):
            exported = str(tmp_path / ("%s-exported%d.kvt" % (side, k)))
            sample = shared_worker.call("time_sample", method="monotonic_clock", seed=40 + k, keep_as=k,
                                        out=exported)
            assert sample["ok"], sample
            outputs[(side, "exported", k)], _ = tensorfile.read(exported)
        for k in (2, 0):
            out = str(tmp_path / ("%s-kept%d.kvt" % (side, k)))
            handed = shared_worker.call("time_output", sample=k, out=out)
            assert handed["ok"] and "handoff" not in handed, handed
            outputs[(side, "kept", k)], _ = tensorfile.read(out)
        again = shared_worker.call("time_output", sample=0, out=str(tmp_path / "again.kvt"))
        assert again["kind"] == "bad_request" and "no output kept as sample 0" in again["message"]
        assert shared_worker.call("time_output", sample=64, out=str(tmp_path / "x.kvt"))["kind"] == "bad_request"
        assert shared_worker.call("time_finish")["ok"]
        gone = shared_worker.call("time_output", sample=1, out=str(tmp_path / "gone.kvt"))
        assert gone["kind"] == "bad_request"  # the timed case, and what it kept, ended
    for side in ("reference", "candidate"):
        for k in (0, 2):
            assert torch.equal(outputs[(side, "kept", k)], outputs[(side, "exported", k)])
        assert torch.equal(outputs[(side, "kept", 0)], outputs[("reference", "kept", 0)])
    assert not torch.equal(outputs[("reference", "kept", 0)], outputs[("reference", "kept", 2)])


def test_the_reference_keeps_a_sample_it_hands_over_for_the_next_candidate(shared_worker, tmp_path):
    # A group turn compares the reference's kept sample with every candidate's: with
    # `keep` the reference side hands it over and keeps it; the candidate side may not.
    task, common = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    for side in ("reference", "candidate"):
        extra = {"task": task} if side == "reference" else {}
        assert shared_worker.call("time_start", side=side, **extra, **common)["ok"]
        assert shared_worker.call("time_sample", method="monotonic_clock", seed=7, keep_as=0)["ok"]
        if side == "candidate":
            refused = shared_worker.call("time_output", sample=0, keep=True, out=str(tmp_path / "c.kvt"))
            assert refused["kind"] == "bad_request" and "only the reference side" in refused["message"]
        else:
            handed = []
            for k in range(3):
                out = str(tmp_path / ("kept%d.kvt" % k))
                assert shared_worker.call("time_output", sample=0, keep=True, out=out)["ok"]
                handed.append(tensorfile.read(out)[0])
            assert all(torch.equal(handed[0], h) for h in handed[1:])
            assert shared_worker.call("time_output", sample=0, out=str(tmp_path / "last.kvt"))["ok"]
            gone = shared_worker.call("time_output", sample=0, out=str(tmp_path / "gone.kvt"))
            assert gone["kind"] == "bad_request"  # without `keep`, handed over for the last time
        assert shared_worker.call("time_finish")["ok"]


def test_time_warmup_follows_a_time_start_without_warm_up(shared_worker, tmp_path):
    task, common = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    del common["warmup_ms"]
    started = shared_worker.call("time_start", side="candidate", **common)
    assert started["ok"] and "call_ms" not in started and "warmup_calls" not in started
    warmed = shared_worker.call("time_warmup", warmup_ms=5)
    assert warmed["ok"] and warmed["warmup_calls"] >= 2 and warmed["call_ms"] >= 4.0  # it sleeps 4 ms
    assert shared_worker.call("time_warmup", warmup_ms=-1)["kind"] == "bad_request"
    assert shared_worker.call("time_finish")["ok"]
    assert shared_worker.call("time_warmup", warmup_ms=5)["kind"] == "bad_request"  # nothing started


def test_time_burst_runs_the_calls_the_engine_asks_for(shared_worker, tmp_path):
    """A burst's reply says nothing; its duration is what the engine clocks: `replays`
    calls of a candidate that sleeps 4 ms take at least 4 ms each."""
    import time
    task, common = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    assert shared_worker.call("time_start", side="candidate", **common)["ok"]
    began = time.monotonic()
    burst = shared_worker.call("time_burst", method="monotonic_clock", replays=10)
    assert burst["ok"] and set(burst) <= {"ok", "id"}, burst
    assert time.monotonic() - began >= 0.040
    for bad in ({"method": "monotonic_clock", "replays": 0}, {"method": "cuda_graph", "replays": 2},
                {"method": "nope", "replays": 2}, {"method": "monotonic_clock"}):
        assert shared_worker.call("time_burst", **bad)["kind"] == "bad_request", bad
    assert shared_worker.call("time_finish")["ok"]
    assert shared_worker.call("time_burst", method="monotonic_clock", replays=1)["kind"] == "bad_request"


def test_a_reference_side_kept_between_candidates(shared_worker, tmp_path):
    task, common = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    ref = dict(common, side="reference", task=task)

    def time_once(keep=True, **extra):
        started = shared_worker.call("time_start", **{**ref, **extra})
        assert started["ok"], started
        assert shared_worker.call("time_sample", method="monotonic_clock", seed=5)["ok"]
        out = str(tmp_path / "ref.kvt")
        finished = shared_worker.call("time_finish", out=out, keep=keep)
        assert finished["ok"] and finished["inputs_modified"] is False
        return started, finished, tensorfile.read(out)[0]

    first, kept, out1 = time_once()
    assert first["kept"] is False and kept["kept"] is True
    again, _, out2 = time_once()
    assert again["kept"] is True and again["input_digest"] == first["input_digest"]
    assert torch.equal(out1, out2)  # the re-check's fresh inputs did not overwrite the kept ones
    assert time_once(fresh=True)[0]["kept"] is False  # made again when asked
    assert time_once(case=0)[0]["kept"] is False  # another case
    assert time_once()[0]["kept"] is True  # two sides kept: case 1, then case 0
    other = time_once(seed=1001)  # a third: the oldest (case 0) goes
    assert other[0]["kept"] is False and other[0]["input_digest"] != first["input_digest"]
    assert time_once(case=0)[0]["kept"] is False
    assert time_once(keep=False, seed=1001)[0]["kept"] is True
    assert time_once(seed=1001)[0]["kept"] is False  # not kept by the last finish
    write_file(tmp_path, "task.py", RELU + "\n# changed\n")  # the task file changed
    assert time_once()[0]["kept"] is False
    # A candidate's side is never kept, whatever it asks.
    started = shared_worker.call("time_start", side="candidate", **common)
    assert started["ok"] and started["kept"] is False
    assert shared_worker.call("time_finish", keep=True)["kept"] is False


def test_kept_sides_give_way_when_memory_runs_out(worker, tmp_path):
    flag = tmp_path / "oom-once"
    source = RELU.replace("        return torch.relu(x)", """        if os.path.exists(FLAG):
            os.remove(FLAG)
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return torch.relu(x)""").replace("import torch,", "import os, torch,") + "FLAG = %r\n" % str(flag)
    task = write_file(tmp_path, "task.py", source)
    ref = dict(side="reference", task=task, case=1, seed=1000, warmup_ms=0, flush=False)

    def keep_one():
        assert worker.call("time_start", **ref)["ok"]
        assert worker.call("time_finish", keep=True)["kept"] is True

    keep_one()
    flag.write_text("")
    answer = worker.call("reference", task=task, case=0, seed=1, out=str(tmp_path / "r.kvt"))
    assert answer["ok"], answer  # the kept side dropped, the request run again
    assert worker.call("time_start", **ref)["kept"] is False
    assert worker.call("time_finish", keep=True)["kept"] is True
    flag.write_text("")  # the same while starting a timed side
    started = worker.call("time_start", **dict(ref, case=0))
    assert started["ok"] and started["kept"] is False, started
    assert worker.call("time_finish", keep=False)["ok"]
    flag.write_text("")  # nothing kept any more: the task's error, as always
    answer = worker.call("reference", task=task, case=0, seed=1, out=str(tmp_path / "r.kvt"))
    assert answer["kind"] == "task_error" and "out of memory" in answer["message"], answer


def test_inputs_changed_while_timing_are_reported(shared_worker, tmp_path):
    mutating = SLOW_CANDIDATE.replace("time.sleep(0.004)", "x.add_(1.0)")
    start_both(shared_worker, tmp_path, mutating)
    assert shared_worker.call("time_start", side="candidate", case=1, seed=1000, warmup_ms=0, flush=False)["ok"]
    assert shared_worker.call("time_finish")["inputs_modified"] is True
    assert shared_worker.call("time_start", side="candidate", case=1, seed=1000, warmup_ms=0, flush=False)["ok"]
    assert shared_worker.call("time_sample", method="monotonic_clock", seed=3)["inputs_modified"] is True
    assert shared_worker.call("time_finish")["inputs_modified"] is True  # though its inputs were made again


def test_candidate_failure_while_timing(shared_worker, tmp_path):
    start_both(shared_worker, tmp_path, SLOW_CANDIDATE.replace("time.sleep(0.004)", "raise KeyError('late')"))
    response = shared_worker.call("time_start", side="candidate", case=0, seed=1000, warmup_ms=0, flush=False)
    assert response["kind"] == "runtime_error" and "KeyError" in response["message"]
    assert shared_worker.call("time_finish")["kind"] == "bad_request"  # nothing left to finish


def test_bad_timing_requests(shared_worker, tmp_path):
    task, _ = start_both(shared_worker, tmp_path, SLOW_CANDIDATE)
    base = {"side": "candidate", "case": 0, "seed": 1000}
    for fields in ({"case": 5}, {"side": "both"}, {"warmup_ms": -1}, {"flush": "yes"}, {"seed": -1},
                   {"side": "reference"}, {"side": "reference", "task": "relative.py"}):
        assert shared_worker.call("time_start", **{**base, **fields})["kind"] == "bad_request", fields
    assert shared_worker.call("time_start", **base, warmup_ms=0)["ok"]
    for fields in ({"method": "cuda_events", "seed": 1},  # a GPU method on the CPU
                   {"method": "cuda_graph", "seed": 1}, {"method": "x", "seed": 1},
                   {"method": "monotonic_clock", "seed": -1}, {"method": "monotonic_clock"},
                   {"method": "monotonic_clock", "seed": 1, "out": "relative.kvt"}):
        assert shared_worker.call("time_sample", **fields)["kind"] == "bad_request", fields
    assert shared_worker.call("time_graph")["graph_failed"] == "no graphs on the cpu backend"
    assert shared_worker.call("time_finish", out="relative.kvt")["kind"] == "bad_request"


def test_a_failed_capture_gives_the_stream_back(monkeypatch):
    """torch.cuda.graph's exit raises before it restores the stream when the capture
    was invalidated; GraphReplay puts the stream back itself."""
    current = ["default"]

    class Capture:
        def __init__(self, graph):
            pass

        def __enter__(self):
            current[0] = "capture"

        def __exit__(self, *exc):
            raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(timers, "_CUDAGraph", object)
    monkeypatch.setattr(timers, "_graph_context", Capture)
    monkeypatch.setattr(timers, "_current_stream", lambda: current[0])
    monkeypatch.setattr(timers, "_set_stream", lambda s: current.__setitem__(0, s))
    repaired = []
    monkeypatch.setattr(timers, "_repair_generator", lambda device: repaired.append(current[0]))

    class Stream(str):
        device = "cuda:0"
    current[0] = Stream("default")
    with pytest.raises(timers.GraphUnavailable, match="not permitted"):
        timers.GraphReplay(lambda i: None, 3, lambda: None)
    assert current[0] == "default" and repaired == ["default"]  # stream first, then the generator


def test_a_generator_left_unusable_is_the_workers_error(monkeypatch):
    from kvault_worker.errors import WorkerError

    class Refused:
        def __init__(self, graph):
            pass

        def __enter__(self):
            raise RuntimeError("capture refused")

        def __exit__(self, *exc):
            return False
    monkeypatch.setattr(timers, "_CUDAGraph", object)
    monkeypatch.setattr(timers, "_graph_context", Refused)
    with pytest.raises(WorkerError) as raised:
        timers._repair_generator("cpu")
    assert raised.value.kind == "internal" and "random generator" in str(raised.value)


def test_a_graphs_input_pool_is_made_from_each_samples_seed():
    """The pool a graph's calls read from is drawn anew from every sample's seed: sets
    made ahead for fixed seeds fit no later sample (timing/side.py, GraphInputs)."""
    from kvault_worker.device import Device
    from kvault_worker.timing import side

    def make_inputs(seed):
        generator = torch.Generator().manual_seed(int(seed) % (1 << 62))
        return [torch.randn(4, 3, generator=generator), 7]

    sets = side.GraphInputs(make_inputs(1), make_inputs, 5, Device("cpu", 0))
    ahead = sets.pool[0].clone()  # the capture's pool: fixed seeds
    assert torch.equal(ahead[0], make_inputs(side.POOL_SEED)[0])
    sets.refresh(123)
    first = sets.pool[0].clone()
    assert not any(torch.equal(first[k], ahead[j]) for k in range(side.POOL_SETS) for j in range(side.POOL_SETS))
    for call, k in enumerate(side.assignment(123, 5).tolist()):
        assert torch.equal(sets.call_inputs[call][0], make_inputs(side.pool_seed(123, k))[0])
        assert sets.call_inputs[call][1] == 7
    sets.refresh(456)
    assert not torch.equal(sets.pool[0], first)
    sets.refresh(123)
    assert torch.equal(sets.pool[0], first)  # both sides make the same sets for a seed


def test_inputs_too_large_for_a_graphs_sets_get_no_graph(monkeypatch):
    """The pool and one call's set must fit GRAPH_INPUT_BYTES: larger inputs are timed
    with events rather than holding five sets of them (the engine's lease counts none)."""
    from kvault_worker.device import Device
    from kvault_worker.timing import side

    monkeypatch.setattr(side, "GRAPH_INPUT_BYTES", 5 * 4 * 12)  # the pool and one set of 12 float32
    made = []

    def make_inputs(seed):
        made.append(seed)
        return [torch.randn(4, 3)]

    side.GraphInputs(make_inputs(1), make_inputs, 1, Device("cpu", 0))  # fits exactly
    made.clear()
    with pytest.raises(side.GraphInputsUnfit, match="would pass"):
        side.GraphInputs(make_inputs(1), make_inputs, 2, Device("cpu", 0))
    assert made == [1]  # refused before any set was made
    timed = side.TimedSide(torch.relu, [torch.randn(4, 4)], Device("cpu", 0), "runtime_error", "the candidate",
                           flush=False, make_inputs=lambda seed: [torch.randn(4, 4)])
    timed._capture_calls(1)  # a side whose sets do not fit: events, and why
    assert timed.graph is None and timed.graph_inputs is None and "would pass" in timed.graph_failure
    timed.release()


def test_a_reference_workers_last_requests_give_cached_memory_back():
    """A reference run and a time_finish (which may keep a side) end with the device's
    cache trimmed to what a worker keeps, whether they answer or raise: the reference
    worker sits idle between verifications outside any memory lease."""
    from kvault_worker.session import trimming

    class Device:
        released = 0

        def release_memory(self):
            self.released += 1

    class Session:
        device = Device()

    def broken(request):
        raise RuntimeError("the request failed")

    assert trimming(Session, lambda request: {"ok": request})(1) == {"ok": 1}
    with pytest.raises(RuntimeError):
        trimming(Session, broken)({})
    assert Session.device.released == 2
    Session.device = None
    assert trimming(Session, lambda request: {})({}) == {}  # before hello: nothing to trim


def test_a_released_side_leaves_the_snapshot_clean():
    from kvault_worker.device import Device
    from kvault_worker.integrity import SNAPSHOT
    from kvault_worker.timing import side

    timed = side.TimedSide(torch.relu, [torch.randn(8)], Device("cpu", 0), "runtime_error", "the candidate",
                           flush=False)
    assert timed._guards[0] in SNAPSHOT.guarded
    kept = timed  # still referenced after release (a traceback's frame would do the same)
    timed.release()
    assert timed._guards[0] not in SNAPSHOT.guarded
    assert not [c for c in SNAPSHOT.changes() if "timed side" in c]
    del kept
