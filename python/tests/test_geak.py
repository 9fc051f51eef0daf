"""The GEAK-eval test runner (kvault_worker/geak.py) on plain-Python implementations."""
import pytest
import torch

from kvault_worker import geak

IMPL = "import torch\n\ndef double(x):\n    return x * 2\n"


def test_tritonbench_g_takes_result_gold_or_the_only_test_function():
    out = geak.run_reference("tritonbench-g", IMPL, "result_gold = {'a': double(torch.ones(3))}\n")
    assert torch.equal(out["a"], torch.full((3,), 2.0))
    out = geak.run_reference("tritonbench-g", IMPL, "def test_d():\n    return [double(torch.ones(2))]\n")
    assert torch.equal(out[0], torch.full((2,), 2.0))
    with pytest.raises(geak.GeakTestFailure, match="exactly one"):
        geak.run_reference("tritonbench-g", IMPL, "def test_a():\n    pass\ndef test_b():\n    pass\n")


def test_candidate_runs_the_tests_on_its_own_globals_without_changing_them():
    cand = {"double": lambda x: x * 3, "torch": torch}
    out = geak.run_candidate("tritonbench-g", cand, "result_gold = double(torch.ones(1))\n")
    assert out.item() == 3.0
    assert "result_gold" not in cand


ROCM_TESTS = '''
import pytest

@pytest.mark.parametrize("n", [1, 4])
@pytest.mark.parametrize("scale", [2, 3])
def test_double(n, scale, request, tmp_path):
    out = double(torch.ones(n)) * scale
    torch.save({"out": out, "_CALL_SUCCESS_": True}, tmp_path / (request.node.name + ".pt"))
'''


def test_rocmbench_calls_every_parameter_combination_and_collects_the_saved_dicts():
    out = geak.run_reference("rocmbench", IMPL, ROCM_TESTS)
    assert sorted(out) == ["test_double[2-1]", "test_double[2-4]", "test_double[3-1]", "test_double[3-4]"]
    assert torch.equal(out["test_double[3-4]"]["out"], torch.full((4,), 6.0))
    assert "_CALL_SUCCESS_" not in out["test_double[2-1]"]


def test_rocmbench_call_success_must_be_true():
    tests = ROCM_TESTS.replace('"_CALL_SUCCESS_": True', '"_CALL_SUCCESS_": False')
    with pytest.raises(geak.GeakTestFailure, match="_CALL_SUCCESS_"):
        geak.run_reference("rocmbench", IMPL, tests)
    with pytest.raises(geak.GeakTestFailure, match="no .pt"):
        geak.run_reference("rocmbench", IMPL, "def test_nothing():\n    pass\n")
