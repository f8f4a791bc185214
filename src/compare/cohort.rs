//! One cohort as the comparison reads it: its summary and the values its tests need.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::result::*;
use super::two_sample::{round4, sorted};
use super::{Cohort, MIX_LABELS};
use crate::analyze::iso_ms;
use crate::stats;
use crate::stats::quantile7;
use crate::summary::{round3, Count, TimeSpan};

/// A cohort's summary and the raw values the tests need.
pub(super) struct CohortData {
    pub(super) summary: CohortSummary,
    pub(super) input_tokens: Vec<f64>,
    pub(super) output_tokens: Vec<f64>,
    /// First and last timestamp, ms since the epoch.
    pub(super) span: Option<(i64, i64)>,
    pub(super) mixes: BTreeMap<&'static str, BTreeMap<String, u64>>,
    pub(super) classes: BTreeMap<String, u64>,
}

pub(super) fn values(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<f64>>> {
    let c = df.column(name)?.cast(&DataType::Float64)?;
    let ca = c.f64()?;
    Ok((0..ca.len())
        .map(|i| ca.get(i).filter(|x| x.is_finite()))
        .collect())
}

pub(super) fn failed(df: &DataFrame) -> PolarsResult<Vec<bool>> {
    let c = df.column("outcome")?.cast(&DataType::String)?;
    let c = c.str()?;
    Ok((0..c.len())
        .map(|i| c.get(i).is_some_and(|o| o != "ok"))
        .collect())
}

pub(super) fn dist(v: &[f64]) -> Dist {
    if v.is_empty() {
        return Dist::default();
    }
    let s = sorted(v);
    Dist {
        n: s.len() as u64,
        mean: Some(round3(s.iter().sum::<f64>() / s.len() as f64)),
        p50: quantile7(&s, 0.5).map(round3),
        p95: quantile7(&s, 0.95).map(round3),
    }
}

pub(super) fn label_counts(df: &DataFrame, column: &str) -> PolarsResult<BTreeMap<String, u64>> {
    Ok(stats::counts(df.clone().lazy(), &[column.to_string()])?
        .into_iter()
        .filter_map(|(k, n)| k.into_iter().next().flatten().map(|k| (k, n)))
        .collect())
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
    pub(super) fn of(label: &str, c: &Cohort) -> PolarsResult<CohortData> {
        let df = &c.frame;
        let rows = df.height() as u64;
        let failures = failed(df)?.iter().filter(|f| **f).count() as u64;
        let oc = label_counts(df, "outcome")?;
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
        let known: u64 = oc.values().sum();
        if known < rows {
            outcomes.push(Count {
                name: "unknown".into(),
                count: rows - known,
            });
        }

        let ts = df.column("timestamp")?.cast(&DataType::Int64)?;
        let ts = ts.i64()?;
        let (min, max) = (ts.min(), ts.max());
        let with_ts = (rows as usize - ts.null_count()) as u64;
        let span = min.zip(max);
        let span_minutes = span.map(|(s, e)| (e - s) as f64 / 60_000.0);
        let arrival = span_minutes
            .filter(|m| *m > 0.0)
            .map(|m| round3(with_ts as f64 / m));

        let stream = df.column("is_stream")?.cast(&DataType::Boolean)?;
        let stream = stream.bool()?;
        let streamed = stream.sum().unwrap_or(0) as u64;
        let stream_known = (rows as usize - stream.null_count()) as u64;
        let not_streamed = stream_known - streamed;

        let input_tokens: Vec<f64> = values(df, "input_tokens")?.into_iter().flatten().collect();
        let output_tokens: Vec<f64> = values(df, "output_tokens")?.into_iter().flatten().collect();
        let inflight: Vec<f64> = values(df, "inflight")?.into_iter().flatten().collect();

        let mut mixes = BTreeMap::new();
        for (column, _) in MIX_LABELS {
            mixes.insert(column, label_counts(df, column)?);
        }
        let classes = label_counts(df, "class")?;

        let summary = CohortSummary {
            label: label.to_string(),
            name: c.name.clone(),
            inputs: c.inputs.clone(),
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
            not_streamed,
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
        Ok(CohortData {
            summary,
            input_tokens,
            output_tokens,
            span,
            mixes,
            classes,
        })
    }
}
