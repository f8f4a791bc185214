#!/usr/bin/env bash
# Browser check of the HTML report (a .ci/run step, not a cargo test: `cargo test` needs no
# browser). Opens the report of fixtures/generated/gateway.parquet in Debian's headless
# Chromium, takes a screenshot and dumps the DOM, and fails if
#   - the page has no chart (`data-chart`), or a chart has no mark with `data-series`;
#   - the browser log shows a console error or an uncaught exception;
#   - the page asked for anything over the network (it must be self-contained);
#   - the page is wider than a 1280-px window (it would scroll sideways).
#
# Usage: tests/browser/check_report.sh [TRACEDIAG_BINARY] [--update-screenshot]
#   TRACEDIAG_BINARY  default: $CARGO_TARGET_DIR/debug/tracediag (built beforehand; this
#                     script builds nothing)
#   --update-screenshot  copy the screenshot to docs/report-screenshot.png
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
bin=""
update=0
for arg in "$@"; do
    case "$arg" in
        --update-screenshot) update=1 ;;
        -*) echo "check_report: unknown option $arg" >&2; exit 2 ;;
        *) bin="$arg" ;;
    esac
done
if [[ -z "$bin" ]]; then
    bin="${CARGO_TARGET_DIR:-$root/target}/debug/tracediag"
fi
if [[ ! -x "$bin" ]]; then
    echo "check_report: no tracediag binary at $bin (build it first, or pass its path)" >&2
    exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
chromium="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$chromium" ]]; then
    echo "check_report: $chromium not found (apt-get install -y chromium)" >&2
    exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
report="$work/report.html"
if [[ -n "${CHECK_REPORT_PAGE:-}" ]]; then
    # To test this check itself: look at the given page instead of a fresh report.
    cp "$CHECK_REPORT_PAGE" "$report"
else
    # From the project root, so the report names the input as a relative path.
    (cd "$root" && "$bin" report fixtures/generated/gateway.parquet --out "$report") 2>"$work/tracediag.log" || {
        cat "$work/tracediag.log" >&2
        echo "check_report: tracediag report failed" >&2
        exit 1
    }
fi

browse() {
    # One fresh profile per run; no network features, no first-run work.
    "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$(mktemp -d "$work/profile.XXXXXX")" \
        --enable-logging=stderr --v=0 \
        --window-size=1280,4000 "$@" "file://$report"
}

browse --screenshot="$work/report.png" >"$work/screenshot.out" 2>"$work/screenshot.log" || {
    cat "$work/screenshot.log" >&2
    echo "check_report: chromium could not take the screenshot" >&2
    exit 1
}
browse --dump-dom >"$work/dom.html" 2>"$work/dom.log" || {
    cat "$work/dom.log" >&2
    echo "check_report: chromium could not dump the DOM" >&2
    exit 1
}
[[ -s "$work/report.png" ]] || { echo "check_report: no screenshot written" >&2; exit 1; }

fail=0
# Console errors and uncaught exceptions. With --enable-logging=stderr Chromium writes each
# console message as `…:INFO:CONSOLE(line)] "message", source: …` whatever its level, so
# the message text decides: the report has no script, so only the browser itself could
# log there (errors, failed or refused loads, policy violations, uncaught exceptions).
console="$(grep -h 'CONSOLE' "$work/screenshot.log" "$work/dom.log" || true)"
if [[ -n "$console" ]]; then
    echo "$console" | sed 's/^/check_report: console: /' >&2
    if echo "$console" | grep -Eiq 'error|uncaught|fail|refused|violat'; then
        echo "check_report: the page logged console errors" >&2
        fail=1
    fi
fi
if grep -hi 'uncaught' "$work/screenshot.log" "$work/dom.log" >&2; then
    echo "check_report: the page threw an uncaught exception" >&2
    fail=1
fi

# Every chart: an <svg data-chart=…> with at least one data-series mark inside.
charts="$(awk '
    BEGIN { RS = "</svg>"; n = 0; bad = 0 }
    {
        i = index($0, "data-chart=\"")
        if (i == 0) next
        rest = substr($0, i + 12)
        name = substr(rest, 1, index(rest, "\"") - 1)
        marks = gsub(/data-series="/, "&", rest)
        n++
        printf "%s %d\n", name, marks
        if (marks == 0) bad++
    }
    END { if (n == 0) print "NO-CHARTS 0" }
' "$work/dom.html")"
echo "$charts" | sed 's/^/check_report: chart /'
if echo "$charts" | grep -q '^NO-CHARTS'; then
    echo "check_report: the page has no data-chart element" >&2
    fail=1
fi
if echo "$charts" | awk '$2 == 0 { found = 1 } END { exit !found }'; then
    echo "check_report: a chart has no data-series mark" >&2
    fail=1
fi
# Self-contained: no script, and nothing loaded from anywhere (no URL, no src or href, no
# stylesheet link, no CSS url() or @import) in the page the browser built.
if grep -Eio 'https?://[^"<> ]*|<script|<link|<iframe|<object|<embed|src=|href=|url\(|@import' "$work/dom.html" | sort -u >"$work/external.txt" && [[ -s "$work/external.txt" ]]; then
    sed 's/^/check_report: external: /' "$work/external.txt" >&2
    echo "check_report: the page is not self-contained" >&2
    fail=1
fi

# Fits a 1280-px screen: nothing wider than the window (a copy of the page with a script
# that measures it, since the report itself has none).
measure="$work/measure.html"
sed 's#</body>#<script>document.title="WIDTH="+document.documentElement.scrollWidth;</script></body>#' \
    "$report" >"$measure"
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$(mktemp -d "$work/profile.XXXXXX")" \
    --window-size=1280,1000 --dump-dom "file://$measure" >"$work/measure.dom" 2>/dev/null || true
width="$(grep -o '<title>WIDTH=[0-9]*' "$work/measure.dom" | head -1 | sed 's/.*=//')"
if [[ -z "$width" ]]; then
    echo "check_report: could not measure the page's width" >&2
    fail=1
elif (( width > 1280 )); then
    echo "check_report: the page is ${width} px wide: it scrolls sideways on a 1280-px screen" >&2
    fail=1
else
    echo "check_report: width ${width} px at a 1280-px window"
fi

# Keep a copy for a look when asked (CHECK_REPORT_KEEP=dir).
if [[ -n "${CHECK_REPORT_KEEP:-}" ]]; then
    mkdir -p "$CHECK_REPORT_KEEP"
    cp "$work/report.png" "$work/dom.html" "$work/screenshot.log" "$work/dom.log" "$report" "$CHECK_REPORT_KEEP/"
fi
if [[ $fail -ne 0 ]]; then
    exit 1
fi
if [[ $update -eq 1 ]]; then
    mkdir -p "$root/docs"
    cp "$work/report.png" "$root/docs/report-screenshot.png"
    echo "check_report: updated docs/report-screenshot.png"
fi
echo "check_report: ok"
