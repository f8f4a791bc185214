"""Runs the SQL that `tracediag rules --emit sql` wrote on real engines and compares the
answers with tracediag's own, row for row (tests/sql_engines.rs writes the manifest and
checks this script's report).

    python engines.py MANIFEST.json

For each case of the manifest: the table `requests` is the canonical columns (and the
row's source_file/source_row, to match rows up) of tracediag's `analyze --out` Parquet;
or, for a case with `tables` (a query emitted with `--like`), the raw log itself as each
engine reads it, rows matched up by `key` (the request id; rows sharing one are matched
to any equal row of the same id).
DuckDB and Spark (local mode, one session for every case) run the per-request query; its
metrics, _estimated flags, class, classes and dq_* flags must equal tracediag's for every
row. They run the summary query; its counts, shares and failures must equal those counted
from tracediag's rows and its `analyze --format json`, its percentiles the exact type-7
percentiles of tracediag's values to 1e-9 (and tracediag's rounded ones to 0.0005). The
Trino queries must parse with sqlglot's Trino dialect. Prints one line per check passed;
exits 1 after listing every difference.
"""

import datetime
import json
import math
import sys

import duckdb
import pyarrow.parquet as pq
import sqlglot

TOLERANCE = 1e-9
failures = []


def fail(msg):
    failures.append(msg)
    print("MISMATCH " + msg, file=sys.stderr)


