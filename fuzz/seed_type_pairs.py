#!/usr/bin/env python3
"""Seed inputs for the `rule_loader` fuzz target: every operator and function of the rule
language over every pair of term types, in both catalogues, as a metric and as a rule.

usage: fuzz/seed_type_pairs.py DIR

The type checker decides per (operator, left type, right type) what an expression means
or which error it gets, and each of those decisions is a branch. Random mutation finds the
rarer pairs slowly (hours of a few new edges per ten minutes), so this script writes them
all out once; libFuzzer keeps the ones that add coverage (`cargo fuzz cmin` drops the rest).
Written by fuzz/seeds.py (content-hash names).
"""

from seeds import write_all

PARAMS = [("p_ms", "ms"), ("p_tps", "tps"), ("p_ratio", "ratio"), ("p_tokens", "tokens"),
          ("p_pct", "pct"), ("p_count", "count")]
LITERALS = ["1", "2.5", "'x'", "TRUE"]

# One term of every type the checker tells apart: each phase and time point (their
# origins and marks differ), rate, count, code, flag, label, timestamp, and named metrics
# (a reference to a metric takes that metric's type; metrics are numbers). `NULL` is
# refused wherever it stands, so it appears once, alone.
GATEWAY = {
    "fields": ["auth_ms", "upstream_start_ms", "upstream_headers_ms", "first_sse_event_ms",
               "first_response_ms", "first_text_delta_ms", "upstream_done_ms",
               "total_handler_ms", "visible_output_tps", "input_tokens", "status", "is_stream",
               "model", "timestamp", "relay_first_response_ms", "relay_total_ms",
               "client_ttft_ms", "client_latency_ms", "engine_ttft_ms", "engine_latency_ms",
               "engine_queue_ms", "upstream_first_chunk_ms", "upstream_elapsed_ms"],
    "metrics": [("m_span", "total_handler_ms - first_response_ms"),
                ("m_point", "first_response_ms")],
    "look_at": "total_handler_ms",
}
AZURE = {
    "catalogue": "azure",
    "fields": ["ttlt_avg_ms", "ttlt_avg_ms_baseline", "requests_total", "ptu_utilization_avg_pct",
               "ttlt_residual_p", "deployment", "window_start"],
    "metrics": [("m_span", "ttlt_avg_ms - ttlt_avg_ms_baseline"),
                ("m_ratio", "ttlt_avg_ms / ttlt_avg_ms_baseline")],
    "look_at": "ttlt_avg_ms",
}

BINARY = ["+", "-", "*", "/", "=", "<>", "<", "<=", ">", ">=", "AND", "OR"]
UNARY = ["NOT {a}", "-{a}", "+{a}", "{a} IS NULL", "{a} IS NOT NULL", "{a} IS TRUE",
         "{a} IS NOT FALSE", "abs({a})", "coalesce({a})", "greatest({a})", "least({a})"]
PAIRS = ["coalesce({a}, {b})", "greatest({a}, {b})", "least({a}, {b})", "{a} IN ({b})",
         "{a} NOT IN ({b}, {a})", "{a} BETWEEN {b} AND {a}", "abs({a}, {b})"]


def header(cat):
    lines = ['name = "seed"']
    if "catalogue" in cat:
        lines.append(f'catalogue = "{cat["catalogue"]}"')
    lines.append('default_class = "normal"')
    for name, unit in PARAMS:
        lines += ["", "[[params]]", f'name = "{name}"', "value = 1", f'unit = "{unit}"', 'doc = ""']
    for name, expr in cat["metrics"]:
        lines += ["", "[[metrics]]", f'name = "{name}"', f'expr = "{expr}"', 'doc = ""']
    return "\n".join(lines) + "\n"


def as_metric(expr):
    return f'\n[[metrics]]\nname = "m_seed"\nexpr = "{expr}"\ndoc = ""\n'


def as_rule(expr, look_at):
    return (f'\n[[rules]]\nclass = "c"\norder = 1\nwhen = "{expr}"\nlook_at = "{look_at}"\n'
            'layer = "l"\nnext_check = "n"\ndetects = "d"\nwhy = "w"\n')


def expressions(cat):
    terms = cat["fields"] + [n for n, _ in cat["metrics"]] + [n for n, _ in PARAMS] + LITERALS
    yield "NULL"
    for a in terms:
        for u in UNARY:
            yield u.format(a=a)
        for b in terms:
            for op in BINARY:
                yield f"{a} {op} {b}"
            for p in PAIRS:
                yield p.format(a=a, b=b)


def main():
    write_all(header(cat) + body
              for cat in (GATEWAY, AZURE)
              for expr in expressions(cat)
              for body in (as_metric(expr), as_rule(expr, cat["look_at"])))


if __name__ == "__main__":
    main()
