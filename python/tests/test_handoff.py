"""Outputs compared on the device (kvault_worker/handoff.py, docs/device-compare.md):
the element rule and statistics, the layout check, and the requests on a CPU worker
(which never offers); the hand-over itself needs a CUDA GPU (last test)."""
import os
import secrets
import types

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


@pytest.mark.skipif(not torch.cuda.is_available() or torch.version.hip is not None,
                    reason="needs a CUDA GPU (the hand-over maps CUDA device memory)")
def test_pooled_buffers_serve_the_same_holder_again(start_worker, tmp_path):
    """Consecutive runs of one candidate reuse the offer's buffers (and the candidate's
    mappings of them); each run is compared on what it delivered, and a wrong run
    after right ones is still caught."""
    task = write_file(tmp_path, "relu.py", TASK)
    right = write_file(tmp_path, "right.py", """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
""")
    wrong_on_seed_3 = write_file(tmp_path, "wrong.py", """
import torch, torch.nn as nn
class ModelNew(nn.Module):
    calls = 0
    def forward(self, x):
        ModelNew.calls += 1
        return torch.relu(x) + (1.0 if ModelNew.calls > 6 else 0.0)
""")
    rule = [{"rtol": 1e-4, "atol": 1e-4, "forbid": False}]
    for cand, expected in ((right, [True, True, True]), (wrong_on_seed_3, [True, True, False])):
        ref_worker, cand_worker = start_worker("cuda"), start_worker("cuda")
        folder = tmp_path / ("own-" + os.path.basename(cand))
        folder.mkdir()
        assert cand_worker.call("load", task=task, candidate={"format": "kernelbench", "path": cand})["ok"]
        got = []
        for seed in (1, 2, 3):
            spec = {"socket": str(folder / ("h%d.sock" % seed)), "secret": secrets.token_hex(16)}
            offered = ref_worker.call("reference", task=task, case=0, seed=seed, out=str(tmp_path / "r.kvt"),
                                      handoff=dict(spec, sets=2))
            assert offered["ok"] and "handoff" in offered, offered
            ran = cand_worker.call("run", case=0, seed=seed, out=str(folder / "c.kvt"),
                                   repeat_out=str(folder / "p.kvt"),
                                   output_layout=offered["handoff"]["output_layout"], handoff=spec)
            assert ran["ok"] and ran["handoff"] == "delivered", ran
            compared = ref_worker.call("handoff_compare", tolerances=rule, out_reference=str(folder / "hr.kvt"),
                                       out_candidate=str(folder / "hc.kvt"))
            assert compared["ok"] and compared["served"], compared
            got.append(compared["calls"][0]["match"])
        assert got == expected


class _FakeMapping:
    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.closed = False

    def close(self):
        self.closed = True


@pytest.fixture
def fake_devmem(monkeypatch):
    """devmem's allocations and imports without a GPU: mappings that record closing,
    descriptors of /dev/null."""
    made = []

    def allocate(nbytes, index):
        made.append(_FakeMapping(nbytes))
        return made[-1], os.open(os.devnull, os.O_RDONLY)

    def import_fd(fd, nbytes, index):
        made.append(_FakeMapping(nbytes))
        return made[-1]

    monkeypatch.setattr(handoff.devmem, "allocate", allocate)
    monkeypatch.setattr(handoff.devmem, "import_fd", import_fd)
    monkeypatch.setattr(handoff, "_MAPPED", {})
    return made


def test_pool_reuses_buffers_only_for_their_holder(fake_devmem):
    pool = handoff.BufferPool(limit_bytes=1000)
    device = types.SimpleNamespace(index=0)
    a = pool.take("/w/w1", 100, device)
    pool.give_back([a])
    assert pool.take("/w/w1", 100, device) is a  # the same candidate's next run
    b = pool.take("/w/w1", 200, device)
    assert b is not a
    pool.give_back([a, b])
    c = pool.take("/w/w2", 100, device)  # another candidate: nothing of w1's is reused
    assert c is not a and a.mapping.closed and b.mapping.closed
    assert not c.mapping.closed and c.ident != a.ident


def test_pool_keeps_at_most_its_limit(fake_devmem):
    pool = handoff.BufferPool(limit_bytes=250)
    bufs = [pool.take("/w/w1", 100, types.SimpleNamespace(index=0)) for _ in range(3)]
    pool.give_back(bufs)
    assert [b.mapping.closed for b in bufs] == [False, False, True]
    pool.release()
    assert all(b.mapping.closed for b in bufs) and not pool.free


