"""Outputs compared on the device (kvault_worker/handoff.py, docs/device-compare.md):
the element rule and statistics, the layout check, and the requests on a CPU worker
(which never offers); the hand-over itself needs a CUDA GPU (last test)."""
import os
import secrets

import pytest
import torch

from conftest import write_file
from kvault_worker import handoff, tensorfile
from kvault_worker.native import OutputLayout

NAN, INF = float("nan"), float("inf")


def stats(ref, cand, rtol=1e-4, atol=1e-4, forbid=False):
    return handoff.compare_tensor(torch.tensor(ref), torch.tensor(cand), rtol, atol, forbid)


def test_matching_values_report_the_largest_errors():
    s = stats([1.0, 2.0, 0.0], [1.0, 2.0001, 1e-5])
    assert s["match"] and s["mismatched"] == 0 and s["compared"] == 3
    assert s["max_abs"] == pytest.approx(1e-4, rel=1e-2)  # 2.0001 in float32
    assert s["max_rel"] == pytest.approx(5e-5, rel=1e-2)  # the zero reference is left out


def test_bound_is_atol_plus_rtol_times_the_reference():
    assert stats([100.0], [100.0 + 0.0100], rtol=1e-4, atol=1e-4)["match"]  # bound 0.0101
    assert not stats([100.0], [100.0 + 0.0102], rtol=1e-4, atol=1e-4)["match"]


def test_non_finite_values_follow_the_nan_policy():
    assert stats([NAN, INF, -INF], [NAN, INF, -INF])["match"]
    assert stats([NAN, 1.0], [1.0, NAN])["mismatched"] == 2
    assert stats([INF], [-INF])["mismatched"] == 1
    assert stats([NAN, INF], [NAN, INF], forbid=True)["mismatched"] == 2
    finite_only = stats([NAN, 1.0], [NAN, 1.5])
    assert finite_only["max_abs"] == pytest.approx(0.5)  # NaN pairs are not in the maxima


def test_integers_and_bools_compare_exactly():
    assert handoff.compare_tensor(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), 0, 0, False)["mismatched"] == 1
    assert handoff.compare_tensor(torch.tensor([True]), torch.tensor([True]), 0, 0, False)["match"]


def test_half_precision_is_widened_exactly():
    ref = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    s = handoff.compare_tensor(ref, ref.clone(), 1e-2, 1e-2, False)
    assert s["match"] and s["max_abs"] == 0.0


def test_chunks_give_the_same_statistics(monkeypatch):
    torch.manual_seed(0)
    ref = torch.randn(1000)
    cand = ref + torch.randn(1000) * 1e-3
    cand[17] = NAN
    whole = handoff.compare_tensor(ref, cand, 1e-4, 1e-3, False)
    monkeypatch.setattr(handoff, "_CHUNK", 64)
    assert handoff.compare_tensor(ref, cand, 1e-4, 1e-3, False) == whole
    assert whole["mismatched"] >= 1


def test_layout_mismatch_names_what_differs():
    layout = OutputLayout("tuple", [(torch.float32, [2, 3]), (torch.int64, [4])])
    good = (torch.zeros(2, 3), torch.zeros(4, dtype=torch.int64))
    assert handoff.layout_mismatch(good, layout) is None
    assert handoff.layout_mismatch(list(good), layout) is None  # tuple and list alike
    assert "structure" in handoff.layout_mismatch(good[:1], layout)
    assert "dtype or shape" in handoff.layout_mismatch((torch.zeros(3, 2), good[1]), layout)
    assert "not a tensor" in handoff.layout_mismatch({"a": good[0]}, layout)
    assert "structure" in handoff.layout_mismatch(torch.zeros(2, 3), layout)


TASK = """
import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(64)]
"""


def test_cpu_worker_declines_an_offer_and_writes_the_file(shared_worker, tmp_path):
    task = write_file(tmp_path, "relu.py", TASK)
    out = str(tmp_path / "ref.kvt")
    response = shared_worker.call("reference", task=task, case=0, seed=1, out=out,
                                  handoff={"socket": str(tmp_path / "h.sock"), "secret": "ab", "sets": 2})
    assert response["ok"], response
    assert "handoff" not in response
    value, _ = tensorfile.read(out)
    assert value.shape == (64,)
    assert not os.path.exists(tmp_path / "h.sock")


def test_compare_and_release_need_an_offer(shared_worker, tmp_path):
    for op in ("handoff_compare", "handoff_release"):
        response = shared_worker.call(op, tolerances=[])
        assert not response["ok"] and response["kind"] == "bad_request", response
        assert "no handoff offered" in response["message"]


@pytest.mark.skipif(not torch.cuda.is_available() or torch.version.hip is not None,
                    reason="needs a CUDA GPU (the hand-over maps CUDA device memory)")
def test_candidate_worker_hands_its_outputs_over(start_worker, tmp_path):
    task = write_file(tmp_path, "relu.py", TASK)
    cand = write_file(tmp_path, "cand.py", """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
""")
    ref_worker, cand_worker = start_worker("cuda"), start_worker("cuda")
    spec = {"socket": str(tmp_path / "h.sock"), "secret": secrets.token_hex(16)}
    offered = ref_worker.call("reference", task=task, case=0, seed=1, out=str(tmp_path / "r.kvt"),
                              handoff=dict(spec, sets=2))
    assert offered["ok"] and "handoff" in offered, offered
    assert cand_worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})["ok"]
    ran = cand_worker.call("run", case=0, seed=1, out=str(tmp_path / "c.kvt"), repeat_out=str(tmp_path / "p.kvt"),
                           output_layout=offered["handoff"]["output_layout"], handoff=spec)
    assert ran["ok"] and ran["handoff"] == "delivered", ran
    assert not os.path.exists(tmp_path / "c.kvt")
    compared = ref_worker.call("handoff_compare", tolerances=[{"rtol": 1e-4, "atol": 1e-4, "forbid": False}],
                               out_reference=str(tmp_path / "hr.kvt"), out_candidate=str(tmp_path / "hc.kvt"))
    assert compared["ok"] and compared["served"], compared
    assert [c["match"] for c in compared["calls"]] == [True, True]
    assert compared["calls"][0]["compared"] == 64
