#!/usr/bin/env bash
# Run one cargo-fuzz target as a single libFuzzer process until its coverage stops growing.
#
# usage: fuzz/plateau.sh TARGET [WINDOW_SECONDS=600] [MAX_SECONDS=14400] [FLAT_EDGES=10]
#
# The fuzzer resumes from fuzz/corpus/TARGET and runs without restarts (a restart re-runs the
# whole corpus first: minutes for timing_decoder, which executes ~4 inputs a second). Every
# WINDOW_SECONDS after the corpus is loaded (libFuzzer's INITED line) the script reads the
# coverage libFuzzer last reported (`cov:`, edges) and prints one line:
#   window N  cov START -> END (+GAIN)  ft ...  execs ...  corpus ...  (HH:MM UTC)
# The target has reached its plateau when two windows in a row each add fewer than
# FLAT_EDGES edges; the fuzzer is then stopped with SIGINT (it keeps its corpus) and the
# script exits 0. Exit 1 if libFuzzer stops with a finding (crash, timeout, OOM: the input is
# in fuzz/artifacts/TARGET/), 3 if MAX_SECONDS ends first.
# Log lines go to stdout and fuzz/plateau-TARGET.log; libFuzzer's own output to
# fuzz/plateau-TARGET.out (both ignored by git).
set -euo pipefail
target=$1; window=${2:-600}; max=${3:-14400}; flat=${4:-10}
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/root/.cache/tracediag-fuzz-target}
export POLARS_MAX_THREADS=1
log=fuzz/plateau-$target.log
out=fuzz/plateau-$target.out

# Build first, so compile time never counts as fuzzing time.
cargo fuzz build -O "$target"
bin=$CARGO_TARGET_DIR/$(rustc -vV | sed -n 's/^host: //p')/release/$target
mkdir -p "fuzz/artifacts/$target"

"$bin" -artifact_prefix="fuzz/artifacts/$target/" -max_len=65536 -timeout=10 \
  -rss_limit_mb=4096 -max_total_time="$max" -print_final_stats=1 \
  "fuzz/corpus/$target" >"$out" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null || true' EXIT

# The last status line libFuzzer printed: "#EXECS <kind> cov: N ft: N corp: N/..."
field() { grep -E '^#[0-9]+' "$out" | tail -1 | sed -nE "s/.*$1: ([0-9]+).*/\1/p"; }
execs() { grep -E '^#[0-9]+' "$out" | tail -1 | sed -nE 's/^#([0-9]+).*/\1/p'; }

finish() { # libFuzzer has exited by itself: at MAX_SECONDS (rc 0) or on a finding
  local rc=0; wait "$pid" || rc=$?
  trap - EXIT
  if [ "$rc" -ne 0 ]; then
    tail -40 "$out"; echo "libFuzzer stopped with a finding (exit $rc), see above" | tee -a "$log"; exit 1
  fi
  echo "no plateau within ${max}s" | tee -a "$log"; exit 3
}

until grep -qE '^#[0-9]+[[:space:]]+INITED' "$out"; do
  kill -0 "$pid" 2>/dev/null || finish
  sleep 5
done
start=$(field cov)
echo "$target: corpus loaded, cov $start ($(date -u +%H:%M) UTC); windows of ${window}s" | tee -a "$log"

n=0; flat_windows=0
while true; do
  for _ in $(seq 1 "$window"); do kill -0 "$pid" 2>/dev/null || finish; sleep 1; done
  n=$((n + 1))
  end=$(field cov); gain=$((end - start))
  echo "window $n  cov $start -> $end (+$gain)  ft $(field ft)  execs $(execs)  corpus $(field corp)  ($(date -u +%H:%M) UTC)" | tee -a "$log"
  start=$end
  if [ "$gain" -lt "$flat" ]; then flat_windows=$((flat_windows + 1)); else flat_windows=0; fi
  if [ "$flat_windows" -ge 2 ]; then
    kill -INT "$pid"; wait "$pid" || true; trap - EXIT
    echo "plateau: two windows in a row under $flat new edges" | tee -a "$log"; exit 0
  fi
done
