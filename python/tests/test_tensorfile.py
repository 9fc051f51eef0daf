"""The .kvt writer and reader (docs/tensor-file.md), in process."""
import json
import math
import struct

import pytest
import torch

from kvault_worker import tensorfile
from kvault_worker.tensorfile import FormatError, Unsupported


def round_trip(tmp_path, value):
    path = str(tmp_path / "value.kvt")
    tensorfile.write_value(path, value)
    return tensorfile.read(path), path


def test_nested_structure_round_trips(tmp_path):
    a, b = torch.randn(3, 4), torch.arange(5, dtype=torch.int64)
    value = (a, [b, 3, -2.5, True, None, "label"], {"k": a * 2, 7: (b,)})
    (back, header), _ = round_trip(tmp_path, value)
    assert isinstance(back, tuple) and isinstance(back[1], list)
    assert torch.equal(back[0], a) and torch.equal(back[1][0], b)
    assert back[1][1:] == [3, -2.5, True, None, "label"]
    assert list(back[2]) == ["k", "7"] and torch.equal(back[2]["k"], a * 2)
    assert torch.equal(back[2]["7"][0], b)
    assert header["version"] == 1 and len(header["tensors"]) == 4
    assert header["tree"]["items"][1]["items"][3] == {"kind": "bool", "value": True}


def test_layout_is_aligned_and_little_endian(tmp_path):
    (_, header), path = round_trip(tmp_path, [torch.ones(3, dtype=torch.float32), torch.ones(1, dtype=torch.int8),
                                              torch.full((2,), 2.0, dtype=torch.float64)])
    blob = open(path, "rb").read()
    assert blob[:8] == b"KVTENS01"
    (header_len,) = struct.unpack("<Q", blob[8:16])
    assert json.loads(blob[16:16 + header_len]) == header
    data_start = (16 + header_len + 63) // 64 * 64
    assert set(blob[16 + header_len:data_start]) <= {0}
    offsets = [t["offset"] for t in header["tensors"]]
    assert offsets == [0, 64, 128] and [t["nbytes"] for t in header["tensors"]] == [12, 1, 16]
    assert blob[data_start:data_start + 4] == struct.pack("<f", 1.0)
    assert blob[data_start + 128:data_start + 136] == struct.pack("<d", 2.0)
    assert len(blob) == data_start + 128 + 16


def test_half_precision_bits_are_preserved(tmp_path):
    bf = torch.tensor([1.0, -2.5, float("nan"), float("inf"), 3.14159], dtype=torch.bfloat16)
    fp = torch.tensor([1.0, -2.5, 65504.0, float("-inf"), 1e-7], dtype=torch.float16)
    (back, header), path = round_trip(tmp_path, [bf, fp])
    assert [t["dtype"] for t in header["tensors"]] == ["bfloat16", "float16"]
    assert back[0].dtype == torch.bfloat16 and back[1].dtype == torch.float16
    assert torch.equal(back[0].view(torch.int16), bf.view(torch.int16))
    assert torch.equal(back[1].view(torch.int16), fp.view(torch.int16))
    blob = open(path, "rb").read()
    header_len = struct.unpack("<Q", blob[8:16])[0]
    start = (16 + header_len + 63) // 64 * 64
    assert struct.unpack("<h", blob[start:start + 2])[0] == bf.view(torch.int16)[0].item()


def test_non_contiguous_tensors_are_written_in_row_major_order(tmp_path):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    transposed, sliced = base.t(), base[:, ::2]
    expanded = torch.tensor([1.0, 2.0]).expand(3, 2)
    (back, header), _ = round_trip(tmp_path, (transposed, sliced, expanded))
    assert torch.equal(back[0], transposed.contiguous()) and back[0].shape == (6, 4)
    assert torch.equal(back[1], sliced.contiguous()) and torch.equal(back[2], expanded.contiguous())
    assert header["tensors"][0]["strides"] == [1, 6]  # as returned
    assert header["tensors"][2]["strides"] == [0, 1] and header["tensors"][2]["nbytes"] == 24


def test_scalars_zero_dim_and_empty_tensors(tmp_path):
    value = [torch.tensor(3.5), torch.empty(0, 4), torch.tensor([True, False])]
    (back, header), _ = round_trip(tmp_path, value)
    assert back[0].shape == () and back[0].item() == 3.5
    assert back[1].shape == (0, 4) and header["tensors"][1]["nbytes"] == 0
    assert back[2].dtype == torch.bool and back[2].tolist() == [True, False]


def test_non_finite_floats_are_strings(tmp_path):
    (back, header), _ = round_trip(tmp_path, [float("nan"), float("inf"), -math.inf, 1.5])
    assert [n["value"] for n in header["tree"]["items"]] == ["nan", "inf", "-inf", 1.5]
    assert math.isnan(back[0]) and back[1:] == [math.inf, -math.inf, 1.5]


def test_unsupported_values(tmp_path):
    value = [torch.randn(2, dtype=torch.complex64), object(), torch.randn(2).to_sparse(), {1, 2}]
    (back, header), _ = round_trip(tmp_path, value)
    assert back == [Unsupported("tensor:complex64"), Unsupported("object"),
                    Unsupported("tensor:sparse_coo"), Unsupported("set")]
    assert header["tensors"] == []


def test_cyclic_values_do_not_hang(tmp_path):
    cyclic = []
    cyclic.append(cyclic)
    (back, _), _ = round_trip(tmp_path, cyclic)
    depth = 0
    while isinstance(back, list):
        back, depth = back[0], depth + 1
    assert isinstance(back, Unsupported) and depth == tensorfile.MAX_DEPTH + 1


def test_reader_rejects_broken_files(tmp_path):
    (_, _), path = round_trip(tmp_path, [torch.randn(100)])
    blob = open(path, "rb").read()
    cases = {"magic": b"KVTENS02" + blob[8:], "truncated": blob[:-8], "short": blob[:10],
             "header": blob[:16] + b"{" * (len(blob) - 16)}
    for name, data in cases.items():
        broken = tmp_path / (name + ".kvt")
        broken.write_bytes(data)
        with pytest.raises(FormatError):
            tensorfile.read(str(broken))


def test_write_replaces_atomically(tmp_path):
    path = str(tmp_path / "out.kvt")
    tensorfile.write_value(path, [torch.zeros(2)])
    tensorfile.write_value(path, (torch.ones(3),))
    assert torch.equal(tensorfile.read(path)[0][0], torch.ones(3))
    assert [p.name for p in tmp_path.iterdir()] == ["out.kvt"]
