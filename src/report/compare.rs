//! The `compare` report: the workload contract first (docs/compare.md), then the named
//! metrics side by side with the shift B − A, then the class mix. Terminal tables, Markdown
//! and stable JSON; all figures come computed and rounded from `crate::compare`.

use super::markdown::{code, header, md, row};
use super::{fit, fmt_num, fmt_q, fmt_share, render, table, Width};
use crate::compare::{fmt_p, Comparison, MetricComparison, Shift, MANN_WHITNEY_METHOD};
use crate::summary::LeftOut;

/// A signed figure: `+12.5`, `-3.0`, `0.0`.
/// A metric's p50/p95/p99 cells for A and B, each `fmt_q`: a percentile its cohort cannot
/// support reads "n<…", in every format.
fn pct_cells(m: &MetricComparison) -> Vec<(String, String)> {
    let (qa, qb) = (m.a.pct.quantiles(), m.b.pct.quantiles());
    qa.iter()
        .zip(&qb)
        .map(|(&(_, q, a), &(_, _, b))| (fmt_q(q, m.a.pct.n, a), fmt_q(q, m.b.pct.n, b)))
        .collect()
}

fn signed(x: Option<f64>) -> String {
    match x {
        Some(v) if v > 0.0 => format!("+{}", fmt_num(Some(v))),
        v => fmt_num(v),
    }
}

fn interval(s: &Shift) -> String {
    match (s.ci_low, s.ci_high) {
        (Some(lo), Some(hi)) => format!("[{}, {}]", signed(Some(lo)), signed(Some(hi))),
        _ => "—".into(),
    }
}

pub fn terminal(c: &Comparison, width: Width) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    line(format!(
        "{} — compare, rules: {} ({})",
        c.tool, c.rules.name, c.rules.source
    ));
    line(format!("verdict: {}", c.verdict));
    for s in &c.cohorts {
        line(format!(
            "{}: {} — {} requests, {} failed ({}), from {}",
            s.label,
            s.name,
            s.requests,
            s.failures,
            fmt_share(s.failure_rate),
            s.inputs.join(", ")
        ));
    }
    if let Some(m) = crate::summary::MappedColumn::line(&c.mapped_columns) {
        line(m);
    }
    if let Some(w) = &c.window {
        line(format!(
            "window: {} ≤ received < {} (requests without a timestamp are left out)",
            w.since.as_deref().unwrap_or("−∞"),
            w.until.as_deref().unwrap_or("+∞")
        ));
    }
    line(format!("percentiles: {}", c.percentile_method));
    line(format!("percentile rule: {}", c.percentile_rule));
    line(String::new());

    line(
        "Workload contract — checked first: a ranking holds only when both cohorts share it".into(),
    );
    let mut t = table(&["field", "A", "B", "difference (tolerance)", ""], 0..0);
    for k in &c.contract.checks {
        t.add_row(vec![
            k.field.clone(),
            k.a.clone(),
            k.b.clone(),
            format!("{}\n({})", k.difference, k.tolerance),
            if k.within { "ok" } else { "WARNING" }.to_string(),
        ]);
    }
    line(render(t, width));
    if c.contract.warnings.is_empty() {
        line("No contract difference beyond the tolerances.".into());
    } else {
        line(format!(
            "The cohorts differ on the workload contract ({} warning{}): read every shift below with that in mind.",
            c.contract.warnings.len(),
            if c.contract.warnings.len() == 1 { "" } else { "s" }
        ));
    }
    line("Not checked:".into());
    for n in &c.contract.not_checked {
        line(format!("  - {n}"));
    }
    line(String::new());

    line("Named metrics — failures included; null where a request has no such point".into());
    line(format!(
        "B − A with a {:.0}% bootstrap interval ({} resamples, seed {}); p: {}",
        c.bootstrap.confidence * 100.0,
        c.bootstrap.resamples,
        c.bootstrap.seed,
        MANN_WHITNEY_METHOD
    ));
    let mut t = table(
        &[
            "metric (ms unless stated)",
            "",
            "A",
            "B",
            "B − A",
            "95% interval",
            "p",
        ],
        2..7,
    );
    for m in &c.metrics {
        let first = [
            m.label.clone(),
            format!("A: n {}, {} failed", m.a.pct.n, m.a.failures),
            format!("B: n {}, {} failed", m.b.pct.n, m.b.failures),
        ];
        let values = pct_cells(m);
        for (k, s) in m.shift.iter().enumerate() {
            t.add_row(vec![
                first[k].clone(),
                s.quantile.to_string(),
                values[k].0.clone(),
                values[k].1.clone(),
                signed(s.estimate),
                interval(s),
                if k == 0 {
                    m.mann_whitney
                        .map(|w| fmt_p(w.p_value))
                        .unwrap_or_else(|| "—".into())
                } else {
                    String::new()
                },
            ]);
        }
    }
    line(render(t, width));
    for l in LeftOut::lines(&c.metrics_left_out) {
        line(l);
    }
    line(String::new());

    line("Class mix — share of each cohort's requests".into());
    let mut t = table(
        &["class", "A", "A share", "B", "B share", "B − A (points)"],
        1..6,
    );
    for k in &c.classes {
        t.add_row(vec![
            k.class.clone(),
            k.a.to_string(),
            fmt_share(k.a_share),
            k.b.to_string(),
            fmt_share(k.b_share),
            format!("{:+.1}", k.difference_points),
        ]);
    }
    line(render(t, width));
    fit(&out, width)
}

