"""Parquet rows <-> JSON Lines for `kvault corpus` (docs/corpus.md): the engine reads
and writes JSON Lines, this module is its only way to and from Parquet.

    python -m kvault_export.rows to-jsonl IN.parquet OUT.jsonl
    python -m kvault_export.rows to-parquet IN.jsonl OUT.parquet

to-jsonl writes one JSON object per row, in row order, so line N is row N (1-based);
bytes become text (UTF-8, invalid bytes replaced), NaN and infinities null.
to-parquet infers nested types (lists, structs) from all rows, in chunks of
CHUNK_ROWS, so a row's
`reward_model.ground_truth` stays a struct that trainers read as a dict.

Exit 0 when written; 3 (with a line on stderr) when pyarrow cannot be imported;
2 for an unreadable or malformed input file; 1 for anything else."""
import json
import math
import sys

NO_PYARROW = 3
BAD_INPUT = 2


def _plain(value):
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def to_jsonl(pq, src, dst):
    parquet = pq.ParquetFile(src)
    with open(dst, "w", encoding="utf-8") as out:
        for batch in parquet.iter_batches(batch_size=2048):
            for row in batch.to_pylist():
                out.write(json.dumps(_plain(row), ensure_ascii=False, separators=(",", ":")))
                out.write("\n")


CHUNK_ROWS = 5000  # rows held at once: memory stays bounded for any file size


def _chunks(src):
    rows = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
                if len(rows) == CHUNK_ROWS:
                    yield rows
                    rows = []
    if rows:
        yield rows


def to_parquet(pa, pq, src, dst):
    # Pass 1: one schema for every row (a column null in one chunk and a number or a
    # struct in another is promoted); pass 2: the rows, chunk by chunk, in it.
    schema = None
    for rows in _chunks(src):
        chunk = pa.Table.from_pylist(rows).schema
        schema = chunk if schema is None else pa.unify_schemas([schema, chunk], promote_options="permissive")
    if schema is None:
        raise ValueError("no rows")
    with pq.ParquetWriter(dst, schema) as writer:
        for rows in _chunks(src):
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3 or argv[0] not in ("to-jsonl", "to-parquet"):
        print(__doc__, file=sys.stderr)
        return 1
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        print("pyarrow is not importable by %s (%s); pip install pyarrow" % (sys.executable, e), file=sys.stderr)
        return NO_PYARROW
    mode, src, dst = argv
    try:
        if mode == "to-jsonl":
            to_jsonl(pq, src, dst)
        else:
            to_parquet(pa, pq, src, dst)
    except (OSError, ValueError, pa.ArrowException) as e:
        # The caller names the file; the reason only (a temporary file's path is no
        # business of the user's).
        what = "not a readable Parquet file" if mode == "to-jsonl" else "cannot write Parquet"
        print("%s (%s)" % (what, str(e).strip()), file=sys.stderr)
        return BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
