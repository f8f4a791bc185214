#!/usr/bin/env bash
# Benchmark on generated data, side by side with peers (not a test: nothing here asserts a
# time).
#
#     benches/run.sh [ROWS...]        # default 1000000 10000000
#
# For each size: generates a gateway log of ROWS requests as flat Parquet (row groups of
# 2^20 rows, written as it is made), and up to FULL_MAX rows (default 10M) also as CSV and
# JSON lines. On the Parquet file, in the same run, it times the same summary computed by
# DuckDB and (up to FULL_MAX) by a Python-polars script (benches/peer_summary.py: the rule
# table's metrics, an ordered CASE for the class, per class and overall count, failures
# and p50/p95/p99 of end-to-end and every named metric, and the time span), then
# `tracediag analyze`, `report`, `throughput`, `explain --request-id` and `compare
# --split`; up to FULL_MAX also `compare` of the file against itself (two cohorts of ROWS
# requests each); on the CSV and JSON-lines files DuckDB's summary beside
# `tracediag analyze`; and on the same requests as new-api's own log (JSON lines, `other` a
# JSON string, classified by the relay table) and as a CSV export of its logs table,
# DuckDB's summary (`read_json` or `read_csv`, and `json_extract` of the same fields)
# beside `tracediag analyze` and `explain --request-id`.
# Prints wall time, peak RSS (GNU time) and the ratios
# to DuckDB's summary; a job that fails (DuckDB out of memory) shows `failed` and the run
# goes on. DuckDB and polars (Python) are installed into a virtualenv under ~/.cache on
# first use. BENCH_DIR keeps the generated files between runs.
#
# Up to FULL_MAX rows, DuckDB's Parquet summary and `tracediag analyze` of that file each
# run BEST_OF times (default 3), interleaved, and the fastest run of each is shown (with
# its peak RSS): on a 2-core machine one run of the same job can take half as long again
# as the next (DuckDB's 10M summary has taken from 6.5 s to 11 s an hour apart), and the
# ratio of the two is the one the engine's target is set on.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tracediag-target}"
venv="${BENCH_VENV:-$HOME/.cache/tracediag-bench-venv}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import duckdb, polars' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q duckdb polars
fi
py="$venv/bin/python"
dir="${BENCH_DIR:-$(mktemp -d)}"

cargo build --release --quiet --bin tracediag --example generate
bin="$CARGO_TARGET_DIR/release/tracediag"

# One timed run: prints "seconds peak_MB", or "failed failed" (the error on stderr) when
# the job fails (DuckDB out of memory, say): the run goes on to the next job.
timed() {
  if /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$@" >"$dir/out.txt" 2>"$dir/err.txt"; then
    read -r secs kb < "$dir/time.txt"
    printf '%s %.0f\n' "$secs" "$(echo "$kb / 1024" | bc -l)"
  else
    echo "failed: $*" >&2; tail -3 "$dir/err.txt" >&2
    echo "failed failed"
  fi
}
ratio() { case "$1$2" in *failed*) echo "-" ;; *) printf '%.2f' "$(echo "$1 / $2" | bc -l)" ;; esac; }
# The faster of two `timed` results ("seconds peak_MB"); a failed one loses.
faster() {
  case "$1" in failed*) echo "$2"; return ;; esac
  case "$2" in failed*) echo "$1"; return ;; esac
  if [ "$(echo "${2% *} < ${1% *}" | bc -l)" = 1 ]; then echo "$2"; else echo "$1"; fi
}
BEST_OF="${BEST_OF:-3}"

# The text formats, the Python-polars summary and the two-cohort compare run up to
# FULL_MAX rows (their files, their memory, their time); beyond it the Parquet jobs alone.
FULL_MAX="${FULL_MAX:-10000000}"

