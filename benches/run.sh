#!/usr/bin/env bash
# Throughput benchmark on generated data (not a test: nothing here asserts a time).
#
#     benches/run.sh [ROWS]        # default 1,000,000
#
# Generates a gateway log of ROWS requests in Parquet, CSV and JSON lines (`other` as a
# JSON object), then times `tracediag analyze` on each with the release build and prints
# wall time, rows per second and peak memory (GNU time's maximum resident set size).
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-1000000}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tracediag-target}"
dir="${BENCH_DIR:-$(mktemp -d)}"

cargo build --release --quiet --bin tracediag --example generate
"$CARGO_TARGET_DIR/release/examples/generate" --rows "$rows" --out-dir "$dir" --formats parquet,csv,jsonl

printf '%-16s %10s %10s %12s %12s\n' input size_MB seconds rows_per_s peak_RSS_MB
for f in gateway.parquet gateway.csv gateway.jsonl; do
  size=$(du -m "$dir/$f" | cut -f1)
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" \
    "$CARGO_TARGET_DIR/release/tracediag" analyze "$dir/$f" --by model,channel >/dev/null
  read -r secs kb < "$dir/time.txt"
  printf '%-16s %10s %10s %12.0f %12.0f\n' "$f" "$size" "$secs" "$(echo "$rows / $secs" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
done
[ -n "${BENCH_DIR:-}" ] || rm -rf "$dir"
