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
# in fuzz/artifacts/TARGET/), 3 if MAX_SECONDS ends first, 4 if libFuzzer was interrupted from
# outside (SIGINT or SIGTERM to the fuzzer itself: its exit code 72, not a finding).
# Each window line is followed by where the new edges are: libFuzzer runs with
# -print_pcs=1, which prints every newly covered edge, and the script counts them by crate
# (`tracediag` is src/, `harness` is fuzz/fuzz_targets/ and fuzz/oracle/; see by_crate below):
#   new edges by crate: sqlparser +61, std +12, tracediag +1
# fuzz/TARGET.dict, when it exists, is passed as the libFuzzer dictionary (-dict).
# With PLATEAU_CRATE=tracediag the plateau is judged on that crate's new edges alone (the
# code under test, while a dependency's grammar or planner may keep yielding edges).
# Log lines go to stdout and fuzz/plateau-TARGET.log; libFuzzer's own output to
# fuzz/plateau-TARGET.out (both ignored by git).
set -euo pipefail
target=$1; window=${2:-600}; max=${3:-14400}; flat=${4:-10}; only=${PLATEAU_CRATE:-}
cd "$(dirname "$0")/.."
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/root/.cache/tracediag-fuzz-target}
export POLARS_MAX_THREADS=1
# No allocation stack traces in ASan reports: a third faster for timing_decoder, whose
# time goes to polars allocating; a crash report still shows the crashing stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=0}
log=fuzz/plateau-$target.log
out=fuzz/plateau-$target.out

# Build first, so compile time never counts as fuzzing time.
cargo fuzz build -O "$target"
bin=$CARGO_TARGET_DIR/$(rustc -vV | sed -n 's/^host: //p')/release/$target
mkdir -p "fuzz/artifacts/$target"

# A dictionary of the input language's words, when the target has one.
dict=()
if [ -f "fuzz/$target.dict" ]; then dict=(-dict="fuzz/$target.dict"); fi

"$bin" -artifact_prefix="fuzz/artifacts/$target/" -max_len=65536 -timeout=10 \
  -rss_limit_mb=4096 -max_total_time="$max" -print_final_stats=1 -print_pcs=1 \
  "${dict[@]}" "fuzz/corpus/$target" >"$out" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null || true' EXIT

# The last status line libFuzzer printed: "#EXECS <kind> cov: N ft: N corp: N/..."
field() { grep -E '^#[0-9]+' "$out" | tail -1 | sed -nE "s/.*$1: ([0-9]+).*/\1/p"; }
execs() { grep -E '^#[0-9]+' "$out" | tail -1 | sed -nE 's/^#([0-9]+).*/\1/p'; }
# Where the new edges are: the NEW_PC addresses after line $1 of the output, symbolized with
# their inline chains (llvm-symbolizer --inlines) and each counted for the innermost frame
# outside Rust's standard library (/rustc/…, and /rust/deps/… for the hashbrown inside std),
# so a `Vec` method inlined into tracediag's code counts for tracediag. Prints "crate N"
# lines; `tracediag` is this checkout's src/, `std` code with no other frame (a
# monomorphized std function), `unknown` an address without debug information.
by_crate() {
  tail -n +"$(($1 + 1))" "$out" | sed -nE 's/.*NEW_PC: (0x[0-9a-f]+).*/\1/p' |
    while read -r a; do printf '0x%x\n' $((a - 0x$base)); done |
    llvm-symbolizer --obj="$bin" --inlines |
    awk -v root="$PWD" 'BEGIN { RS = ""; FS = "\n" }
      { c = "std"
        for (i = 2; i <= NF; i += 2) {
          f = $i
          if (f ~ /^\/rustc\/|^\/rust\/deps\//) continue
          if (index(f, root "/fuzz/fuzz_targets/") == 1 || index(f, root "/fuzz/oracle/") == 1) c = "harness"
          else if (match(f, /registry\/src\/[^\/]+\/[^\/]+\//)) {
            c = substr(f, RSTART, RLENGTH); sub(/\/$/, "", c); sub(/.*\//, "", c)
            sub(/-[0-9]+\.[0-9]+\.[0-9]+.*/, "", c)
          } else if (index(f, root "/src/") == 1) c = "tracediag"
          else c = "unknown"
          break
        }
        n[c]++ }
      END { for (c in n) print c, n[c] }' | sort -k2,2nr -k1,1
}

finish() { # libFuzzer has exited by itself: at MAX_SECONDS (rc 0) or on a finding
  local rc=0; wait "$pid" || rc=$?
  trap - EXIT
  if [ "$rc" -eq 72 ]; then # libFuzzer's code for "run interrupted", no input to keep
    echo "libFuzzer was interrupted (exit 72): no finding, no plateau" | tee -a "$log"; exit 4
  fi
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
base=$(grep -m1 "/release/$target\$" "/proc/$pid/maps" | cut -d- -f1)
echo "$target: corpus loaded, cov $start ($(date -u +%H:%M) UTC); windows of ${window}s" | tee -a "$log"

n=0; flat_windows=0; mark=$(wc -l <"$out")
while true; do
  for _ in $(seq 1 "$window"); do kill -0 "$pid" 2>/dev/null || finish; sleep 1; done
  n=$((n + 1))
  end=$(field cov); gain=$((end - start)); lines=$(wc -l <"$out")
  echo "window $n  cov $start -> $end (+$gain)  ft $(field ft)  execs $(execs)  corpus $(field corp)  ($(date -u +%H:%M) UTC)" | tee -a "$log"
  crates=$(by_crate "$mark")
  echo "  new edges by crate: $(awk 'NF { printf "%s%s +%s", (n++ ? ", " : ""), $1, $2 } END { if (!n) printf "none" }' <<<"$crates")" | tee -a "$log"
  start=$end; mark=$lines
  if [ -n "$only" ]; then gain=$(awk -v c="$only" '$1 == c { print $2 }' <<<"$crates"); gain=${gain:-0}; fi
  if [ "$gain" -lt "$flat" ]; then flat_windows=$((flat_windows + 1)); else flat_windows=0; fi
  if [ "$flat_windows" -ge 2 ]; then
    kill -INT "$pid"; wait "$pid" || true; trap - EXIT
    echo "plateau: two windows in a row under $flat new edges${only:+ in $only}" | tee -a "$log"; exit 0
  fi
done
