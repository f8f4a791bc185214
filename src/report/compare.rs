//! The `compare` report: the workload contract first (docs/compare.md), then the named metrics side
//! by side with the shift B − A, then the class mix. Terminal tables and stable JSON; all
//! figures come computed and rounded from `crate::compare`.

use super::{fmt_num, fmt_q, fmt_share, table};
use crate::compare::{fmt_p, Comparison, Shift, MANN_WHITNEY_METHOD};

/// A signed figure: `+12.5`, `-3.0`, `0.0`.
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

pub fn terminal(c: &Comparison) -> String {
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
    line(t.to_string());
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
        let (qa, qb) = (m.a.pct.quantiles(), m.b.pct.quantiles());
        let values: Vec<(String, String)> = qa
            .iter()
            .zip(&qb)
            .map(|(&(_, q, a), &(_, _, b))| (fmt_q(q, m.a.pct.n, a), fmt_q(q, m.b.pct.n, b)))
            .collect();
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
    line(t.to_string());
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
    line(t.to_string());
    out
}

pub fn json(c: &Comparison) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("a comparison always serializes");
    s.push('\n');
    s
}
