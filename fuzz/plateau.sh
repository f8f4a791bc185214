#!/usr/bin/env bash
# Run one cargo-fuzz target in fixed-length rounds until coverage stops growing.
#
# usage: fuzz/plateau.sh TARGET [ROUND_SECONDS=600] [MAX_ROUNDS=12] [FLAT_EDGES=10]
#
# Each round is one `cargo fuzz run` resumed from the target's corpus; libFuzzer prints the
# coverage (`cov:`, edges) it loaded with (INITED) and ended with (DONE). The target has
# reached its plateau when two rounds in a row each add fewer than FLAT_EDGES edges.
# One line per round goes to stdout (and fuzz/plateau-TARGET.log):
#   round N  cov START -> END (+GAIN)  ft ...  execs ...  new units ...
# Exit 0 at the plateau, 3 if MAX_ROUNDS ended before it, 1 on a crash (libFuzzer's exit).
set -euo pipefail
target=$1; secs=${2:-600}; max=${3:-12}; flat=${4:-10}
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/root/.cache/tracediag-fuzz-target}
export POLARS_MAX_THREADS=1
log=fuzz/plateau-$target.log
flat_rounds=0
for round in $(seq 1 "$max"); do
  out=$(mktemp)
  if ! cargo fuzz run -O "$target" -- -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
        -max_total_time="$secs" -print_final_stats=1 >"$out" 2>&1; then
    tail -40 "$out"; echo "round $round: libFuzzer stopped with a finding (see above)"; exit 1
  fi
  start=$(grep -m1 -E '^#[0-9]+[[:space:]]+INITED' "$out" | sed -E 's/.*cov: ([0-9]+).*/\1/')
  end=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out" | tail -1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
  ft=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out" | tail -1 | sed -E 's/.*ft: ([0-9]+).*/\1/')
  execs=$(grep -E '^stat::number_of_executed_units' "$out" | awk '{print $2}')
  units=$(grep -E '^stat::new_units_added' "$out" | awk '{print $2}')
  gain=$((end - start))
  line="round $round  cov $start -> $end (+$gain)  ft $ft  execs $execs  new units $units  ($(date -u +%H:%M) UTC, ${secs}s)"
  echo "$line" | tee -a "$log"
  rm -f "$out"
  if [ "$gain" -lt "$flat" ]; then flat_rounds=$((flat_rounds + 1)); else flat_rounds=0; fi
  if [ "$flat_rounds" -ge 2 ]; then echo "plateau: two rounds in a row under $flat new edges" | tee -a "$log"; exit 0; fi
done
echo "no plateau after $max rounds" | tee -a "$log"; exit 3
