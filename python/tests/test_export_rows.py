"""python -m kvault_export.rows: Parquet <-> JSON Lines for the vault (docs/corpus.md)."""
import json

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from kvault_export import rows  # noqa: E402


def test_rows_round_trip_in_order(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"i": i, "prompt": [{"role": "user", "content": str(i)}]}) + "\n"
                           for i in range(3)))
    assert rows.main(["to-parquet", str(src), str(tmp_path / "t.parquet")]) == 0
    assert rows.main(["to-jsonl", str(tmp_path / "t.parquet"), str(tmp_path / "out.jsonl")]) == 0
    back = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["i"] for r in back] == [0, 1, 2] and back[1]["prompt"][0]["content"] == "1"


def test_unreadable_parquet_is_named_as_such_without_pyarrows_wording_alone(tmp_path, capsys):
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"a": list(range(100))}), good)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[:60])
    assert rows.main(["to-jsonl", str(cut), str(tmp_path / "out.jsonl")]) == rows.BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("not a readable Parquet file ("), err
    assert str(tmp_path) not in err  # the caller names the file once
