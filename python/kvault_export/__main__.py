import argparse
import json
import sys

NO_PYARROW = 3


def arrow_type(pa, kind):
    return {"string": pa.string(), "int": pa.int64(), "double": pa.float64(),
            "bool": pa.bool_(), "json": pa.string()}[kind]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m kvault_export")
    ap.add_argument("--columns", required=True)
    ap.add_argument("--rows", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        print("pyarrow is not importable by %s (%s); pip install pyarrow" % (sys.executable, e), file=sys.stderr)
        return NO_PYARROW
    columns = json.load(open(a.columns))
    data = {c["name"]: [] for c in columns}
    with open(a.rows) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            for c in columns:
                v = row.get(c["name"])
                if c["type"] == "json" and v is not None:
                    v = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
                data[c["name"]].append(v)
    schema = pa.schema([pa.field(c["name"], arrow_type(pa, c["type"]), nullable=c["nullable"] or c["type"] == "json")
                        for c in columns])
    pq.write_table(pa.table(data, schema=schema), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
