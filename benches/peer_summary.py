"""The analyze summary computed by a peer engine, for the benchmark's side-by-side runs.

    python3 benches/peer_summary.py duckdb|polars FILE [--rules rules/gateway.toml]

Reads the rule table (parameters substituted, metrics in order, rules as an ordered CASE:
the first match is the class) and computes what `tracediag analyze` shows: per class
count, failures and p50/p95/p99 (linear interpolation, type 7) of end-to-end and of every
named metric, and the same overall, with the time span (first and last timestamp). FILE is
the generator's `gateway_flat.parquet` or `gateway.csv` (flat canonical columns),
`gateway.jsonl` (timings nested in `other.timing`, read from there) or `newapi.jsonl`
(new-api's own log items: `other` a JSON string, read with `json_extract`; with
`--rules rules/relay.toml`, the table tracediag gives such a log). Prints one line per
class and one for all requests, so a run can be checked by eye against tracediag's table;
the benchmark times it.

This is a benchmark peer, not a translation to trust: `tracediag rules --emit sql` (when it
exists) is the checked one. Division by zero is null here as in tracediag.
"""

import re
import sys
import tomllib

QS = [0.5, 0.95, 0.99]


def load(rules_path):
    with open(rules_path, "rb") as f:
        t = tomllib.load(f)
    params = {p["name"]: p["value"] for p in t.get("params", [])}
    metrics = [(m["name"], m["expr"], "label" in m) for m in t.get("metrics", [])]
    rules = sorted(t.get("rules", []), key=lambda r: r["order"])
    default = t.get("default_class", "normal")
    return params, metrics, rules, default, t.get("end_to_end", "total_handler_ms")


KEYWORDS = {"case", "when", "then", "else", "end", "and", "or", "not", "null", "is", "true",
            "false", "in", "as", "double", "cast", "between", "like"}


def computable(metrics, rules, params, columns):
    """The metrics the file's columns can compute, in order (as tracediag leaves out a metric
    whose field no input has), and the rules with every dropped metric read as NULL."""
    known = set(columns) | set(params)
    kept, dropped = [], []
    for name, expr, labelled in metrics:
        e = re.sub(r"\belapsed\(\s*([A-Za-z_][A-Za-z_0-9]*)\s*\)", r"\1", expr)
        words = set(re.findall(r"\b([A-Za-z_][A-Za-z_0-9]*)\b(?!\s*\()", e))
        if all(w.lower() in KEYWORDS or w in known for w in words):
            kept.append((name, expr, labelled))
            known.add(name)
        else:
            dropped.append(name)
    def null_out(text):
        for name in dropped:
            text = re.sub(rf"\b{name}\b", "CAST(NULL AS DOUBLE)", text)
        return text
    rules = [dict(r, when=null_out(r["when"])) for r in rules]
    return kept, rules


def with_division(expr, params):
    """Division by zero → null: `a / b` becomes `a / NULLIF(b, 0)` on simple operands.
    `elapsed(p)` (a time point's time since its origin, as a duration) is the column."""
    e = " ".join(expr.split())
    e = re.sub(r"\belapsed\(\s*([A-Za-z_][A-Za-z_0-9]*)\s*\)", r"\1", e)
    for name, value in params.items():
        e = re.sub(rf"\b{name}\b", repr(float(value)), e)
    # A divisor is a parenthesised term, a function call (`greatest(output_tokens - 1, 0)`),
    # a name or a number.
    e = re.sub(
        r"/\s*(\([^()]*\)|[A-Za-z_][A-Za-z_0-9]*\s*\([^()]*\)|[A-Za-z_][A-Za-z_0-9]*|[0-9.]+)",
        r"/ NULLIF(CAST(\1 AS DOUBLE), 0)",
        e,
    )
    return e


# new-api's items as the canonical columns tracediag maps them to (`src/source/newapi.rs`):
# consume (2) and error (5) rows, frt -1000 as null, use_time seconds in ms, the outcome from
# the row type and the stream status.
NEWAPI = """(SELECT request_id, to_timestamp(created_at) AS timestamp, model_name AS model,
    "group", CAST({channel} AS VARCHAR) AS channel, is_stream,
    CASE WHEN "type" = 5 THEN 'error'
         ELSE coalesce(json_extract_string(other, '$.stream_status.status'), 'ok') END AS outcome,
    prompt_tokens AS input_tokens, completion_tokens AS output_tokens,
    NULLIF(CAST(json_extract(other, '$.frt') AS DOUBLE), -1000) AS relay_first_response_ms,
    CAST(use_time AS DOUBLE) * 1000 AS relay_total_ms,
    CAST(json_extract(other, '$.request_timing.total_ms') AS DOUBLE) AS total_handler_ms,
    CAST(json_extract(other, '$.request_timing.gateway_ms') AS DOUBLE) AS gateway_ms,
    CAST(json_extract(other, '$.request_timing.upstream_first_data_ms') AS DOUBLE) AS upstream_first_data_ms,
    CAST(json_extract(other, '$.request_timing.client_stream_ms') AS DOUBLE) AS client_stream_ms,
    CAST(json_extract(other, '$.request_timing.finalize_ms') AS DOUBLE) AS finalize_ms
  FROM {read} WHERE "type" IN (2, 5))"""