def test_candidate_maps_an_offered_buffer_once(fake_devmem):
    transient = []
    first = handoff._mapping("id1", 7, 100, 0, transient)
    assert handoff._mapping("id1", 8, 100, 0, transient) is first
    other = handoff._mapping("id2", 9, 100, 0, transient)
    anonymous = handoff._mapping(None, 10, 100, 0, transient)
    assert transient == [anonymous]  # no ident: unmapped after the delivery
    handoff._forget_mapped(keep={"id2"})
    assert first.closed and not other.closed
    assert handoff._mapping("id1", 11, 100, 0, transient) is not first  # mapped anew


def test_worker_keeps_a_bounded_device_cache(monkeypatch):
    from kvault_worker import device as device_module
    emptied = []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(True))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda index=None: 1 << 30)
    for total, kept in ((141 << 30, 2 << 30), (24 << 30, 3 << 28)):  # an H200; a 24 GB GPU keeps 1/32
        monkeypatch.setattr(torch.cuda, "get_device_properties",
                            lambda index, t=total: types.SimpleNamespace(total_memory=t))
        gpu = device_module.Device("cuda", 0)
        assert gpu.kept_bytes() == kept
        for unused, everything, expected in ((kept, False, 0), (kept + 1, False, 1), (0, True, 1)):
            emptied.clear()
            monkeypatch.setattr(torch.cuda, "memory_reserved", lambda index=None, r=unused: r + (1 << 30))
            gpu.release_memory(everything=everything)
            assert len(emptied) == expected
    assert device_module.Device("cpu", 0).kept_bytes() == 0


def test_pool_takes_its_bound_from_the_device(fake_devmem, monkeypatch):
    from kvault_worker import device as device_module
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda index: types.SimpleNamespace(total_memory=16 << 30))
    pool = handoff.BufferPool()
    gpu = device_module.Device("cuda", 0)
    bufs = [pool.take("/w/w1", 300 << 20, gpu) for _ in range(2)]
    assert pool.limit_bytes == 512 << 20  # 1/32 of 16 GiB
    pool.give_back(bufs)
    assert [b.mapping.closed for b in bufs] == [False, True]


def test_atol_by_rms_follows_the_outputs_scale():
    # A long fp32 reduction on signed inputs: small outputs where large terms cancel carry
    # the rounding of the large ones.
    ref = torch.tensor([100.0, -100.0, 0.17783, 50.0])
    cand = torch.tensor([100.0, -100.0, 0.17765, 50.0])
    assert not handoff.compare_tensor(ref, cand, 1e-4, 1e-4, False)["match"]
    assert handoff.compare_tensor(ref, cand, 1e-4, 1e-4, False, atol_by_rms=True)["match"]
    # an error at the output's own scale still fails
    wrong = torch.tensor([100.0, -100.0, 5.0, 50.0])
    assert not handoff.compare_tensor(ref, wrong, 1e-4, 1e-4, False, atol_by_rms=True)["match"]
    # outputs below 1 keep the absolute tolerance
    small = torch.tensor([0.5, 0.25])
    assert not handoff.compare_tensor(small, small + 2e-4, 1e-4, 1e-4, False, atol_by_rms=True)["match"]


def test_an_offer_that_fails_is_made_once_more_after_giving_memory_back():
    from kvault_worker import devmem
    from kvault_worker.session.reference import ReferenceRole
    released = []
    me = types.SimpleNamespace(
        buffer_pool=types.SimpleNamespace(release=lambda: released.append("pool")),
        device=types.SimpleNamespace(release_memory=lambda everything=False: released.append(("cache", everything))))
    tries = []

    def make():
        tries.append(True)
        if len(tries) == 1:
            raise devmem.DevmemError("cuMemCreate failed with CUDA driver error 2")
        return "offer"

    assert ReferenceRole._with_room_on_failure(me, make) == "offer"
    assert released == ["pool", ("cache", True)] and len(tries) == 2

    # A second failure is the caller's: it writes the output to a file instead.
    def never():
        tries.append(True)
        raise OSError("no room")

    tries.clear()
    with pytest.raises(OSError):
        ReferenceRole._with_room_on_failure(me, never)
    assert len(tries) == 2
