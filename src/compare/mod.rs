//! `tracediag compare`: two cohorts of requests side by side, compared fairly
//! (docs/compare.md).
//!
//! The cohorts are two input sets (A and B), or one input set split by the values of a
//! label column. The comparison checks the workload contract first — model ids, streaming
//! share, token distributions, concurrency and arrival rate, time windows, sample counts,
//! failure rates — and records every difference beyond a stated tolerance as a warning
//! that names the field and both values. Then come p50/p95/p99 of every named metric per
//! cohort (failures included), the shift B − A of each percentile with a bootstrap
//! confidence interval, a Mann–Whitney U test per metric (on the values binned as the
//! percentiles' histograms bin them), and the class mix.
//!
//! Plain data only: nothing here prints. The statistics (`ks_two_sample`, `mann_whitney`,
//! `bootstrap_shift`, `SplitMix64`) are public so they can be checked on their own.
//!
//! Tolerances (a difference beyond one is a warning; `--strict` makes any warning exit 1):
//!
//! | field | warning when |
//! |---|---|
//! | model ids, groups, regions | the sets of values differ, or one value's share differs by more than 10 points |
//! | streaming share | differs by more than 5 points |
//! | input / output tokens | two-sample Kolmogorov–Smirnov test rejects one distribution at p < 0.01 |
//! | concurrency (inflight median) | the larger median is more than 1.5 × the smaller |
//! | arrival rate (requests per minute over the cohort's span) | the larger is more than 1.5 × the smaller |
//! | time window | the windows overlap for less than half of the shorter one |
//! | sample count | a cohort has fewer than 100 requests (its p99 rests on one or two values) |
//! | failure rate | differs by more than 2 points |
//!
//! A field recorded in one cohort only is a warning too; a field recorded in neither is
//! listed as not checked.
//!
//! No cohort is held as rows. `cohort` asks the plan, in one streaming pass, for each
//! cohort's counts, token tallies and metric histograms; `shifts` works out which ranks
//! the percentiles and the bootstrap's draws read, and a second pass fetches the values at
//! those ranks alone (`stats::ranked`). `contract` checks the workload contract, `shifts`
//! compares the metrics and gives the verdict, with the statistics of `two_sample`;
//! `result` holds the findings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use polars::prelude::*;

use crate::analyze::{self, iso_ms};
use crate::catalogue;
use crate::error::{Error, Result};
use crate::plan;
use crate::ruleset::Metric;
use crate::ruleset::RuleSet;
use crate::source::{self, SOURCE_COL};
use crate::stats;
use crate::stats::exact::Counts;
use crate::stats::ranked::{self, InBuckets, Layout, Ranked};
use crate::stats::support;
use crate::stats::Key;
use crate::summary::{tool, BadRows, LeftOut, RulesInfo, Window, PERCENTILE_METHOD};
use cohort::{CohortData, Source};
use contract::contract;
use shifts::{class_mix, metrics, verdict};

mod cohort;
mod contract;
mod result;
mod shifts;
mod two_sample;

pub use contract::fmt_p;
pub use result::*;
pub use two_sample::{
    bootstrap_shift, kolmogorov_sf, ks_two_sample, mann_whitney, OrderDraw, SplitMix64,
};

/// The bootstrap seed when none is given: a fixed one, so the same input gives the same
/// intervals on every run.
pub const DEFAULT_SEED: u64 = 42;
/// Bootstrap resamples per metric (each resample draws both cohorts).
pub const DEFAULT_RESAMPLES: usize = 1000;
/// Confidence level of the shift intervals.
pub const CONFIDENCE: f64 = 0.95;

/// Token distributions differ when the two-sample KS test gives p below this.
pub const TOKEN_P_VALUE: f64 = 0.01;
/// Streaming shares differ by more than this many percentage points.
pub const STREAMING_POINTS: f64 = 5.0;
/// Failure rates differ by more than this many percentage points.
pub const FAILURE_POINTS: f64 = 2.0;
/// The share of one model (group, region) differs by more than this many points.
pub const MIX_POINTS: f64 = 10.0;
/// Arrival rates differ when the larger is more than this times the smaller.
pub const ARRIVAL_RATIO: f64 = 1.5;
/// Concurrency differs when the larger inflight median is more than this times the smaller.
pub const INFLIGHT_RATIO: f64 = 1.5;
/// Time windows differ when they overlap for less than this share of the shorter one.
pub const MIN_OVERLAP: f64 = 0.5;
/// A cohort needs at least this many requests for its p99 to mean something.
pub const MIN_REQUESTS: u64 = support::P99_MIN_N;

