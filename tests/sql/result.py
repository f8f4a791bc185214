"""Writes what DuckDB makes of the emitted query, for the `--from-sql-result` test in
tests/sql_engines.rs (which checks what tracediag reads back from it).

    python result.py MANIFEST.json

The manifest: `canonical` (a Parquet file with the canonical columns) and `columns` (those
of its columns the table `requests` holds); `writes`, in order, each a query (over
`requests` or files written before it) and the file its rows are copied to (Parquet or CSV
by extension, CSV with a header); `find`, each a file, a column and a value: prints
`row FILE N`, the 1-based row of the file holding that value there.
"""

import json
import sys

import duckdb
import pyarrow.csv as pc
import pyarrow.parquet as pq


def main():
    manifest = json.load(open(sys.argv[1]))
    con = duckdb.connect()
    select = ", ".join(f'"{c}"' for c in manifest["columns"])
    con.execute(f"CREATE VIEW requests AS SELECT {select} FROM read_parquet('{manifest['canonical']}')")
    for w in manifest["writes"]:
        out = w["out"]
        fmt = "(FORMAT csv, HEADER)" if out.endswith(".csv") else "(FORMAT parquet)"
        con.execute(f"COPY ({w['query']}) TO '{out}' {fmt}")
    for f in manifest["find"]:
        path = f["file"]
        table = pc.read_csv(path) if path.endswith(".csv") else pq.read_table(path)
        values = table.column(f["column"]).to_pylist()
        print(f"row {path} {values.index(f['value']) + 1}")


if __name__ == "__main__":
    main()
