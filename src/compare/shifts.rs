//! The metrics compared (percentiles, their shifts with intervals, the U test), the
//! verdict, and the class mix.

use super::cohort::CohortData;
use super::contract::num;
use super::result::*;
use super::two_sample::{mann_whitney_tallies, round4, round_sig, Bootstrap, SplitMix64};
use super::{Settings, CONFIDENCE, QUANTILES};
use crate::ruleset::Metric;
use crate::stats::quantile7_at;
use crate::stats::ranked::Ranked;
use crate::stats::support;
use crate::summary::{round3, Pct};

/// Per compared metric, what the last pass must read: the bootstrap's draws, and for each
/// cohort the ranges of ranks its percentiles and its draws read.
pub(super) struct Reads {
    pub(super) draws: Vec<Option<Bootstrap>>,
    /// Per metric, A's ranges then B's (0-based ranks, both ends included).
    pub(super) ranges: Vec<[Vec<(u64, u64)>; 2]>,
}

/// The ranks each metric's percentiles and bootstrap read, from the histograms' counts;
/// the bootstrap's random stream is drawn here, one stream per metric.
pub(super) fn reads(a: &CohortData, b: &CohortData, settings: &Settings) -> Reads {
    let qs: Vec<f64> = QUANTILES.iter().map(|q| q.1).collect();
    let mut draws = vec![];
    let mut ranges = vec![];
    for (i, (ha, hb)) in a.histograms.iter().zip(&b.histograms).enumerate() {
        let n = [total_of(ha), total_of(hb)];
        // One stream per metric, so a metric's interval does not depend on the others.
        let mut rng = SplitMix64::new(settings.seed.wrapping_add(i as u64));
        let d = Bootstrap::draw(n[0], n[1], &qs, settings.resamples, &mut rng);
        let per_side = |side: usize| -> Vec<(u64, u64)> {
            let n = n[side];
            if n == 0 {
                return vec![];
            }
            let mut r: Vec<(u64, u64)> = qs
                .iter()
                .map(|q| {
                    let h = (n - 1) as f64 * q;
                    ((h as u64).min(n - 1), (h.ceil() as u64).min(n - 1))
                })
                .collect();
            if let Some(d) = &d {
                r.extend((0..qs.len()).map(|k| d.span(k, side)));
            }
            r
        };
        ranges.push([per_side(0), per_side(1)]);
        draws.push(d);
    }
    Reads { draws, ranges }
}

fn total_of(hist: &std::collections::BTreeMap<i64, u64>) -> u64 {
    hist.values().sum()
}

/// The metrics compared, from pass 1's histograms and the values the last pass read
/// (`ranked`: per metric, A's then B's).
pub(super) fn metrics(
    reported: &[&Metric],
    a: &CohortData,
    b: &CohortData,
    reads: &Reads,
    ranked: &[[Ranked; 2]],
) -> Vec<MetricComparison> {
    let mut out = vec![];
    for (i, m) in reported.iter().enumerate() {
        let side = |c: &CohortData, r: &Ranked| -> Side {
            let n = total_of(&c.histograms[i]);
            let p = |q: f64| quantile7_at(n, q, |k| r.at(k)).map(round3);
            Side {
                pct: Pct {
                    n,
                    p50: p(0.50),
                    p95: p(0.95),
                    p99: p(0.99),
                },
                nulls: c.summary.requests - n,
                failures: c.failures_with_value[i],
            }
        };
        let (side_a, side_b) = (side(a, &ranked[i][0]), side(b, &ranked[i][1]));
        let cis = match &reads.draws[i] {
            Some(d) => d.intervals(|k| ranked[i][0].at(k), |k| ranked[i][1].at(k), CONFIDENCE),
            None => vec![None; QUANTILES.len()],
        };
        let get = |s: &Side, k: usize| match k {
            0 => s.pct.p50,
            1 => s.pct.p95,
            _ => s.pct.p99,
        };
        let shift = QUANTILES
            .iter()
            .enumerate()
            .map(|(k, &(name, q))| {
                // A shift is no better than the weaker of its two percentiles.
                let withheld = [("A", &side_a), ("B", &side_b)]
                    .into_iter()
                    .filter_map(|(l, s)| support::withheld(q, s.pct.n).map(|w| format!("{l}: {w}")))
                    .collect::<Vec<_>>();
                if !withheld.is_empty() {
                    return Shift {
                        quantile: name,
                        estimate: None,
                        ci_low: None,
                        ci_high: None,
                        withheld: Some(withheld.join("; ")),
                    };
                }
                Shift {
                    quantile: name,
                    estimate: get(&side_b, k)
                        .zip(get(&side_a, k))
                        .map(|(y, x)| round3(y - x)),
                    ci_low: cis[k].map(|c| round3(c.0)),
                    ci_high: cis[k].map(|c| round3(c.1)),
                    withheld: None,
                }
            })
            .collect();
        // The U test on the histograms' bins: values in one bin tie.
        let bins = |c: &CohortData| -> Vec<(i64, u64)> {
            c.histograms[i].iter().map(|(b, n)| (*b, *n)).collect()
        };
        out.push(MetricComparison {
            name: m.name.clone(),
            label: m.label.clone().unwrap_or_default(),
            a: side_a,
            b: side_b,
            shift,
            mann_whitney: mann_whitney_tallies(&bins(a), &bins(b)).map(|t| MannWhitney {
                u: round3(t.u),
                b_above_a: round4(t.b_above_a),
                z: round4(t.z),
                p_value: round_sig(t.p_value),
            }),
        });
    }
    out
}