/// The quantiles reported and shifted.
pub(super) const QUANTILES: [(&str, f64); 3] = [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)];

/// Label columns whose mix is part of the workload contract.
pub(super) const MIX_LABELS: [(&str, &str); 3] = [
    ("model", "model ids"),
    ("group", "groups"),
    ("region", "regions"),
];

/// What the log cannot tell, so the check cannot make.
pub(super) const NOT_IN_LOG: [&str; 4] = [
    "reasoning effort and tools",
    "sampling settings and max output length",
    "warm-up and retry policy",
    "network path (only the coarse region is recorded)",
];

// ---------------------------------------------------------------------------------------
// Options

/// One cohort of the pair form: a name (the argument as given) and its files.
#[derive(Debug, Clone)]
pub struct CohortInput {
    pub name: String,
    pub inputs: Vec<PathBuf>,
}

/// How the two cohorts are formed.
#[derive(Debug, Clone)]
pub enum Cohorts {
    /// Two input sets, A and B.
    Pair(CohortInput, CohortInput),
    /// One input set, split by the values of a label column (A = first value).
    Split {
        inputs: Vec<PathBuf>,
        column: String,
        values: [String; 2],
    },
}

#[derive(Debug, Clone)]
pub struct Options {
    pub cohorts: Cohorts,
    /// How each cohort's files are read (format, window, bad-row policy); its `inputs`
    /// and `by` are ignored.
    pub read: analyze::Options,
    pub seed: u64,
    pub resamples: usize,
}

