"""The worker's copies of engine rules against the golden vectors of tests/golden/,
which the engine's unit tests read too: the element comparison on the device
(handoff.compare_tensor vs src/check/compare.cc), the timing statistics and the
stopping rule (timing/stats.py vs src/engine/timing_statistics.cc) and the rounds
loop (timing/rounds.py vs src/engine/timed_case.cc)."""
import json
import math
from pathlib import Path

import pytest
import torch

from kvault_worker.handoff import compare_tensor
from kvault_worker.timing import rounds, stats, timers

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool}


def load(name):
    with open(GOLDEN / name) as f:
        return json.load(f)


def number(v):
    """A golden number: "nan", "inf", "-inf", or null for infinity."""
    if v is None:
        return math.inf
    return float(v) if isinstance(v, str) else v


def near(expected, got):
    expected = number(expected)
    if math.isnan(expected) or math.isinf(expected):
        return got == expected or (math.isnan(expected) and math.isnan(got))
    return got == expected or abs(got - expected) <= 1e-12 * abs(expected)


def expand(spec):
    if isinstance(spec, list):
        return list(spec)
    values = list(spec["repeat"]) * spec["times"]
    for index, value in spec.get("set", []):
        values[index] = value
    return values


def tensor(dtype, spec):
    values = expand(spec)
    if dtype.is_floating_point:
        return torch.tensor([number(v) for v in values], dtype=dtype)
    return torch.tensor(values, dtype=torch.int64).to(dtype)


def ids(vectors):
    return [v["name"] for v in vectors]


COMPARE = load("compare.json")["vectors"]
STATS = load("timing_statistics.json")
ROUNDS = load("timing_rounds.json")["vectors"]


def test_golden_files_are_not_empty():
    assert len(COMPARE) >= 10 and len(STATS["series"]) >= 5 and len(STATS["stopping"]) >= 8
    assert len(ROUNDS) >= 3


# compare_tensor runs where the outputs live: on the GPU in production.
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("vector", COMPARE, ids=ids(COMPARE))
def test_compare_tensor_gives_the_golden_statistics(vector, device):
    dtype = DTYPES[vector["dtype"]]
    got = compare_tensor(tensor(dtype, vector["reference"]).to(device),
                         tensor(dtype, vector["candidate"]).to(device),
                         vector["rtol"], vector["atol"], vector["nan_policy"] == "forbid")
    want = vector["expected"]
    assert (got["match"], got["compared"], got["mismatched"]) == (want["match"], want["compared"],
                                                                  want["mismatched"])
    assert near(want["max_abs"], got["max_abs"]), got
    assert near(want["max_rel"], got["max_rel"]), got


@pytest.mark.parametrize("series", STATS["series"], ids=ids(STATS["series"]))
def test_statistics_of_golden_series(series):
    values = [float(v) for v in series["values"]]
    for q, expected in series["quantiles"]:
        assert near(expected, stats.quantile(values, q)), q
    assert near(series["median"], stats.median(values))
    assert near(series["iqr"], stats.iqr(values))
    assert near(series["relative_noise"], stats.relative_noise(values))


@pytest.mark.parametrize("case", STATS["stopping"], ids=ids(STATS["stopping"]))
def test_stopping_rule_on_golden_cases(case):
    rule = stats.StoppingRule(**case["rule"])
    assert rule.decide([[float(v) for v in s] for s in case["series"]], case["elapsed_ms"]) == case["stop"]


class _Device:
    is_gpu = False


class ScriptedSide:
    """A side whose k-th batch answers the golden file's k-th batch of that side."""

    def __init__(self, name, batches, log):
        self.name, self.batches, self.log, self.device = name, batches, log, _Device()
        self.served = 0

    def batch(self, method, cold, warm):
        self.log.append(self.name)
        got = self.batches[self.served]
        self.served += 1
        assert (len(got.get("cold_ms", [])), len(got["warm_ms"])) == (cold, warm)
        return {"cold_ms": list(got.get("cold_ms", [])), "warm_ms": list(got["warm_ms"]),
                "wall_ms": list(got["wall_ms"])}


@pytest.mark.parametrize("vector", ROUNDS, ids=ids(ROUNDS))
def test_rounds_loop_on_golden_scripts(vector):
    log = []
    sides = [ScriptedSide(name, vector["batches"][name], log) for name in ("reference", "candidate")]
    rule = stats.StoppingRule(**vector["rule"])
    result = rounds.measure(sides, rule, timers.CLOCK, batch=vector["batch"], flush=vector["flush"])
    want = vector["expected"]
    assert log == want["order"]
    assert (result["rounds"], result["stop"]) == (want["rounds"], want["stop"])
    for name, got in zip(("reference", "candidate"), result["sides"]):
        for key, expected in want[name].items():
            assert key in got and near(expected, got[key]), (name, key, got)
        # Every summary the golden file leaves out is absent here too.
        assert set(got) == set(want[name]), (name, sorted(got))