/// A figure with its sign, as `num` shows it: `+12.5`, `-360`.
pub(super) fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", num(Some(x)))
    } else {
        num(Some(x))
    }
}

/// The one-line verdict: the largest significant shift (its interval excludes 0; largest
/// relative to A's value, so metrics of different units compare) and the contract.
pub(super) fn verdict(contract: &Contract, metrics: &[MetricComparison]) -> String {
    let confidence = format!("{:.0}%", CONFIDENCE * 100.0);
    let mut best: Option<(f64, String)> = None;
    // Many intervals are tested at once: some exclude 0 by chance alone, so the verdict
    // says how many did against how many chance would give.
    let (mut tested, mut excluding) = (0u32, 0u32);
    for m in metrics {
        for (s, (_, _, a)) in m.shift.iter().zip(m.a.pct.quantiles()) {
            let b =
                m.b.pct
                    .quantiles()
                    .into_iter()
                    .find(|q| q.0 == s.quantile)
                    .and_then(|q| q.2);
            let (Some(est), Some(lo), Some(hi), Some(a), Some(b)) =
                (s.estimate, s.ci_low, s.ci_high, a, b)
            else {
                continue;
            };
            tested += 1;
            if !(lo > 0.0 || hi < 0.0) || a == 0.0 {
                continue;
            }
            excluding += 1;
            let rel = est / a.abs();
            if best.as_ref().is_some_and(|(r, _)| r.abs() >= rel.abs()) {
                continue;
            }
            let label = if m.label.is_empty() {
                &m.name
            } else {
                &m.label
            };
            best = Some((
                rel,
                format!(
                    "the largest significant shift is {label} {}, {} → {} ({}, {:+.1}%; {confidence} interval [{}, {}])",
                    s.quantile,
                    num(Some(a)),
                    num(Some(b)),
                    signed(est),
                    rel * 100.0,
                    signed(lo),
                    signed(hi)
                ),
            ));
        }
    }
    let found = best.is_some();
    let chance = f64::from(tested) * (1.0 - CONFIDENCE);
    let shift = best.map(|b| {
        format!(
            "{}; {excluding} of {tested} intervals exclude{} 0, where chance alone gives about {chance:.1}",
            b.1,
            if excluding == 1 { "s" } else { "" }
        )
    });
    let shift = shift.unwrap_or_else(|| {
        format!("no percentile shift B − A has a {confidence} interval that excludes 0")
    });
    let contract = match contract.warnings.len() {
        0 => "the workload contract holds (no difference beyond the tolerances)".to_string(),
        n => {
            let mut fields: Vec<&str> =
                contract.warnings.iter().map(|w| w.field.as_str()).collect();
            fields.dedup();
            format!(
                "{}the cohorts differ on the workload contract ({n} warning{}: {}){}",
                if found { "but " } else { "" },
                if n == 1 { "" } else { "s" },
                fields.join(", "),
                if found {
                    ", so the shift may come from the workload"
                } else {
                    ""
                }
            )
        }
    };
    format!("B against A: {shift}; {contract}.")
}

pub(super) fn class_mix(
    rules: &crate::ruleset::RuleSet,
    a: &CohortData,
    b: &CohortData,
) -> Vec<ClassMix> {
    let (ta, tb) = (a.summary.requests as f64, b.summary.requests as f64);
    rules
        .class_order()
        .into_iter()
        .map(|c| {
            let x = a.classes.get(c).copied().unwrap_or(0);
            let y = b.classes.get(c).copied().unwrap_or(0);
            let (sx, sy) = (x as f64 / ta.max(1.0), y as f64 / tb.max(1.0));
            ClassMix {
                class: c.to_string(),
                a: x,
                a_share: round4(sx),
                b: y,
                b_share: round4(sy),
                difference_points: round3((sy - sx) * 100.0),
            }
        })
        .collect()
}
