//! One cohort as the comparison reads it: its summary, its label counts, its token tallies
//! and each metric's histogram, asked of the plan in one streaming pass (`pass_one`),
//! never its rows.
//!
//! A source is one lazy frame holding one cohort (the pair form: each input set its own
//! plan) or both (the split form: one plan, the split column a key of every group-by), so
//! a split log is read once for both cohorts.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::result::*;
use super::two_sample::{round4, total};
use super::MIX_LABELS;
use crate::analyze::iso_ms;
use crate::stats::exact::{from_order_key, order_key, Counts};
use crate::stats::histogram::Histograms;
use crate::stats::ranked::histograms;
use crate::stats::{key_columns, keys_as_text, quantile7_at, true_count, Key};
use crate::summary::{round3, Count, TimeSpan};

/// One lazy frame of requests and the cohorts it holds.
pub(super) struct Source {
    pub(super) lf: LazyFrame,
    /// The group-by keys telling its cohorts apart (the split column), or none.
    pub(super) fine: Vec<String>,
    /// Each cohort it holds: 0 for A, 1 for B, and its key.
    pub(super) members: Vec<(usize, Key)>,
}

/// A cohort's summary, tallies and histograms.
pub(super) struct CohortData {
    pub(super) summary: CohortSummary,
    /// Distinct token counts with their requests, in order (`two_sample::tally`'s form).
    pub(super) input_tokens: Vec<(i64, u64)>,
    pub(super) output_tokens: Vec<(i64, u64)>,
    /// First and last timestamp, ms since the epoch.
    pub(super) span: Option<(i64, i64)>,
    pub(super) mixes: BTreeMap<&'static str, BTreeMap<String, u64>>,
    pub(super) classes: BTreeMap<String, u64>,
    /// Per compared metric, in order: rows per bucket of its values (`stats::exact`).
    pub(super) histograms: Vec<Counts>,
    /// Per compared metric: the failed requests among those with a value.
    pub(super) failures_with_value: Vec<u64>,
}

const ROWS: &str = "__rows";
const TS_MIN: &str = "__ts_min";
const TS_MAX: &str = "__ts_max";
const TS_N: &str = "__ts_n";
const VALUE: &str = "__value";
const N: &str = "__n";

/// The label columns counted per cohort, in the counts query's keys: the outcome, the
/// contract's mixes, the class, and the streaming flag.
fn labels() -> Vec<&'static str> {
    let mut l = vec!["outcome"];
    l.extend(MIX_LABELS.iter().map(|(c, _)| *c));
    l.extend(["class", "is_stream"]);
    l
}

/// The numeric columns tallied per cohort (each distinct value with its requests).
const TALLIED: [&str; 3] = ["input_tokens", "output_tokens", "inflight"];

fn failed() -> Expr {
    col("outcome").cast(DataType::String).neq(lit("ok"))
}

fn failed_name(i: usize) -> String {
    format!("__failed_{i}")
}

fn keys(fine: &[String]) -> Vec<Expr> {
    fine.iter().map(|k| col(k.as_str())).collect()
}

/// Pass 1 for one source: the counts (requests per combination of the labels, with
/// their first and last timestamp and, per metric, their failures with a value), the
/// tallies, then each metric's histogram. One group-by for every count: the labels' few
/// combinations are rolled up afterwards.
pub(super) fn pass_one(
    source: &Source,
    metrics: &[String],
) -> PolarsResult<(Vec<LazyFrame>, Histograms)> {
    let (lf, fine) = (&source.lf, source.fine.as_slice());
    let ts = || col("timestamp").cast(DataType::Int64);
    let mut aggs = vec![
        len().cast(DataType::UInt64).alias(ROWS),
        ts().min().alias(TS_MIN),
        ts().max().alias(TS_MAX),
        ts().count().cast(DataType::UInt64).alias(TS_N),
    ];
    for (i, m) in metrics.iter().enumerate() {
        let finite = col(m.as_str()).cast(DataType::Float64).is_finite();
        aggs.push(true_count(finite.and(failed()), &failed_name(i)));
    }
    let by = counts_keys(fine);
    let mut queries = vec![lf
        .clone()
        .group_by(keys(&by))
        .agg(aggs)
        .with_columns(keys_as_text(&by))];
    for column in TALLIED {
        // Finite values only, −0 as 0. Filtered after the projection, as `stats::exact`
        // does, so that the filter is not pushed into the subplan the queries share.
        let v = col(column).cast(DataType::Float64);
        let v = when(v.clone().is_finite())
            .then(when(v.clone().eq(lit(0.0))).then(lit(0.0)).otherwise(v))
            .otherwise(lit(NULL).cast(DataType::Float64));
        let mut cols = keys(fine);
        cols.push(v.alias(VALUE));
        let mut by = keys(fine);
        by.push(col(VALUE));
        queries.push(
            lf.clone()
                .select(cols)
                .filter(col(VALUE).is_not_null())
                .group_by(by)
                .agg([len().cast(DataType::UInt64).alias(N)])
                .with_columns(keys_as_text(fine)),
        );
    }
    let histograms = Histograms::new(lf, fine, metrics)?;
    queries.push(histograms.query());
    Ok((queries, histograms))
}