/// A cell of several lines: each escaped, joined by `<br>` (a line break inside a GFM
/// table cell).
fn md_lines(s: &str) -> String {
    s.lines().map(md).collect::<Vec<_>>().join("<br>")
}

/// The comparison as Markdown, to paste into a postmortem: the same sections and figures
/// as the terminal text, as headings and tables.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::from("# Comparison\n\n");
    out.push_str(&format!(
        "{} — compare, rules: {} ({}). All times are UTC. Failed, cancelled and timed-out requests are included in every figure.\n\n",
        md(&c.tool),
        code(&c.rules.name),
        code(&c.rules.source)
    ));
    out.push_str(&format!("**Verdict:** {}\n\n", md(&c.verdict)));
    for s in &c.cohorts {
        out.push_str(&format!(
            "- **{}**: {} — {} requests, {} failed ({}), from {}\n",
            md(&s.label),
            md(&s.name),
            s.requests,
            s.failures,
            fmt_share(s.failure_rate),
            s.inputs
                .iter()
                .map(|i| code(i))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(m) = crate::summary::MappedColumn::line(&c.mapped_columns) {
        out.push_str(&format!("- {}\n", md(&m)));
    }
    if let Some(w) = &c.window {
        out.push_str(&format!(
            "- window: {} ≤ received < {} (requests without a timestamp are left out)\n",
            md(w.since.as_deref().unwrap_or("−∞")),
            md(w.until.as_deref().unwrap_or("+∞"))
        ));
    }
    // Bad rows are diagnostics: on stderr, as for every format.
    out.push_str(&format!("- percentiles: {}\n", md(c.percentile_method)));
    out.push_str(&format!("- percentile rule: {}\n\n", md(c.percentile_rule)));

    out.push_str("## Workload contract\n\n");
    out.push_str("Checked first: a ranking holds only when both cohorts share it.\n\n");
    out.push_str(&header(
        &["field", "A", "B", "difference", "tolerance", ""],
        &[],
    ));
    for k in &c.contract.checks {
        out.push_str(&row(&[
            md(&k.field),
            md_lines(&k.a),
            md_lines(&k.b),
            md_lines(&k.difference),
            md_lines(&k.tolerance),
            if k.within { "ok" } else { "**WARNING**" }.to_string(),
        ]));
    }
    out.push('\n');
    if c.contract.warnings.is_empty() {
        out.push_str("No contract difference beyond the tolerances.\n\n");
    } else {
        for w in &c.contract.warnings {
            out.push_str(&format!("- **warning**: {}\n", md(&w.message)));
        }
        out.push_str(&format!(
            "\nThe cohorts differ on the workload contract ({} warning{}): read every shift below with that in mind.\n\n",
            c.contract.warnings.len(),
            if c.contract.warnings.len() == 1 { "" } else { "s" }
        ));
    }
    out.push_str("Not checked:\n\n");
    for n in &c.contract.not_checked {
        out.push_str(&format!("- {}\n", md(n)));
    }
    out.push('\n');

    out.push_str("## Named metrics\n\n");
    out.push_str(&format!(
        "Failures included; null where a request has no such point. B − A with a {:.0}% bootstrap interval ({} resamples, seed {}); p: {}.\n\n",
        c.bootstrap.confidence * 100.0,
        c.bootstrap.resamples,
        c.bootstrap.seed,
        md(MANN_WHITNEY_METHOD)
    ));
    out.push_str(&header(
        &[
            "metric (ms unless stated)",
            "n A / B",
            "failed A / B",
            "",
            "A",
            "B",
            "B − A",
            "95% interval",
            "p",
        ],
        &[1, 2, 4, 5, 6, 7, 8],
    ));
    for m in &c.metrics {
        let values = pct_cells(m);
        for (k, s) in m.shift.iter().enumerate() {
            let first = k == 0;
            out.push_str(&row(&[
                if first { md(&m.label) } else { String::new() },
                if first {
                    format!("{} / {}", m.a.pct.n, m.b.pct.n)
                } else {
                    String::new()
                },
                if first {
                    format!("{} / {}", m.a.failures, m.b.failures)
                } else {
                    String::new()
                },
                md(s.quantile),
                values[k].0.clone(),
                values[k].1.clone(),
                signed(s.estimate),
                interval(s),
                match (first, m.mann_whitney) {
                    (true, Some(w)) => fmt_p(w.p_value),
                    (true, None) => "—".into(),
                    (false, _) => String::new(),
                },
            ]));
        }
    }
    for l in LeftOut::lines(&c.metrics_left_out) {
        out.push_str(&format!("\n{}\n", md(&l)));
    }
    out.push('\n');

    out.push_str("## Class mix\n\nShare of each cohort's requests.\n\n");
    out.push_str(&header(
        &["class", "A", "A share", "B", "B share", "B − A (points)"],
        &[1, 2, 3, 4, 5],
    ));
    for k in &c.classes {
        out.push_str(&row(&[
            code(&k.class),
            k.a.to_string(),
            fmt_share(k.a_share),
            k.b.to_string(),
            fmt_share(k.b_share),
            format!("{:+.1}", k.difference_points),
        ]));
    }
    out
}