/// `COLUMN=A,B` (as given to `--split`) → the column and the two values.
pub fn parse_split(text: &str) -> Result<(String, [String; 2])> {
    let bad = |why: &str| {
        Error::Usage(format!(
            "--split {text}: {why}; expected COLUMN=A,B, e.g. channel=ch-east,ch-west"
        ))
    };
    let (column, values) = text.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let column = column.trim();
    if column.is_empty() {
        return Err(bad("no column"));
    }
    let values: Vec<&str> = values.split(',').map(str::trim).collect();
    match values.as_slice() {
        [a, b] if !a.is_empty() && !b.is_empty() => {
            if a == b {
                Err(bad("the two values are the same"))
            } else {
                Ok((column.to_string(), [a.to_string(), b.to_string()]))
            }
        }
        _ => Err(bad(&format!(
            "expected two values, got {}",
            values.iter().filter(|v| !v.is_empty()).count()
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// Running

/// How to compare two cohorts.
#[derive(Debug, Clone)]
struct Settings {
    seed: u64,
    resamples: usize,
    /// The split column: it differs by construction, so its mix is not checked.
    split: Option<String>,
    window: Option<Window>,
    /// The columns the user named (`--map`, `--schema`).
    mapped_columns: Vec<crate::summary::MappedColumn>,
    /// Reported metrics neither cohort can compute (`Plan::uncomputable`), and the tools
    /// whose figures the cohorts' inputs hold (`Plan::tools`): left out, and named.
    uncomputable: Vec<String>,
    tools: BTreeSet<&'static str>,
}

/// A cohort's name (the argument as given, or `column=value`) and its inputs.
type Named = (String, Vec<String>);

/// Read, analyse and split the inputs, then compare: two streaming passes over each
/// source (`cohort::pass_one`, then the values at the ranks the percentiles and the
/// bootstrap read), the figures of both cohorts from what they return.
pub fn run(rules: &RuleSet, opts: &Options) -> Result<Comparison> {
    let mut bad_rows = vec![];
    let mut overlaps = vec![];
    // Per cohort plan: the metrics it cannot compute, the tools whose figures it holds.
    let mut coverage: Vec<(Vec<String>, BTreeSet<&'static str>)> = vec![];
    let mut analyse = |inputs: &[PathBuf]| -> Result<plan::Plan> {
        let read = analyze::Options {
            inputs: inputs.to_vec(),
            by: vec![],
            ..opts.read.clone()
        };
        analyze::check(rules, &read)?;
        let plan = plan::build(rules, &read)?;
        bad_rows.extend(analyze::bad_rows(
            &plan.inputs,
            read.on_bad_row,
            plan.unparsed_skipped,
            plan.skipped_examples.clone(),
        ));
        overlaps.extend(plan.overlap.clone());
        coverage.push((plan.uncomputable.clone(), plan.tools.clone()));
        Ok(plan)
    };
    let names = |p: &[PathBuf]| {
        p.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    // Each source with its plan; the cohorts' names and inputs, A then B.
    let (sources, cohorts, split): (Vec<(Source, plan::Plan)>, [Named; 2], _) = match &opts.cohorts
    {
        Cohorts::Pair(a, b) => {
            let pa = analyse(&a.inputs)?;
            let pb = analyse(&b.inputs)?;
            let source = |plan: &plan::Plan, cohort: usize| Source {
                lf: plan.lf.clone().select(cohort_columns(&plan.rules, None)),
                fine: vec![],
                members: vec![(cohort, vec![])],
            };
            (
                vec![(source(&pa, 0), pa), (source(&pb, 1), pb)],
                [
                    (a.name.clone(), names(&a.inputs)),
                    (b.name.clone(), names(&b.inputs)),
                ],
                None,
            )
        }
        Cohorts::Split {
            inputs,
            column,
            values,
        } => {
            if !analyze::groupable(column) && !source::partition_keys(inputs).contains(column) {
                let cols: Vec<&str> = catalogue::FIELDS
                    .iter()
                    .map(|f| f.name)
                    .chain(["class", SOURCE_COL])
                    .filter(|n| analyze::groupable(n))
                    .collect();
                return Err(Error::Usage(format!(
                    "--split {column}=…: `{column}` is not a label column; expected one of {}",
                    cols.join(", ")
                )));
            }
            let plan = analyse(inputs)?;
            if !analyze::absent_columns(&plan.inputs, std::slice::from_ref(column)).is_empty() {
                return Err(Error::Usage(format!(
                    "{}: there is nothing to split",
                    analyze::absent_column_sentence(
                        &format!("--split {column}={}", values.join(",")),
                        column
                    )
                )));
            }
            let lf = plan
                .lf
                .clone()
                .select(cohort_columns(&plan.rules, Some(column)));
            // A value missing from the window may be the window's fault: say so first.
            let both = match split(lf, column, values) {
                Ok(both) => both,
                Err(e) => return Err(plan.empty_window()?.unwrap_or(e)),
            };
            let inputs = names(inputs);
            let source = Source {
                lf: both,
                fine: vec![column.clone()],
                members: vec![
                    (0, vec![Some(values[0].clone())]),
                    (1, vec![Some(values[1].clone())]),
                ],
            };
            (
                vec![(source, plan)],
                [
                    (format!("{column}={}", values[0]), inputs.clone()),
                    (format!("{column}={}", values[1]), inputs),
                ],
                Some(column.clone()),
            )
        }
    };
    // Both cohorts are classified by one table, or their classes would not compare.
    let chosen = sources[0].1.rules.clone();
    if let Some((_, other)) = sources.iter().find(|(_, p)| p.rules.name != chosen.name) {
        return Err(Error::Usage(format!(
            "the cohorts are classified by different rule tables ({} for {}, {} for {}): their classes do not compare; give both the same kind of log, or one table with --table or --rules",
            chosen.name,
            cohorts[0].0,
            other.rules.name,
            cohorts[1].0
        )));
    }
    let rules = &chosen;
    // A metric either cohort can compute is compared (null on the other side).
    let uncomputable: Vec<String> = rules
        .reported_metrics()
        .iter()
        .map(|m| m.name.clone())
        .filter(|m| coverage.iter().all(|(u, _)| u.contains(m)))
        .collect();
    let tools: BTreeSet<&'static str> = coverage
        .iter()
        .flat_map(|(_, c)| c.iter().copied())
        .collect();
    let (since, until) = (opts.read.since, opts.read.until);
    let window = (since.is_some() || until.is_some()).then(|| Window {
        since: since.and_then(iso_ms),
        until: until.and_then(iso_ms),
    });
    let settings = Settings {
        seed: opts.seed,
        resamples: opts.resamples,
        split,
        window,
        mapped_columns: crate::summary::MappedColumn::of(&opts.read.columns),
        uncomputable,
        tools,
    };
    let reported: Vec<&Metric> = rules
        .reported_metrics()
        .into_iter()
        .filter(|m| !settings.uncomputable.contains(&m.name))
        .collect();
    let metric_names: Vec<String> = reported.iter().map(|m| m.name.clone()).collect();

    // Pass 1, source by source (an error names the source's files).
    let mut found: [Option<cohort::Found>; 2] = [None, None];
    for (source, plan) in &sources {
        let frames = cohort::pass_one(source, &metric_names)
            .and_then(|(queries, histograms)| {
                let mut frames = stats::collect_all(queries)?;
                // The counting query's own frame (last) gives way to the histograms'.
                frames.pop();
                frames.extend(histograms.frames()?);
                Ok(frames)
            })
            .map_err(|e| plan.read_error(&e))?;
        for (c, f) in cohort::read_pass_one(source, &frames, &metric_names).map_err(internal)? {
            if f.rows() == 0 {
                let label = ["A", "B"][c];
                // A cohort with no request in the incident window: the window's error,
                // naming the span its inputs do cover.
                if let Some(e) = plan.empty_window()? {
                    return Err(Error::Usage(format!("cohort {label}: {e}")));
                }
                return Err(Error::Usage(format!(
                    "cohort {label} ({}) has no requests{}",
                    cohorts[c].0,
                    if settings.window.is_some() {
                        " in the window"
                    } else {
                        ""
                    }
                )));
            }
            found[c] = Some(f);
        }
    }
    let [fa, fb] = found.map(|f| f.expect("every cohort is in a source"));
    let a = CohortData::new("A", &cohorts[0].0, &cohorts[0].1, fa);
    let b = CohortData::new("B", &cohorts[1].0, &cohorts[1].1, fb);

    // The last pass: the values at the ranks the percentiles and the bootstrap read (after
    // a pass for finer buckets, for a metric whose needed buckets hold many rows).
    let reads = shifts::reads(&a, &b, &settings);
    let data = [&a, &b];
    let mut ranked: Vec<[Ranked; 2]> = vec![Default::default(); reported.len()];
    for (source, plan) in &sources {
        // Per metric, each cohort's layout (by its key), and the buckets they need.
        let mut layouts: Vec<BTreeMap<Key, Layout>> = (0..metric_names.len())
            .map(|m| {
                source
                    .members
                    .iter()
                    .map(|(c, key)| (key.clone(), Layout::of(&data[*c].histograms[m])))
                    .collect()
            })
            .collect();
        let needed = |m: usize, layouts: &BTreeMap<Key, Layout>| -> BTreeSet<i64> {
            source
                .members
                .iter()
                .flat_map(|(c, key)| layouts[key].needed(&reads.ranges[m][*c]))
                .collect()
        };
        let to_refine: Vec<usize> = (0..metric_names.len())
            .filter(|&m| {
                let n = needed(m, &layouts[m]);
                layouts[m].values().any(|l| l.too_many(&n))
            })
            .collect();
        if !to_refine.is_empty() {
            let asked = to_refine
                .iter()
                .map(|&m| (metric_names[m].clone(), needed(m, &layouts[m])))
                .collect();
            let pass = InBuckets::finer(&source.lf, &source.fine, asked).map_err(internal)?;
            let frames = stats::collect_all(vec![pass.query()])
                .and_then(|_| pass.frames())
                .map_err(|e| plan.read_error(&e))?;
            for (df, &m) in frames.iter().zip(&to_refine) {
                let finer = ranked::histograms(df, &source.fine).map_err(internal)?;
                for (key, layout) in layouts[m].iter_mut() {
                    *layout = layout.refined(finer.get(key).unwrap_or(&Counts::new()));
                }
            }
        }
        let mut wanted = vec![];
        let mut asked = vec![];
        for (m, name) in metric_names.iter().enumerate() {
            let n = needed(m, &layouts[m]);
            // The cohorts of a source share a metric's layout shift (refined together).
            if let Some(shift) = layouts[m].values().next().map(Layout::shift) {
                if !n.is_empty() {
                    wanted.push((name.clone(), shift, n));
                    asked.push(m);
                }
            }
        }
        let pass = InBuckets::values(&source.lf, &source.fine, wanted).map_err(internal)?;
        let frames = stats::collect_all(vec![pass.query()])
            .and_then(|_| pass.frames())
            .map_err(|e| plan.read_error(&e))?;
        for (df, m) in frames.iter().zip(asked) {
            let mut per_key = ranked::ranked(df, &source.fine, &layouts[m]).map_err(internal)?;
            for (c, key) in &source.members {
                ranked[m][*c] = per_key.remove(key).unwrap_or_default();
            }
        }
    }

    let contract = contract(&a, &b, settings.split.as_deref());
    let metrics = metrics(&reported, &a, &b, &reads, &ranked);
    let classes = class_mix(rules, &a, &b);
    Ok(Comparison {
        tool: tool(),
        verdict: verdict(&contract, &metrics),
        rules: RulesInfo::of(rules),
        percentile_method: PERCENTILE_METHOD,
        percentile_rule: support::RULE,
        split: settings.split.clone(),
        window: settings.window.clone(),
        mapped_columns: settings.mapped_columns.clone(),
        cohorts: vec![a.summary, b.summary],
        contract,
        bootstrap: Bootstrap {
            resamples: settings.resamples,
            seed: settings.seed,
            confidence: CONFIDENCE,
            method: BOOTSTRAP_METHOD,
        },
        mann_whitney_method: MANN_WHITNEY_METHOD,
        metrics,
        metrics_left_out: LeftOut::of(rules, &settings.uncomputable, &settings.tools),
        classes,
        bad_rows: BadRows::merge(bad_rows),
        overlapping_inputs: overlaps,
    })
}

fn internal(e: PolarsError) -> Error {
    Error::Usage(format!("compare: {e}"))
}

/// The requests of `lf` whose `column` holds `values[0]` or `values[1]`, as a lazy filter.
/// A value no request has is a usage error that lists the values there are (found by one
/// more pass over that column only).
pub fn split(lf: LazyFrame, column: &str, values: &[String; 2]) -> Result<LazyFrame> {
    let key = col(column).cast(DataType::String);
    let wanted = Series::new("values".into(), values.as_slice());
    let found = stats::counts(
        lf.clone().filter(stats::member_of(key.clone(), &wanted)),
        &[column.to_string()],
    )
    .map_err(internal)?;
    for v in values {
        if !found.contains_key(&vec![Some(v.clone())]) {
            let present = stats::counts(lf.clone(), &[column.to_string()]).map_err(internal)?;
            let mut there: Vec<String> = present
                .iter()
                .filter_map(|(k, n)| k[0].as_ref().map(|k| format!("{k} ({n})")))
                .collect();
            there.sort();
            return Err(Error::Usage(if there.is_empty() {
                format!(
                    "--split {column}={}: the log has no `{column}` values",
                    values.join(",")
                )
            } else {
                format!(
                    "--split {column}={}: no request has {column} = `{v}`; its values are {}",
                    values.join(","),
                    there.join(", ")
                )
            }));
        }
    }
    Ok(lf.filter(stats::member_of(key, &wanted)))
}

/// The columns `compare` reads from each request: the named metrics, the contract's
/// fields and labels, the class (and the split column, when there is one).
fn cohort_columns(rules: &RuleSet, split: Option<&str>) -> Vec<Expr> {
    let mut names: Vec<&str> = rules
        .reported_metrics()
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    names.extend([
        "outcome",
        "timestamp",
        "is_stream",
        "input_tokens",
        "output_tokens",
        "inflight",
        "class",
    ]);
    names.extend(MIX_LABELS.iter().map(|(c, _)| *c));
    names.extend(split);
    let mut seen = BTreeSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(*n))
        .map(col)
        .collect()
}