def duckdb_source(path):
    """The file as a DuckDB relation, timings as flat columns."""
    if path.endswith("newapi.jsonl"):
        return NEWAPI.format(read=f"read_json('{path}', format = 'newline_delimited')", channel="channel")
    # The export of new-api's `logs` table: the channel under its column name.
    if path.endswith("newapi.csv"):
        return NEWAPI.format(read=f"read_csv('{path}')", channel="channel_id")
    return {
        "parquet": f"read_parquet('{path}')",
        "csv": f"read_csv('{path}')",
        "jsonl": f"(SELECT * EXCLUDE (other), unnest(other.timing) FROM read_json('{path}', format = 'newline_delimited'))",
    }[path.rsplit(".", 1)[-1]]


def duckdb_query(path, params, metrics, rules, default, e2e, columns=None):
    if columns is not None:
        metrics, rules = computable(metrics, rules, params, columns)
    cols = []
    for name, expr, _ in metrics:
        cols.append(f"CAST({with_division(expr, params)} AS DOUBLE) AS {name}")
    case = " ".join(
        f"WHEN COALESCE(({with_division(r['when'], params)}), FALSE) THEN '{r['class']}'" for r in rules
    )
    named = [e2e] + [n for n, _, labelled in metrics if labelled and n != e2e]
    aggs = ["count(*) AS n", "sum(CASE WHEN outcome IS NOT NULL AND outcome <> 'ok' THEN 1 ELSE 0 END) AS failed"]
    # The time span, as tracediag's header shows it (the generator writes ISO 8601 text).
    aggs.append("min(TRY_CAST(timestamp AS TIMESTAMPTZ)) AS t_min, max(TRY_CAST(timestamp AS TIMESTAMPTZ)) AS t_max")
    for m in named:
        aggs.append(f"quantile_cont({m}, [0.5, 0.95, 0.99]) AS q_{m}")
    base = duckdb_source(path)
    # DuckDB resolves a SELECT's own aliases left to right, so later metrics use earlier ones.
    metric_sel = ", ".join(cols)
    return f"""
WITH m AS (SELECT *, {metric_sel} FROM {base}),
c AS (SELECT *, CASE {case} ELSE '{default}' END AS class FROM m)
SELECT class, {", ".join(aggs)} FROM c GROUP BY GROUPING SETS ((class), ()) ORDER BY class NULLS LAST
"""


def run_duckdb(path, rules_path):
    import duckdb

    con = duckdb.connect()
    columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {duckdb_source(path)}").fetchall()]
    q = duckdb_query(path, *load(rules_path), columns=columns)
    for row in con.execute(q).fetchall():
        print(row[0] or "(all)", row[1], row[2], row[3], row[4], row[5])


def run_polars(path, rules_path):
    import polars as pl

    params, metrics, rules, default, e2e = load(rules_path)
    ctx = pl.SQLContext()
    kind = path.rsplit(".", 1)[-1]
    if kind == "parquet":
        lf = pl.scan_parquet(path)
    elif kind == "csv":
        lf = pl.scan_csv(path)
    else:
        lf = pl.scan_ndjson(path).with_columns(pl.col("other").struct.field("timing")).unnest("timing").drop("other")
    metrics, rules = computable(metrics, rules, params, lf.collect_schema().names())
    # Metrics one by one (each may use the ones before), then the ordered CASE.
    for name, expr, _ in metrics:
        ctx.register("t", lf)
        lf = ctx.execute(f"SELECT *, CAST({with_division(expr, params)} AS DOUBLE) AS {name} FROM t")
    ctx.register("t", lf)
    case = " ".join(
        f"WHEN COALESCE(({with_division(r['when'], params)}), FALSE) THEN '{r['class']}'" for r in rules
    )
    lf = ctx.execute(f"SELECT *, CASE {case} ELSE '{default}' END AS class FROM t")
    named = [e2e] + [n for n, _, labelled in metrics if labelled and n != e2e]
    failed = (pl.col("outcome").is_not_null() & (pl.col("outcome") != "ok")).sum().alias("failed")
    ts = pl.col("timestamp").str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", time_unit="ms", strict=False)
    aggs = [pl.len().alias("n"), failed, ts.min().alias("t_min"), ts.max().alias("t_max")]
    for m in named:
        for q in QS:
            aggs.append(pl.col(m).quantile(q, "linear").alias(f"{m}_{q}"))
    per_class = lf.group_by("class").agg(aggs)
    overall = lf.select(aggs).with_columns(pl.lit(None, pl.String).alias("class"))
    res = pl.collect_all([per_class, overall], engine="streaming")
    out = pl.concat([res[0], res[1].select(res[0].columns)]).sort("class", nulls_last=True)
    for row in out.iter_rows():
        print(row[0] or "(all)", row[1], row[2], row[3], row[4], row[5:8])


def main():
    args = sys.argv[1:]
    rules_path = "rules/gateway.toml"
    if "--rules" in args:
        i = args.index("--rules")
        rules_path = args[i + 1]
        del args[i : i + 2]
    engine, path = args
    {"duckdb": run_duckdb, "polars": run_polars}[engine](path, rules_path)


if __name__ == "__main__":
    main()