/// The counts query's keys: the source's, then each label that is not one of them (a
/// split by a label, `--split model=…`, has it among the source's keys already).
fn counts_keys(fine: &[String]) -> Vec<String> {
    let mut by = fine.to_vec();
    for l in labels() {
        if !by.iter().any(|k| k == l) {
            by.push(l.to_string());
        }
    }
    by
}

/// What pass 1 found of one cohort, before its summary is written.
#[derive(Default)]
pub(super) struct Found {
    rows: u64,
    ts: Option<(i64, i64)>,
    with_ts: u64,
    labels: BTreeMap<&'static str, BTreeMap<String, u64>>,
    tallies: BTreeMap<&'static str, Vec<(i64, u64)>>,
    histograms: Vec<Counts>,
    failures_with_value: Vec<u64>,
}

impl Found {
    pub(super) fn rows(&self) -> u64 {
        self.rows
    }
}

/// Pass 1's frames of one source (`pass_one`'s, in order) per cohort it holds.
pub(super) fn read_pass_one(
    source: &Source,
    frames: &[DataFrame],
    metrics: &[String],
) -> PolarsResult<Vec<(usize, Found)>> {
    let fine = &source.fine;
    let mut found: BTreeMap<Key, Found> = source
        .members
        .iter()
        .map(|(_, k)| {
            (
                k.clone(),
                Found {
                    histograms: vec![Counts::new(); metrics.len()],
                    failures_with_value: vec![0; metrics.len()],
                    ..Found::default()
                },
            )
        })
        .collect();
    let mut frames = frames.iter();
    let mut next = || frames.next().expect("one frame per query of pass_one");

    // The counts, rolled up from the labels' combinations.
    let df = next();
    let by = counts_keys(fine);
    let u = |name: &str| df.column(name).and_then(|c| c.cast(&DataType::UInt64));
    let i = |name: &str| df.column(name).and_then(|c| c.cast(&DataType::Int64));
    let (rows, with_ts) = (u(ROWS)?, u(TS_N)?);
    let (rows, with_ts) = (rows.u64()?, with_ts.u64()?);
    let (ts_min, ts_max) = (i(TS_MIN)?, i(TS_MAX)?);
    let (ts_min, ts_max) = (ts_min.i64()?, ts_max.i64()?);
    let failed: Vec<Column> = (0..metrics.len())
        .map(|m| u(&failed_name(m)))
        .collect::<PolarsResult<_>>()?;
    let failed: Vec<&UInt64Chunked> = failed
        .iter()
        .map(|c| c.u64())
        .collect::<PolarsResult<_>>()?;
    for (row, all) in key_columns(df, &by)?.into_iter().enumerate() {
        let Some(f) = found.get_mut(&all[..fine.len()]) else {
            continue;
        };
        let n = rows.get(row).unwrap_or(0);
        f.rows += n;
        f.with_ts += with_ts.get(row).unwrap_or(0);
        if let (Some(lo), Some(hi)) = (ts_min.get(row), ts_max.get(row)) {
            f.ts = Some(match f.ts {
                Some((a, b)) => (a.min(lo), b.max(hi)),
                None => (lo, hi),
            });
        }
        for (m, c) in failed.iter().enumerate() {
            f.failures_with_value[m] += c.get(row).unwrap_or(0);
        }
        for label in labels() {
            let at = by
                .iter()
                .position(|k| k == label)
                .expect("a key of the counts");
            if let Some(value) = &all[at] {
                *f.labels
                    .entry(label)
                    .or_default()
                    .entry(value.clone())
                    .or_default() += n;
            }
        }
    }

    for column in TALLIED {
        let df = next();
        let values = df.column(VALUE)?.f64()?;
        let n = df.column(N)?.u64()?;
        for (row, key) in key_columns(df, fine)?.into_iter().enumerate() {
            if let (Some(f), Some(x)) = (found.get_mut(&key), values.get(row)) {
                f.tallies
                    .entry(column)
                    .or_default()
                    .push((order_key(x), n.get(row).unwrap_or(0)));
            }
        }
    }
    for f in found.values_mut() {
        for t in f.tallies.values_mut() {
            t.sort_unstable();
        }
    }

    for m in 0..metrics.len() {
        for (key, hist) in histograms(next(), fine)? {
            if let Some(f) = found.get_mut(&key) {
                f.histograms[m] = hist;
            }
        }
    }

    Ok(source
        .members
        .iter()
        .map(|(cohort, key)| (*cohort, found.remove(key).unwrap_or_default()))
        .collect())
}

