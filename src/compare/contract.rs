//! The workload contract: what must match between the cohorts for the comparison to be
//! fair, each difference beyond its tolerance a warning (the table in `compare`'s doc).

use std::collections::{BTreeMap, BTreeSet};

use super::cohort::CohortData;
use super::result::*;
use super::two_sample::{ks_tallies, round4, round_sig};
use super::{
    ARRIVAL_RATIO, FAILURE_POINTS, INFLIGHT_RATIO, MIN_OVERLAP, MIN_REQUESTS, MIX_LABELS,
    MIX_POINTS, NOT_IN_LOG, STREAMING_POINTS, TOKEN_P_VALUE,
};
use crate::stats::support;

pub(super) fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

pub(super) fn num(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// A p-value for display: three decimals, or scientific below 0.001.
pub fn fmt_p(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else if p > 0.0 {
        format!("{p:.1e}")
    } else {
        "<1e-300".into()
    }
}

/// `max / min` of two non-negative figures (infinite when only one is zero).
pub(super) fn ratio(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    if hi == 0.0 {
        1.0
    } else if lo == 0.0 {
        f64::INFINITY
    } else {
        hi / lo
    }
}

pub(super) struct Checker {
    checks: Vec<Check>,
    warnings: Vec<Warning>,
    not_checked: Vec<String>,
}

impl Checker {
    /// Record one check; beyond tolerance it becomes a warning naming both values.
    fn check(
        &mut self,
        field: &str,
        a: String,
        b: String,
        difference: String,
        tolerance: &str,
        within: bool,
    ) {
        if !within {
            self.warnings.push(Warning {
                field: field.to_string(),
                message: format!(
                    "{field}: A {} vs B {} — {difference} (tolerance: {tolerance})",
                    one_line(&a),
                    one_line(&b)
                ),
            });
        }
        self.checks.push(Check {
            field: field.to_string(),
            a,
            b,
            difference,
            tolerance: tolerance.to_string(),
            within,
        });
    }

    /// A field recorded in one cohort only is a warning; in neither, it is not checked.
    /// Returns true when both cohorts have it.
    fn recorded(&mut self, field: &str, in_a: bool, in_b: bool, tolerance: &str) -> bool {
        match (in_a, in_b) {
            (true, true) => true,
            (false, false) => {
                self.not_checked
                    .push(format!("{field}: not recorded in either cohort"));
                false
            }
            _ => {
                let (a, b) = if in_a {
                    ("recorded".to_string(), "not recorded".to_string())
                } else {
                    ("not recorded".to_string(), "recorded".to_string())
                };
                self.check(
                    field,
                    a,
                    b,
                    "recorded in one cohort only".into(),
                    tolerance,
                    false,
                );
                false
            }
        }
    }
}

/// A multi-line cell as one line: a list joined by commas, a window's `→ end` and
/// `(minutes)` continuing the line.
pub(super) fn one_line(text: &str) -> String {
    text.replace("\n→", " →")
        .replace("\n(", " (")
        .replace('\n', ", ")
}

pub(super) fn mix_text(m: &BTreeMap<String, u64>) -> String {
    let total: u64 = m.values().sum();
    m.iter()
        .map(|(k, n)| format!("{k} {}", pct(*n as f64 / total as f64)))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn dist_text(d: &Dist) -> String {
    format!(
        "p50 {} · p95 {} · mean {} (n {})",
        num(d.p50),
        support::cell(0.95, d.n).unwrap_or_else(|| num(d.p95)),
        num(d.mean),
        d.n
    )
}

pub(super) fn contract(a: &CohortData, b: &CohortData, split: Option<&str>) -> Contract {
    let (sa, sb) = (&a.summary, &b.summary);
    let mut c = Checker {
        checks: vec![],
        warnings: vec![],
        not_checked: vec![],
    };

    // Model ids, groups, regions: the sets, then the mix.
    for (column, field) in MIX_LABELS {
        if split == Some(column) {
            c.not_checked.push(format!(
                "{field}: the split column (the cohorts differ on it by construction)"
            ));
            continue;
        }
        let (ma, mb) = (&a.mixes[column], &b.mixes[column]);
        let tolerance = format!("same set; shares within {MIX_POINTS:.0} points");
        if !c.recorded(field, !ma.is_empty(), !mb.is_empty(), &tolerance) {
            continue;
        }
        let ka: BTreeSet<&String> = ma.keys().collect();
        let kb: BTreeSet<&String> = mb.keys().collect();
        let (ta, tb) = (
            ma.values().sum::<u64>() as f64,
            mb.values().sum::<u64>() as f64,
        );
        let (difference, within) = if ka != kb {
            let only = |x: &BTreeSet<&String>, y: &BTreeSet<&String>| {
                x.difference(y)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (oa, ob) = (only(&ka, &kb), only(&kb, &ka));
            let mut parts = vec![];
            if !oa.is_empty() {
                parts.push(format!("only in A: {oa}"));
            }
            if !ob.is_empty() {
                parts.push(format!("only in B: {ob}"));
            }
            (format!("different sets: {}", parts.join("; ")), false)
        } else {
            let (worst, points) = ka
                .iter()
                .map(|k| {
                    let d = (mb[*k] as f64 / tb - ma[*k] as f64 / ta) * 100.0;
                    (k.as_str(), d)
                })
                .fold(("", 0.0f64), |best, x| {
                    if x.1.abs() > best.1.abs() {
                        x
                    } else {
                        best
                    }
                });
            (
                format!("same set; largest share gap {points:+.1} points ({worst})"),
                points.abs() <= MIX_POINTS,
            )
        };
        c.check(
            field,
            mix_text(ma),
            mix_text(mb),
            difference,
            &tolerance,
            within,
        );
    }

    // Streaming share.
    let tolerance = format!("within {STREAMING_POINTS:.0} points");
    if split == Some("is_stream") {
        c.not_checked.push(
            "streaming share: the split column (the cohorts differ on it by construction)".into(),
        );
    } else if c.recorded(
        "streaming share",
        sa.streaming_share.is_some(),
        sb.streaming_share.is_some(),
        &tolerance,
    ) {
        let share = |s: &CohortSummary| s.streamed as f64 / (s.streamed + s.not_streamed) as f64;
        let (x, y) = (share(sa), share(sb));
        let d = (y - x) * 100.0;
        let text = |s: &CohortSummary, share: f64| {
            format!(
                "{} ({} of {})",
                pct(share),
                s.streamed,
                s.streamed + s.not_streamed
            )
        };
        c.check(
            "streaming share",
            text(sa, x),
            text(sb, y),
            format!("{d:+.1} points"),
            &tolerance,
            d.abs() <= STREAMING_POINTS,
        );
    }

    // Token distributions.
    let tolerance = format!("KS p ≥ {TOKEN_P_VALUE}");
    let mut tests = vec![];
    for (field, xa, xb, da, db) in [
        (
            "input tokens",
            &a.input_tokens,
            &b.input_tokens,
            &sa.input_tokens,
            &sb.input_tokens,
        ),
        (
            "output tokens",
            &a.output_tokens,
            &b.output_tokens,
            &sa.output_tokens,
            &sb.output_tokens,
        ),
    ] {
        let test = ks_tallies(xa, xb).map(|t| TwoSample {
            statistic: round4(t.statistic),
            p_value: round_sig(t.p_value),
            ..t
        });
        tests.push(test);
        if !c.recorded(field, !xa.is_empty(), !xb.is_empty(), &tolerance) {
            continue;
        }
        let t = test.expect("both samples are non-empty");
        c.check(
            field,
            dist_text(da),
            dist_text(db),
            format!("KS D {:.3}, p {}", t.statistic, fmt_p(t.p_value)),
            &tolerance,
            t.p_value >= TOKEN_P_VALUE,
        );
    }

    // Concurrency.
    let tolerance = format!("ratio ≤ {INFLIGHT_RATIO}");
    if c.recorded(
        "concurrency (inflight)",
        sa.inflight.n > 0,
        sb.inflight.n > 0,
        &tolerance,
    ) {
        let (x, y) = (
            sa.inflight.p50.unwrap_or(0.0),
            sb.inflight.p50.unwrap_or(0.0),
        );
        let r = ratio(x, y);
        c.check(
            "concurrency (inflight)",
            format!("median {} (n {})", num(Some(x)), sa.inflight.n),
            format!("median {} (n {})", num(Some(y)), sb.inflight.n),
            format!(
                "ratio {}",
                if r.is_finite() {
                    format!("{r:.2}")
                } else {
                    "∞".into()
                }
            ),
            &tolerance,
            r <= INFLIGHT_RATIO,
        );
    }

    // Arrival rate.
    let tolerance = format!("ratio ≤ {ARRIVAL_RATIO}");
    if sa.arrival_per_minute.is_some() && sb.arrival_per_minute.is_some() {
        let (x, y) = (
            sa.arrival_per_minute.unwrap_or(0.0),
            sb.arrival_per_minute.unwrap_or(0.0),
        );
        let r = ratio(x, y);
        c.check(
            "arrival rate",
            format!("{} requests/min", num(Some(x))),
            format!("{} requests/min", num(Some(y))),
            format!("ratio {r:.2}"),
            &tolerance,
            r <= ARRIVAL_RATIO,
        );
    } else {
        c.not_checked
            .push("arrival rate: a cohort has fewer than two distinct timestamps".to_string());
    }

    // Time windows.
    let tolerance = format!("overlap ≥ {:.0}% of the shorter", MIN_OVERLAP * 100.0);
    match (a.span, b.span) {
        (Some((s1, e1)), Some((s2, e2))) => {
            let overlap = (e1.min(e2) - s1.max(s2)).max(0) as f64;
            let shorter = (e1 - s1).min(e2 - s2) as f64;
            let share = if shorter > 0.0 {
                overlap / shorter
            } else if s1.max(s2) <= e1.min(e2) {
                1.0
            } else {
                0.0
            };
            let text = |s: &CohortSummary| match &s.time_span {
                Some(t) => format!("{}\n→ {}\n({} min)", t.start, t.end, num(s.span_minutes)),
                None => "—".into(),
            };
            c.check(
                "time windows",
                text(sa),
                text(sb),
                format!("overlap {} of the shorter window", pct(share)),
                &tolerance,
                share >= MIN_OVERLAP,
            );
        }
        (ta, tb) => {
            c.recorded("time windows", ta.is_some(), tb.is_some(), &tolerance);
        }
    }

    // Sample counts.
    let tolerance = format!("≥ {MIN_REQUESTS} requests each");
    c.check(
        "sample counts",
        format!("{} requests", sa.requests),
        format!("{} requests", sb.requests),
        format!("{:+}", sb.requests as i64 - sa.requests as i64),
        &tolerance,
        sa.requests.min(sb.requests) >= MIN_REQUESTS,
    );

    // Failure rates.
    let tolerance = format!("within {FAILURE_POINTS:.0} points");
    if matches!(split, Some("outcome" | "status")) {
        c.not_checked
            .push("failure rates: the split column decides them".into());
    } else {
        let rate = |s: &CohortSummary| s.failures as f64 / s.requests as f64;
        let d = (rate(sb) - rate(sa)) * 100.0;
        let text =
            |s: &CohortSummary| format!("{} ({} of {})", pct(rate(s)), s.failures, s.requests);
        c.check(
            "failure rates",
            text(sa),
            text(sb),
            format!("{d:+.1} points"),
            &tolerance,
            d.abs() <= FAILURE_POINTS,
        );
    }

    c.not_checked.push(if split == Some("channel") {
        "channel: the split column (the cohorts differ on it by construction)".into()
    } else {
        "channel (route): not checked, as it is usually what a comparison compares".into()
    });
    for f in NOT_IN_LOG {
        c.not_checked.push(format!("{f}: not in a gateway log"));
    }
    Contract {
        checks: c.checks,
        input_tokens_test: tests[0],
        output_tokens_test: tests[1],
        warnings: c.warnings,
        not_checked: c.not_checked,
    }
}
