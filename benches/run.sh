#!/usr/bin/env bash
# Benchmark on generated data, side by side with peers (not a test: nothing here asserts a
# time).
#
#     benches/run.sh [ROWS...]        # default 1000000 10000000
#
# For each size: generates a gateway log of ROWS requests as flat Parquet, then on that same
# file, in the same run, times `tracediag analyze`, and the same summary computed by DuckDB
# and by a Python-polars script (benches/peer_summary.py: the rule table's metrics, an
# ordered CASE for the class, per class and overall count, failures and p50/p95/p99 of
# end-to-end and every named metric). Prints wall time, peak RSS (GNU time) and the ratios
# tracediag ÷ DuckDB. DuckDB and polars (Python) are installed into a virtualenv under
# ~/.cache on first use.
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

# One timed run: prints "seconds peak_MB".
timed() {
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$@" >"$dir/out.txt" 2>"$dir/err.txt" || {
    echo "failed: $*" >&2; cat "$dir/err.txt" >&2; return 1; }
  read -r secs kb < "$dir/time.txt"
  printf '%s %.0f\n' "$secs" "$(echo "$kb / 1024" | bc -l)"
}

printf '%-10s %-26s %9s %9s %11s %11s\n' rows job seconds peak_MB "÷duckdb s" "÷duckdb mem"
for rows in "${sizes[@]}"; do
  sub="$dir/$rows"
  mkdir -p "$sub"
  [ -f "$sub/gateway_flat.parquet" ] ||
    "$CARGO_TARGET_DIR/release/examples/generate" --rows "$rows" --out-dir "$sub" --formats parquet-flat 2>/dev/null
  f="$sub/gateway_flat.parquet"
  read -r d_s d_m < <(timed "$py" benches/peer_summary.py duckdb "$f")
  read -r p_s p_m < <(timed "$py" benches/peer_summary.py polars "$f")
  read -r t_s t_m < <(timed "$bin" analyze "$f" --keep-ids)
  for job in "duckdb:$d_s:$d_m" "python-polars:$p_s:$p_m" "tracediag analyze:$t_s:$t_m"; do
    IFS=: read -r name s m <<<"$job"
    printf '%-10s %-26s %9s %9s %11.2f %11.2f\n' "$rows" "$name" "$s" "$m" \
      "$(echo "$s / $d_s" | bc -l)" "$(echo "$m / $d_m" | bc -l)"
  done
done
[ -n "${BENCH_DIR:-}" ] || rm -rf "$dir"