printf '%-10s %-32s %9s %9s %11s %11s\n' rows job seconds peak_MB "÷duckdb s" "÷duckdb mem"
for rows in "${sizes[@]}"; do
  sub="$dir/$rows"
  mkdir -p "$sub"
  formats=(parquet-flat)
  [ "$rows" -gt "$FULL_MAX" ] || formats+=(csv jsonl newapi newapi-csv)
  for fmt in "${formats[@]}"; do
    case $fmt in
      parquet-flat) out=gateway_flat.parquet ;;
      newapi) out=newapi.jsonl ;;
      newapi-csv) out=newapi.csv ;;
      *) out=gateway.$fmt ;;
    esac
    [ -f "$sub/$out" ] ||
      "$CARGO_TARGET_DIR/release/examples/generate" --rows "$rows" --out-dir "$sub" --formats "$fmt" 2>/dev/null
  done
  f="$sub/gateway_flat.parquet"
  runs=1
  [ "$rows" -gt "$FULL_MAX" ] || runs="$BEST_OF"
  duck="failed failed"; ours="failed failed"
  for _ in $(seq "$runs"); do
    duck="$(faster "$duck" "$(timed "$py" benches/peer_summary.py duckdb "$f")")"
    ours="$(faster "$ours" "$(timed "$bin" analyze "$f" --keep-ids)")"
  done
  read -r d_s d_m <<<"$duck"
  jobs=("duckdb summary:$d_s:$d_m")
  if [ "$rows" -le "$FULL_MAX" ]; then
    read -r p_s p_m < <(timed "$py" benches/peer_summary.py polars "$f"); jobs+=("python-polars summary:$p_s:$p_m")
  fi
  read -r s m <<<"$ours"; jobs+=("tracediag analyze:$s:$m")
  read -r s m < <(timed "$bin" throughput "$f" --keep-ids); jobs+=("tracediag throughput:$s:$m")
  read -r s m < <(timed "$bin" explain "$f" --request-id req-0000042 --keep-ids); jobs+=("tracediag explain --request-id:$s:$m")
  read -r s m < <(timed "$bin" compare "$f" --split channel=ch-east,ch-west --keep-ids); jobs+=("tracediag compare --split:$s:$m")
  if [ "$rows" -le "$FULL_MAX" ]; then
    read -r s m < <(timed "$bin" compare "$f" "$f" --keep-ids); jobs+=("tracediag compare A A:$s:$m")
  fi
  read -r s m < <(timed "$bin" report "$f" --keep-ids --out "$sub/report.html" --force); jobs+=("tracediag report:$s:$m")
  # The same summary over the same requests as text: CSV (flat) and JSON lines (timings in
  # `other.timing`), each against DuckDB reading that file.
  if [ "$rows" -le "$FULL_MAX" ]; then
    for text in csv jsonl; do
      t="$sub/gateway.$text"
      read -r td_s td_m < <(timed "$py" benches/peer_summary.py duckdb "$t")
      read -r s m < <(timed "$bin" analyze "$t" --keep-ids)
      jobs+=("duckdb summary ($text):$td_s:$td_m:$td_s:$td_m" "tracediag analyze ($text):$s:$m:$td_s:$td_m")
    done
    # new-api's own shape: the relay table, the figures read out of a JSON string; as its
    # JSON lines and as a CSV export of its logs table.
    for text in jsonl csv; do
      t="$sub/newapi.$text"
      read -r td_s td_m < <(timed "$py" benches/peer_summary.py duckdb "$t" --rules rules/relay.toml)
      read -r s m < <(timed "$bin" analyze "$t" --keep-ids)
      read -r e_s e_m < <(timed "$bin" explain "$t" --request-id req-0000042 --keep-ids)
      jobs+=("duckdb summary (newapi $text):$td_s:$td_m:$td_s:$td_m"
        "tracediag analyze (newapi $text):$s:$m:$td_s:$td_m"
        "tracediag explain (newapi $text):$e_s:$e_m:$td_s:$td_m")
    done
  fi
  for job in "${jobs[@]}"; do
    # A job may name its own DuckDB figures (the text formats); else the Parquet summary's.
    IFS=: read -r name s m ds dm <<<"$job"
    ds=${ds:-$d_s}; dm=${dm:-$d_m}
    printf '%-10s %-32s %9s %9s %11s %11s\n' "$rows" "$name" "$s" "$m" "$(ratio "$s" "$ds")" "$(ratio "$m" "$dm")"
  done
done
[ -n "${BENCH_DIR:-}" ] || rm -rf "$dir"