/// n, mean, median and p95 of a tally (`two_sample::tally`'s form).
pub(super) fn dist(t: &[(i64, u64)]) -> Dist {
    let n = total(t);
    if n == 0 {
        return Dist::default();
    }
    // Added one value at a time in order, as a sum over the sorted values is.
    let mut sum = 0.0;
    for &(k, c) in t {
        let x = from_order_key(k);
        for _ in 0..c {
            sum += x;
        }
    }
    let at = tally_at(t);
    Dist {
        n,
        mean: Some(round3(sum / n as f64)),
        p50: quantile7_at(n, 0.5, &at).map(round3),
        p95: quantile7_at(n, 0.95, &at).map(round3),
    }
}

/// The value of each 0-based rank of a tally.
fn tally_at(t: &[(i64, u64)]) -> impl Fn(u64) -> f64 + '_ {
    let mut ends = Vec::with_capacity(t.len());
    let mut end = 0;
    for &(_, c) in t {
        end += c;
        ends.push(end);
    }
    move |rank| from_order_key(t[ends.partition_point(|&e| e <= rank)].0)
}

pub(super) fn as_counts(m: &BTreeMap<String, u64>) -> Vec<Count> {
    m.iter()
        .map(|(name, count)| Count {
            name: name.clone(),
            count: *count,
        })
        .collect()
}

pub(super) const OUTCOME_ORDER: [&str; 4] = ["ok", "error", "cancelled", "timeout"];

impl CohortData {
    /// The cohort `label` (`A`, `B`) named `name`, read from `inputs`, from what pass 1
    /// found of it.
    pub(super) fn new(label: &str, name: &str, inputs: &[String], mut f: Found) -> CohortData {
        let rows = f.rows;
        let oc = f.labels.remove("outcome").unwrap_or_default();
        let mut outcomes: Vec<Count> = OUTCOME_ORDER
            .iter()
            .filter_map(|o| {
                oc.get(*o).map(|n| Count {
                    name: o.to_string(),
                    count: *n,
                })
            })
            .collect();
        outcomes.extend(
            oc.iter()
                .filter(|(k, _)| !OUTCOME_ORDER.contains(&k.as_str()))
                .map(|(k, n)| Count {
                    name: k.clone(),
                    count: *n,
                }),
        );
        // A known outcome other than ok is a failure.
        let failures: u64 = oc.iter().filter(|(o, _)| *o != "ok").map(|(_, n)| n).sum();
        let known: u64 = oc.values().sum();
        if known < rows {
            outcomes.push(Count {
                name: "unknown".into(),
                count: rows - known,
            });
        }

        let span = f.ts;
        let span_minutes = span.map(|(s, e)| (e - s) as f64 / 60_000.0);
        let arrival = span_minutes
            .filter(|m| *m > 0.0)
            .map(|m| round3(f.with_ts as f64 / m));

        let stream = f.labels.remove("is_stream").unwrap_or_default();
        let streamed = stream.get("true").copied().unwrap_or(0);
        let stream_known: u64 = stream.values().sum();

        let mut mixes = BTreeMap::new();
        for (column, _) in MIX_LABELS {
            mixes.insert(column, f.labels.remove(column).unwrap_or_default());
        }
        let classes = f.labels.remove("class").unwrap_or_default();
        let mut tally = |c: &str| f.tallies.remove(c).unwrap_or_default();
        let (input_tokens, output_tokens, inflight) = (
            tally("input_tokens"),
            tally("output_tokens"),
            tally("inflight"),
        );

        let summary = CohortSummary {
            label: label.to_string(),
            name: name.to_string(),
            inputs: inputs.to_vec(),
            requests: rows,
            failures,
            failure_rate: round4(failures as f64 / rows.max(1) as f64),
            outcomes,
            time_span: span.and_then(|(s, e)| {
                Some(TimeSpan {
                    start: iso_ms(s)?,
                    end: iso_ms(e)?,
                })
            }),
            span_minutes: span_minutes.map(round3),
            arrival_per_minute: arrival,
            streamed,
            not_streamed: stream_known - streamed,
            stream_unknown: rows - stream_known,
            streaming_share: (stream_known > 0)
                .then(|| round4(streamed as f64 / stream_known as f64)),
            models: as_counts(&mixes["model"]),
            groups: as_counts(&mixes["group"]),
            regions: as_counts(&mixes["region"]),
            input_tokens: dist(&input_tokens),
            output_tokens: dist(&output_tokens),
            inflight: dist(&inflight),
        };
        CohortData {
            summary,
            input_tokens,
            output_tokens,
            span,
            mixes,
            classes,
            histograms: f.histograms,
            failures_with_value: f.failures_with_value,
        }
    }
}