def close(a, b, tol=TOLERANCE):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def type7(values, q):
    """Hyndman & Fan type 7 (tracediag's `stats::quantile7`)."""
    if not values:
        return None
    s = sorted(values)
    h = (len(s) - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def key(row):
    return (row["source_file"], row["source_row"])


def utc(t):
    """A timestamp as naive UTC: tracediag's are UTC-aware, the engines' naive UTC."""
    if t is None or t.tzinfo is None:
        return t
    return t.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def same(kind, a, b):
    if kind == "float":
        return close(a, b)
    if kind == "instant":
        return utc(a) == utc(b)
    return a == b


def same_row(ref, row, columns):
    return all(same(kind, ref[c], row[c]) for c, kind in columns.items())


def compare_keyed(case, engine, reference, got, columns):
    """Rows matched by `case["key"]`: each of tracediag's rows to an equal engine row of
    the same key, each engine row used once."""
    k = case["key"]
    by_key = {}
    for r in got:
        by_key.setdefault(r[k], []).append(r)
    bad = 0
    for ref in reference:
        rows = by_key.get(ref[k], [])
        match = next((i for i, r in enumerate(rows) if same_row(ref, r, columns)), None)
        if match is None:
            bad += 1
            if bad <= 20:
                near = rows[0] if rows else None
                diff = {c: (ref[c], near[c]) for c in columns if near is not None and not same_row(ref, near, {c: columns[c]})}
                fail(f"{case['name']} {engine}: {k} {ref[k]!r}: no equal row (tracediag, {engine}: {diff})")
            continue
        rows.pop(match)
    if bad == 0:
        print(f"rows {case['name']} {engine}: {len(reference)} rows equal in {len(columns)} columns")


def compare_rows(case, engine, reference, got, columns):
    """`columns`: {name: "float"|"exact"}."""
    if len(got) != len(reference):
        fail(f"{case['name']} {engine}: {len(got)} rows, tracediag has {len(reference)}")
        return
    if "key" in case:
        compare_keyed(case, engine, reference, got, columns)
        return
    by_key = {key(r): r for r in got}
    if len(by_key) != len(got):
        fail(f"{case['name']} {engine}: rows do not have distinct (source_file, source_row)")
        return
    bad = 0
    for ref in reference:
        row = by_key.get(key(ref))
        if row is None:
            fail(f"{case['name']} {engine}: no row for {key(ref)}")
            bad += 1
            continue
        for col, kind in columns.items():
            a, b = ref[col], row[col]
            same = close(a, b) if kind == "float" else a == b
            if not same:
                bad += 1
                if bad <= 20:
                    fail(f"{case['name']} {engine}: {key(ref)} {col}: tracediag {a!r}, {engine} {b!r}")
    if bad == 0:
        print(f"rows {case['name']} {engine}: {len(reference)} rows equal in {len(columns)} columns")


def compare_summary(case, engine, reference, summary_json, got):
    classes = case["class_order"]
    figures = case["figures"]
    total = len(reference)
    if [r["position"] for r in got] != list(range(len(classes) + 1)):
        fail(f"{case['name']} {engine} summary: positions {[r['position'] for r in got]}")
        return
    td_classes = {c["class"]: c for c in summary_json["classes"]}
    td_metrics = {m["name"]: m for m in summary_json["metrics"]}
    bad = len(failures)
    for row in got:
        cls = None if row["position"] == 0 else classes[row["position"] - 1]
        if row["class"] != cls:
            fail(f"{case['name']} {engine} summary: position {row['position']} is {row['class']!r}, expected {cls!r}")
            continue
        members = [r for r in reference if cls is None or r["class"] == cls]
        n_fail = sum(1 for r in members if r["outcome"] is not None and r["outcome"] != "ok")
        share = len(members) / total if total else None
        want = {"requests": len(members), "failures": n_fail}
        for k, v in want.items():
            if row[k] != v:
                fail(f"{case['name']} {engine} summary {cls}: {k} {row[k]}, tracediag's rows give {v}")
        if not close(row["share"], share):
            fail(f"{case['name']} {engine} summary {cls}: share {row['share']}, expected {share}")
        if cls is None:
            if row["requests"] != summary_json["rows"] or row["failures"] != summary_json["failures"]:
                fail(f"{case['name']} {engine} summary: totals {row['requests']}/{row['failures']}, tracediag says {summary_json['rows']}/{summary_json['failures']}")
        else:
            td = td_classes[cls]
            if (row["requests"], row["failures"]) != (td["count"], td["failures"]):
                fail(f"{case['name']} {engine} summary {cls}: {row['requests']}/{row['failures']}, tracediag says {td['count']}/{td['failures']}")
            # tracediag rounds a share to 3 decimals, half away from zero (1/16 is 0.063);
            # Python's round() goes to even on an exact half.
            if abs((row["share"] or 0.0) - td["share"]) > 0.0005 + 1e-12:
                fail(f"{case['name']} {engine} summary {cls}: share {row['share']}, tracediag says {td['share']}")
        for f in figures:
            values = [r[f] for r in members if r[f] is not None]
            if row[f + "_n"] != len(values):
                fail(f"{case['name']} {engine} summary {cls} {f}: n {row[f + '_n']}, expected {len(values)}")
            # tracediag's own (rounded) figures: end-to-end per class, every metric overall.
            td = None
            if f == "total_handler_ms" and cls is not None:
                td = td_classes[cls]["end_to_end_ms"]
            elif cls is None and f in td_metrics:
                td = td_metrics[f]
            for q in (50, 95, 99):
                v = row[f"{f}_p{q}"]
                exact = type7(values, q / 100)
                if not close(v, exact):
                    fail(f"{case['name']} {engine} summary {cls} {f} p{q}: {v!r}, exact type 7 is {exact!r}")
                if td is not None and td.get(f"p{q}_withheld"):
                    # tracediag withholds a percentile its n cannot support (n too small):
                    # null, with the reason naming n; the engine's value was checked
                    # against the exact type-7 one above.
                    if td[f"p{q}"] is not None or f"(n={len(values)} " not in td[f"p{q}_withheld"]:
                        fail(f"{case['name']} {engine} summary {cls} {f} p{q}: tracediag withholds it as {td[f'p{q}_withheld']!r} with value {td[f'p{q}']!r}, n is {len(values)}")
                elif td is not None:
                    t = td[f"p{q}"]
                    if (t is None) != (v is None) or (t is not None and abs(v - t) > 0.0005 + 1e-9):
                        fail(f"{case['name']} {engine} summary {cls} {f} p{q}: {v!r}, tracediag says {t!r}")
    if len(failures) == bad:
        print(f"summary {case['name']} {engine}: {len(got)} rows equal")


def main():
    manifest = json.load(open(sys.argv[1]))
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("tracediag-sql-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for case in manifest["cases"]:
        reference = pq.read_table(case["reference"]).to_pylist()
        summary_json = json.load(open(case["summary_json"]))
        inputs = case["input_columns"]
        columns = case["compared_columns"]
        sql = {k: open(v).read() for k, v in case["sql"].items()}

        con = duckdb.connect()
        tables = case.get("tables")
        if tables:
            con.execute("SET TimeZone = 'UTC'")
            con.execute(f"CREATE VIEW requests AS SELECT * FROM {tables['duckdb']}")
        else:
            select = ", ".join(f'"{c}"' for c in inputs)
            con.execute(f"CREATE VIEW requests AS SELECT {select} FROM read_parquet('{case['reference']}')")
        got = con.execute(sql["duckdb_rows"])
        names = [d[0] for d in got.description]
        rows = [dict(zip(names, r)) for r in got.fetchall()]
        compare_rows(case, "duckdb", reference, rows, columns)
        got = con.execute(sql["duckdb_summary"])
        names = [d[0] for d in got.description]
        compare_summary(case, "duckdb", reference, summary_json, [dict(zip(names, r)) for r in got.fetchall()])

        if tables:
            spark.read.format(tables["spark"]["format"]).load(tables["spark"]["path"]).createOrReplaceTempView("requests")
        else:
            spark.read.parquet(case["reference"]).select(*inputs).createOrReplaceTempView("requests")
        rows = [r.asDict() for r in spark.sql(sql["spark_rows"]).collect()]
        compare_rows(case, "spark", reference, rows, columns)
        summary = [r.asDict() for r in spark.sql(sql["spark_summary"]).collect()]
        compare_summary(case, "spark", reference, summary_json, summary)

        for which in ("trino_rows", "trino_summary"):
            try:
                parsed = sqlglot.parse(sql[which], read="trino", error_level=sqlglot.ErrorLevel.RAISE)
                if len([p for p in parsed if p is not None]) != 1:
                    fail(f"{case['name']} {which}: {len(parsed)} statements")
                else:
                    print(f"parse {case['name']} {which}: one statement")
            except sqlglot.errors.ParseError as e:
                fail(f"{case['name']} {which}: sqlglot (trino) cannot parse it: {e}")
    spark.stop()
    if failures:
        print(f"{len(failures)} difference(s)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
