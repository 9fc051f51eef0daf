"""Parquet files of `kvault export` (docs/export.md): the engine writes the rows as
JSON Lines and their columns as JSON (src/export/rows.h, the one row model); this
turns them into a Parquet file with pyarrow.

    python -m kvault_export --columns COLUMNS.json --rows ROWS.jsonl --out OUT.parquet

Exit 0 when written; 3 (with a line on stderr) when pyarrow cannot be imported;
1 for anything else."""
