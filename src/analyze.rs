//! The main job: the summary of a gateway log, asked of the lazy plan (`plan`) as
//! aggregates, in two streaming passes. The first tallies rows, failures, flags and
//! estimates per (group, class, outcome, streaming, file), builds every named metric's
//! histogram and keeps each data-quality check's examples; the second takes the exact
//! values at the ranks the percentiles need (`stats::exact`). No query holds the
//! per-request frame: each keeps what the summary shows. Another command's figures can
//! ride on the same two scans (`Beside`, the report's).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use polars::prelude::*;

use crate::catalogue::{self, Kind};
use crate::error::{Error, Result};
use crate::ids::{self, IdPolicy};
use crate::peer::{self, Definitions};
use crate::plan::{self, Plan, Scope};
use crate::quality;
use crate::ruleset::compile::{self, CLASS_INDEX, ESTIMATED_SUFFIX};
use crate::ruleset::{Node, RuleSet};
use crate::source::{
    self, BadRowPolicy, Input, InputFormat, Locations, Origin, FILE_INDEX, SOURCE_COL,
};
use crate::stats::counts::{Asked, Counts, Extreme};
use crate::stats::histogram::{Budget, Histograms};
use crate::stats::{self, exact, guess, Key, QUANTILES};
use crate::summary::*;

/// What to analyse.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub inputs: Vec<PathBuf>,
    pub input_format: Option<InputFormat>,
    /// Label columns to group the summary by.
    pub by: Vec<String>,
    /// Keep requests received at or after this instant (ms since the Unix epoch, UTC).
    pub since: Option<i64>,
    /// Keep requests received before this instant.
    pub until: Option<i64>,
    /// What happens to a row that cannot be read whole or holds an unreadable value.
    pub on_bad_row: BadRowPolicy,
    /// Client identifiers: salted hashes or kept. `None` (the default): hashed with a
    /// random salt drawn when the run starts.
    pub ids: Option<IdPolicy>,
    /// The inputs are what `rules --emit sql` wrote on an engine: class, classes and the
    /// metrics are read from them (`sql_result`), not computed.
    pub from_sql_result: bool,
    /// Also compute the peer tool's own figures by its definitions (`peer`).
    pub definitions: Option<Definitions>,
    /// The user's own column names (`--map`, `--schema`).
    pub columns: crate::source::columns::ColumnMap,
}

/// An instant given on the command line: `2026-11-02T10:00:00Z`, with or without the `Z`
/// or fractions, `2026-11-02 10:00`, or a date (`2026-11-02`, midnight), all UTC; or with
/// the offset logs write (`2026-11-16T14:00+08:00`, `…+0800`), turned into UTC.
pub fn parse_instant(text: &str) -> Result<i64> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%z",
    ] {
        if let Ok(d) = DateTime::parse_from_str(text.trim(), fmt) {
            return Ok(d.timestamp_millis());
        }
    }
    let t = text.trim().trim_end_matches(['Z', 'z']);
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(t, fmt) {
            return Ok(d.and_utc().timestamp_millis());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(d
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc()
            .timestamp_millis());
    }
    Err(Error::Usage(format!(
        "`{text}` is not a time: expected e.g. 2026-11-02T10:00:00Z, 2026-11-02 10:00 (quoted: it \
         holds a space), 2026-11-02, or with an offset 2026-11-16T14:00+08:00"
    )))
}

/// The `[since, until)` filter on a datetime column, if any bound is given.
pub fn time_filter(column: &str, since: Option<i64>, until: Option<i64>) -> Option<Expr> {
    let t = col(column).cast(DataType::Int64);
    let lower = since.map(|s| t.clone().gt_eq(lit(s)));
    let upper = until.map(|u| t.lt(lit(u)));
    match (lower, upper) {
        (Some(a), Some(b)) => Some(a.and(b)),
        (a, b) => a.or(b),
    }
}

pub struct Analysis {
    /// The lazy per-request plan the summary was asked of.
    pub plan: Plan,
    pub summary: Summary,
}

/// Another command's queries on `analyze`'s two passes, so that its figures cost no scan
/// of their own: each pass's queries are collected together, one scan for all (the
/// report's, `weekly`). The passes are pass 1 (counts and histograms) and the values
/// passes (`exact::Ranks`), one or, on a large log of fine-grained timings, two.
pub trait Beside {
    /// The plan every query of the passes is asked of, `analyze`'s included: `plan`
    /// with the columns the other command adds. polars shares a scan between queries of
    /// one plan, not between those of a plan and of that plan extended.
    fn lf(&self, plan: &LazyFrame) -> LazyFrame {
        plan.clone()
    }
    /// On a large log, before pass 1: the queries of the histograms of `sample`, the
    /// log's first rows, from which its pass-1 histograms guess where their ranks are
    /// (`stats::guess`), collected with `analyze`'s.
    fn sample(&mut self, _sample: &LazyFrame) -> PolarsResult<Vec<LazyFrame>> {
        Ok(vec![])
    }
    /// Pass 1's queries. Like every query of the passes, each counts into totals its
    /// owner holds (`stats::counting_query`): their frames are not kept. The values its
    /// histograms keep on a guess count against `budget`, with `analyze`'s.
    fn first(&mut self, budget: &Arc<Budget>) -> PolarsResult<Vec<LazyFrame>>;
    /// Reads what pass 1 counted, once collected.
    fn read_first(&mut self) -> PolarsResult<()>;
    /// The next values pass's queries; none once every value is found.
    fn values(&mut self) -> PolarsResult<Vec<LazyFrame>>;
    /// Reads what the values pass found, once collected.
    fn read(&mut self) -> PolarsResult<()>;
    /// `analyze`'s percentiles per class (`CLASS_INDEX` as text) of each of `values`, in
    /// order, once found: figures the other command need not count again.
    fn by_class(&mut self, _values: &[String], _pcts: &BTreeMap<Key, Vec<Pct>>) {}
}

/// Nothing beside: `analyze` alone.
struct Alone;

impl Beside for Alone {
    fn first(&mut self, _: &Arc<Budget>) -> PolarsResult<Vec<LazyFrame>> {
        Ok(vec![])
    }
    fn read_first(&mut self) -> PolarsResult<()> {
        Ok(())
    }
    fn values(&mut self) -> PolarsResult<Vec<LazyFrame>> {
        Ok(vec![])
    }
    fn read(&mut self) -> PolarsResult<()> {
        Ok(())
    }
}

impl Analysis {
    /// The whole per-request frame, for the commands that still take one apart in memory
    /// (`compare`).
    pub fn collected(self) -> Result<Collected> {
        Ok(Collected {
            frame: self.plan.collect()?,
            locations: self.plan.locations,
            summary: self.summary,
        })
    }
}

/// An analysis with its per-request frame in memory.
pub struct Collected {
    /// One row per request: labels, timing fields, metrics, class, classes, dq flags.
    pub frame: DataFrame,
    pub summary: Summary,
    /// Where each row is in its file (`source_file`, `source_row` → line or row).
    pub locations: Locations,
}

/// Columns that may be used with `--by`.
pub fn groupable(name: &str) -> bool {
    name == "class"
        || name == SOURCE_COL
        || catalogue::field(name).is_some_and(|f| {
            matches!(f.kind, Kind::Label | Kind::Code | Kind::Flag)
                && f.name != "request_id"
                && f.name != "trace_id"
        })
}

/// Check that `rules` is a gateway table and every `--by` column can group.
pub fn check(rules: &RuleSet, opts: &Options) -> Result<()> {
    if rules.catalogue != catalogue::Catalogue::Gateway {
        return Err(Error::Usage(format!(
            "the rule table `{}` ({}) is written for the {} catalogue; gateway request logs need a gateway table",
            rules.name,
            rules.source,
            rules.catalogue.name()
        )));
    }
    let partitions = source::partition_keys(&opts.inputs);
    for b in &opts.by {
        if !groupable(b) && !partitions.contains(b) {
            let names: Vec<&str> = catalogue::FIELDS
                .iter()
                .map(|f| f.name)
                .chain(["class", SOURCE_COL])
                .filter(|n| groupable(n))
                .chain(partitions.iter().map(String::as_str))
                .collect();
            let hint = crate::ruleset::types::nearest(b, names.iter().copied())
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
            return Err(Error::Usage(format!(
                "--by {b}: {hint}expected one of {}",
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// The `columns` (of `--by`, `--split`) that no input has, neither under the field's name
/// nor under an alias: grouping by one puts every request in a single "(none)" group.
/// `class`, `source_file` and the partition keys of a folder tree always exist.
pub fn absent_columns(inputs: &[Input], columns: &[String]) -> Vec<String> {
    let paths: Vec<PathBuf> = inputs.iter().map(|i| i.path.clone()).collect();
    let partitions = source::partition_keys(&paths);
    columns
        .iter()
        .filter(|c| {
            c.as_str() != "class"
                && c.as_str() != SOURCE_COL
                && !partitions.contains(c)
                && !inputs
                    .iter()
                    .any(|i| i.mapping.found().any(|(name, _)| name == c.as_str()))
        })
        .cloned()
        .collect()
}

/// What the output says of an absent `column` given to `flag` (`--by`, `--split …`).
pub fn absent_column_sentence(flag: &str, column: &str) -> String {
    let aliases = catalogue::field(column)
        .map(|f| f.aliases)
        .unwrap_or_default();
    let nor = if aliases.is_empty() {
        String::new()
    } else {
        format!(" (nor {})", aliases.join(", "))
    };
    format!("{flag}: no input has a `{column}` column{nor}")
}

pub fn run(rules: &RuleSet, opts: &Options) -> Result<Analysis> {
    run_beside(rules, opts, |_| Ok(Alone)).map(|(analysis, _)| analysis)
}

/// `run`, with what `beside` (made from the plan before the passes) asks on the same
/// passes: its figures are in it once this returns.
pub fn run_beside<B: Beside>(
    rules: &RuleSet,
    opts: &Options,
    beside: impl FnOnce(&Plan) -> Result<B>,
) -> Result<(Analysis, B)> {
    check(rules, opts)?;
    if let Some(d) = opts.definitions {
        if opts.since.is_some() || opts.until.is_some() {
            return Err(Error::Usage(format!(
                "--definitions {}: {}'s figures are over its whole run; drop --since/--until",
                d.name(),
                d.tool()
            )));
        }
    }
    let mut plan = plan::build_for(rules, opts, Scope::Summary)?;
    let rules = &plan.rules.clone();
    let mut beside = beside(&plan)?;
    let summarized = summarize(rules, &mut plan, opts, &mut beside);
    let (mut summary, untimed) = summarized.map_err(|e| plan.read_error(&e))?;
    // A file whose timing columns are empty in every row holds nothing to diagnose: an
    // error, not a table of insufficient_data (within an incident window it may just
    // have no request there, which the note says).
    if opts.since.is_none() && opts.until.is_none() && !opts.from_sql_result {
        if let Some(&i) = untimed.first() {
            return Err(untimed_file(&plan.inputs[i]));
        }
    }
    if summary.rows == 0 {
        if let Some(e) = plan.empty_window()? {
            return Err(e);
        }
    }
    summary.client_ids = plan.id_policy.record(ids::found(&plan.inputs));
    summary.peer_figures = opts
        .definitions
        .map(|d| peer::figures(d, &plan))
        .transpose()?;
    summary.bad_rows = bad_rows(
        &plan.inputs,
        opts.on_bad_row,
        plan.unparsed_skipped,
        plan.skipped_examples.clone(),
    );
    Ok((Analysis { plan, summary }, beside))
}

/// The refusal of a file with rows, none of which holds a value in any timing field.
pub fn untimed_file(input: &Input) -> Error {
    let timing: Vec<String> = input
        .mapping
        .found()
        .filter(|(f, _)| catalogue::field(f).is_some_and(|f| f.kind.is_timing()))
        .map(|(f, _)| f.to_string())
        .collect();
    Error::Unusable(Box::new(crate::error::Refusal {
        path: input.path.clone(),
        read_as: source::Content::Log(input.format).read_as().to_string(),
        reason: format!(
            "no row holds a value in any timing field: {} {} empty in every row",
            timing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if timing.len() == 1 { "is" } else { "are" }
        ),
        columns: {
            // The file's own names for what was mapped, in the catalogue's order.
            let mut names: Vec<String> = vec![];
            for (_, origin) in input.mapping.found() {
                let name = match origin {
                    Origin::Column(c) => c.clone(),
                    Origin::Nested(p) => p.join("."),
                    Origin::JsonString(_) => "other".to_string(),
                    Origin::JsonPath { column, .. } => column.clone(),
                    Origin::Absent => continue,
                };
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            names
        },
        looks_like: None,
    }))
}

/// The incident window as the outputs show it, when one was given.
pub fn window(opts: &Options) -> Option<crate::summary::Window> {
    (opts.since.is_some() || opts.until.is_some()).then(|| crate::summary::Window {
        since: opts.since.and_then(iso_ms),
        until: opts.until.and_then(iso_ms),
    })
}

/// What the summary says about bad rows: `None` when there were none.
/// `unparsed_skipped` rows (with their first `skipped_examples`) were left out by `Skip`.
pub fn bad_rows(
    inputs: &[Input],
    policy: BadRowPolicy,
    unparsed_skipped: u64,
    skipped_examples: Vec<String>,
) -> Option<BadRows> {
    let unreadable: u64 = inputs.iter().map(|i| i.bad_rows.len() as u64).sum();
    if unreadable == 0 && unparsed_skipped == 0 {
        return None;
    }
    let examples = inputs
        .iter()
        .flat_map(|i| {
            i.bad_rows
                .iter()
                .map(|b| format!("{}: {b}", i.path.display()))
        })
        .chain(skipped_examples)
        .take(BAD_ROW_EXAMPLES)
        .collect();
    Some(BadRows {
        policy: policy.name().to_string(),
        unreadable,
        unparsed_skipped,
        skipped: if policy == BadRowPolicy::Skip {
            unreadable + unparsed_skipped
        } else {
            0
        },
        examples,
    })
}

/// Fields some files of the run have and others lack, e.g. "upstream_headers_ms: in
/// a.csv, not in b.csv". Requests from the files that lack a field have it null.
fn schema_drift(inputs: &[Input]) -> Vec<String> {
    if inputs.len() < 2 {
        return vec![];
    }
    let mut out = vec![];
    for f in catalogue::FIELDS {
        let (has, lacks): (Vec<&Input>, Vec<&Input>) = inputs.iter().partition(|i| {
            i.mapping
                .fields
                .iter()
                .any(|(n, o, _)| n == f.name && *o != Origin::Absent)
        });
        if !has.is_empty() && !lacks.is_empty() {
            let names = |v: &[&Input]| {
                v.iter()
                    .map(|i| i.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out.push(format!(
                "{}: in {}, not in {}",
                f.name,
                names(&has),
                names(&lacks)
            ));
        }
    }
    out
}

const OUTCOME_ORDER: [&str; 4] = ["ok", "error", "cancelled", "timeout"];

fn is_failure() -> Expr {
    col("outcome")
        .is_not_null()
        .and(col("outcome").neq(lit("ok")))
}

/// Per (group, class, outcome, streaming, file): rows, failures, flags, estimates, rows
/// with any timing, first and last timestamp. Small: its size is the number of such
/// combinations, not of requests. Every count of the summary rolls up from it.
struct Tally {
    df: DataFrame,
}

const ROWS: &str = "__rows";
const FAILED: &str = "__failed";
const TIMED: &str = "__timed";
const T_MIN: &str = "__t_min";
const T_MAX: &str = "__t_max";

impl Tally {
    /// The tally's counts, whose query is collected with the other queries of its pass.
    fn counts(
        rules: &RuleSet,
        plan: &Plan,
        lf: &LazyFrame,
        fine: &[String],
    ) -> PolarsResult<Counts> {
        let mut flags = vec![
            (FAILED.to_string(), is_failure()),
            (TIMED.to_string(), plan.any_timing()),
        ];
        for check in quality::ALL {
            let c = quality::column(&check);
            flags.push((c.clone(), col(c.as_str())));
        }
        for m in estimated(rules) {
            flags.push((m.clone(), col(m.as_str())));
        }
        for f in rules.unjudged_names() {
            flags.push((null_flag(&f), col(f.as_str()).is_null()));
        }
        let t = || col("timestamp").cast(DataType::Int64);
        Counts::new(
            lf,
            fine,
            Asked {
                rows: ROWS.to_string(),
                flags,
                extremes: vec![
                    (T_MIN.to_string(), t(), Extreme::Min),
                    (T_MAX.to_string(), t(), Extreme::Max),
                ],
            },
        )
    }

    /// The sum of `column` per group of `keys`.
    fn sum(&self, column: &str, keys: &[String]) -> PolarsResult<BTreeMap<Key, u64>> {
        stats::sums(self.df.clone().lazy(), keys, col(column))
    }

    fn rows(&self, keys: &[String]) -> PolarsResult<BTreeMap<Key, u64>> {
        self.sum(ROWS, keys)
    }

    fn total(&self, column: &str) -> PolarsResult<u64> {
        Ok(self.sum(column, &[])?.values().sum())
    }

    fn time(&self, column: &str, max: bool) -> PolarsResult<Option<i64>> {
        let c = self.df.column(column)?.i64()?;
        Ok(if max { c.max() } else { c.min() })
    }
}

/// The tally's count of the rows without a value in `field`.
fn null_flag(field: &str) -> String {
    format!("__null_{field}")
}

/// The `<metric>_estimated` columns of the metrics that can carry an estimate.
fn estimated(rules: &RuleSet) -> Vec<String> {
    let est = compile::estimated_metrics(rules);
    rules
        .metrics
        .iter()
        .filter(|m| est.get(&m.name).copied().unwrap_or(false))
        .map(|m| format!("{}{ESTIMATED_SUFFIX}", m.name))
        .collect()
}

/// `keys` followed by `more`, each name once.
fn with_keys(keys: &[String], more: &[&str]) -> Vec<String> {
    let mut out = keys.to_vec();
    for m in more {
        if !out.iter().any(|k| k == m) {
            out.push(m.to_string());
        }
    }
    out
}

/// The columns of `values` (metric names, or fields) counted once each, in order, and
/// where each value's is among them: a metric defined as another metric or a field alone
/// (`end_to_end_ms = "total_handler_ms"`) is that column's copy, and where the column is
/// among `values` it is not counted again.
fn distinct_columns(rules: &RuleSet, values: &[String]) -> (Vec<String>, Vec<usize>) {
    let column_of = |name: &str| -> String {
        let mut name = name.to_string();
        // A chain of aliases ends: a metric refers only to those defined before it.
        while let Some(m) = rules.metrics.iter().find(|m| m.name == name) {
            match &m.node {
                Node::Field(n) | Node::Metric(n) => name = n.clone(),
                _ => break,
            }
        }
        name
    };
    let columns: Vec<String> = values.iter().map(|v| column_of(v)).collect();
    let mut counted: Vec<String> = vec![];
    let mut counted_as = vec![];
    for (v, c) in values.iter().zip(&columns) {
        // The first value of a column is counted, under its own name.
        match columns.iter().position(|o| o == c) {
            Some(first) if values[first] != *v => counted_as.push(
                counted
                    .iter()
                    .position(|n| *n == values[first])
                    .expect("counted"),
            ),
            _ => {
                counted_as.push(counted.len());
                counted.push(v.clone());
            }
        }
    }
    (counted, counted_as)
}

/// How a class or file index appears in a group key (keys are text).
fn index_key(i: usize) -> Option<String> {
    Some(i.to_string())
}

fn position(keys: &[String], name: &str) -> usize {
    keys.iter().position(|k| k == name).expect("key listed")
}

/// The summary, and the inputs (by position) with rows none of which holds a timing
/// value; `beside`'s queries collected with each pass's.
fn summarize(
    rules: &RuleSet,
    plan: &mut Plan,
    opts: &Options,
    beside: &mut impl Beside,
) -> PolarsResult<(Summary, Vec<usize>)> {
    let by = opts.by.as_slice();
    // The class and the file as small integers (their positions), named below.
    let fine = with_keys(by, &[CLASS_INDEX, "outcome", "is_stream", FILE_INDEX]);

    // Exact percentiles of end-to-end and every reported metric: overall, per class, per
    // group; one histogram at (group, class), rolled up.
    let reported = plan.reported(rules);
    let e2e = plan.end_to_end.clone();
    let mut values = vec![e2e.clone()];
    values.extend(
        reported
            .iter()
            .map(|m| m.name.clone())
            .filter(|n| *n != e2e),
    );
    // A metric that is another value under a name of its own (`end_to_end_ms` is
    // `total_handler_ms`) has that value's percentiles: each column is counted once.
    let (counted, counted_as) = distinct_columns(rules, &values);
    let pct_keys = with_keys(by, &[CLASS_INDEX]);
    let levels = vec![
        vec![],
        vec![position(&pct_keys, CLASS_INDEX)],
        by.iter().map(|b| position(&pct_keys, b)).collect(),
    ];

    // Two streaming passes over the plan. The first: the tally, the histograms and each
    // data-quality check's examples. On a large log, beside the histograms, the values in
    // the buckets a sample of its first rows says the percentiles' ranks fall in
    // (`stats::guess`): where that holds, there is no second pass. Not within an incident
    // window (its first rows may be far into the log).
    let lf = beside.lf(&plan.lf);
    let sample = plan
        .rows
        .and_then(guess::sample_rows)
        .filter(|_| opts.since.is_none() && opts.until.is_none());
    let budget = Arc::new(Budget::default());
    let mut histograms = Histograms::new(&lf, &pct_keys, &counted)?;
    if let Some(m) = sample {
        // The sample's histograms, `beside`'s too, in one scan of the first rows.
        let sample = lf.clone().slice(0, m as IdxSize);
        let sampled = Histograms::new(&sample, &pct_keys, &counted)?;
        let mut queries = vec![sampled.query()];
        queries.extend(beside.sample(&sample)?);
        stats::collect_all(queries)?;
        histograms = histograms.keeping(sampled.guess(&levels, &QUANTILES), &budget);
    }
    let examples = quality::ExampleSearch::default();
    let tally = Tally::counts(rules, plan, &lf, &fine)?;
    // The duplicate ids' confirmation (`plan::Scope::Summary`) first, in the first scan.
    let mut first: Vec<LazyFrame> = plan.confirm_query().into_iter().collect();
    let confirming = !first.is_empty();
    first.extend([tally.query(), histograms.query(), examples.query(&lf)]);
    first.extend(beside.first(&budget)?);
    let mut frames = stats::collect_in_scans(first)?;
    let settled = match confirming {
        true => plan.settle(frames.swap_remove(0))?,
        false => None,
    };
    beside.read_first()?;
    let tally = Tally { df: tally.frame()? };
    let rows = tally.total(ROWS)?;
    let hist = histograms.frames()?;
    let mut ranks = exact::Ranks::locate(&hist, &pct_keys, &levels, &counted)?;
    ranks.offer(histograms.kept()?)?;
    // The second: the values at the ranks (and, on a large log whose timings are fine
    // grained, a third: `Ranks::queries`).
    loop {
        let mut queries = ranks.queries(&lf)?;
        queries.extend(beside.values()?);
        if queries.is_empty() {
            break;
        }
        stats::collect_in_scans(queries)?;
        ranks.read()?;
        beside.read()?;
    }
    let mut pcts: Vec<BTreeMap<Key, Vec<Pct>>> = ranks
        .finish()?
        .into_iter()
        .map(|level| {
            level
                .into_iter()
                .map(|(k, p)| (k, counted_as.iter().map(|&i| p[i].clone()).collect()))
                .collect()
        })
        .collect();
    let by_group = pcts.pop().expect("three levels");
    let by_class = pcts.pop().expect("three levels");
    let overall = pcts.pop().expect("three levels");
    beside.by_class(&values, &by_class);
    let metric_index = |name: &str| values.iter().position(|v| v == name).expect("listed");

    let time_span = match (tally.time(T_MIN, false)?, tally.time(T_MAX, true)?) {
        (Some(a), Some(b)) => match (iso_ms(a), iso_ms(b)) {
            (Some(start), Some(end)) => Some(TimeSpan { start, end }),
            _ => None,
        },
        _ => None,
    };

    // Streaming and outcomes.
    let stream = tally.rows(&["is_stream".to_string()])?;
    let get = |k: Option<&str>| {
        stream
            .get(&vec![k.map(str::to_string)])
            .copied()
            .unwrap_or(0)
    };
    let streaming = Streaming {
        streaming: get(Some("true")),
        non_streaming: get(Some("false")),
        unknown: get(None),
    };
    let oc = tally.rows(&["outcome".to_string()])?;
    let mut outcomes: Vec<Count> = vec![];
    for o in OUTCOME_ORDER {
        if let Some(c) = oc.get(&vec![Some(o.to_string())]) {
            outcomes.push(Count {
                name: o.to_string(),
                count: *c,
            });
        }
    }
    for (k, c) in &oc {
        match &k[0] {
            Some(name) if !OUTCOME_ORDER.contains(&name.as_str()) => outcomes.push(Count {
                name: name.clone(),
                count: *c,
            }),
            _ => {}
        }
    }
    if let Some(c) = oc.get(&vec![None]) {
        outcomes.push(Count {
            name: "unknown".into(),
            count: *c,
        });
    }
    let failures = tally.total(FAILED)?;

    // Class table, in table order, then the default class.
    let class_key = vec![CLASS_INDEX.to_string()];
    let class_counts = tally.rows(&class_key)?;
    let class_fail = tally.sum(FAILED, &class_key)?;
    let e2e_at = metric_index(&e2e);
    let mut classes = vec![];
    let mut position_in_table = 0..;
    let several = rules.parts.len() > 1;
    let mut nulls = BTreeMap::new();
    for f in rules.unjudged_names() {
        let n = tally.sum(&null_flag(&f), &class_key)?;
        nulls.insert(f, n);
    }
    let mut push_class = |class: &str,
                          table: Option<usize>,
                          order: Option<i64>,
                          look_at: &str,
                          layer: &str,
                          next: &str,
                          reads: BTreeSet<String>| {
        let key = vec![index_key(position_in_table.next().expect("endless"))];
        let count = class_counts.get(&key).copied().unwrap_or(0);
        let missing = nulls
            .iter()
            .filter(|(f, _)| class == RuleSet::UNJUDGED && reads.contains(f.as_str()))
            .filter_map(|(f, n)| {
                let requests = n.get(&key).copied().unwrap_or(0);
                (requests > 0).then(|| Missing {
                    field: f.to_string(),
                    requests,
                })
            })
            .collect();
        classes.push(ClassRow {
            missing,
            class: class.to_string(),
            table: table
                .filter(|_| several)
                .map(|t| rules.parts[t].name.clone()),
            order,
            count,
            share: if rows == 0 {
                0.0
            } else {
                round3(count as f64 / rows as f64)
            },
            failures: class_fail.get(&key).copied().unwrap_or(0),
            end_to_end_ms: by_class
                .get(&key)
                .map(|p| p[e2e_at].clone())
                .unwrap_or_default(),
            look_at: look_at.to_string(),
            layer: layer.to_string(),
            next_check: next.to_string(),
        });
    };
    for r in &rules.rules {
        let next = match r.covers.is_empty() {
            true => r.next_check.clone(),
            false => format!(
                "{}. Stands for the gateway table's {}: {}",
                r.next_check,
                r.covers.join(", "),
                r.tell_apart
            ),
        };
        let reads = rules.names_of_rule(r);
        push_class(
            &r.class,
            Some(r.part),
            Some(r.order),
            &r.look_at,
            &r.layer,
            &next,
            reads,
        );
    }
    push_class(
        &rules.default_class,
        None,
        None,
        "",
        "",
        "",
        BTreeSet::new(),
    );

    // Named metrics.
    let metric_rows = |keys: &[String],
                       pcts: &BTreeMap<Key, Vec<Pct>>|
     -> PolarsResult<BTreeMap<Key, Vec<MetricRow>>> {
        let counts = tally.rows(keys)?;
        let mut est_counts: BTreeMap<String, BTreeMap<Key, u64>> = BTreeMap::new();
        for m in estimated(rules) {
            est_counts.insert(m.clone(), tally.sum(&m, keys)?);
        }
        let mut out = BTreeMap::new();
        for (key, p) in pcts {
            let rows = counts.get(key).copied().unwrap_or(0);
            let v = reported
                .iter()
                .map(|m| {
                    let pct = p[metric_index(&m.name)].clone();
                    MetricRow {
                        name: m.name.clone(),
                        label: m.label.clone().unwrap_or_default(),
                        nulls: rows - pct.n,
                        estimated: est_counts
                            .get(&format!("{}{ESTIMATED_SUFFIX}", m.name))
                            .map(|c| c.get(key).copied().unwrap_or(0)),
                        pct,
                    }
                })
                .collect();
            out.insert(key.clone(), v);
        }
        Ok(out)
    };
    let metrics = metric_rows(&[], &overall)?
        .remove(&vec![])
        .unwrap_or_default();

    // Data quality: the duplicate ids confirmed on the first pass (`plan::Scope::Summary`)
    // give that check's rows and examples, its flag on that pass being their candidates'.
    let mut examples = examples.found();
    let mut counts = quality::ALL
        .iter()
        .map(|check| tally.total(&quality::column(check)))
        .collect::<PolarsResult<Vec<u64>>>()?;
    if let Some(d) = &settled {
        let at = quality::ALL
            .iter()
            .position(|c| c.name == quality::DUPLICATE_ID.name)
            .expect("a check");
        counts[at] = d.flagged;
        examples[at] = d.examples()?;
    }
    let mut quality = vec![];
    for ((check, examples), count) in quality::ALL.iter().zip(examples).zip(counts) {
        quality.push(QualityRow {
            check: check.name.to_string(),
            doc: check.doc.to_string(),
            count,
            examples: examples
                .into_iter()
                .map(|e| {
                    if e.has_id {
                        e.key
                    } else {
                        let at = plan.locations.describe(&e.key, e.row);
                        format!("{}:{at}", e.key)
                    }
                })
                .collect(),
        });
    }

    let mut notes = vec![];
    // Only where some input logs a visible output rate is its check missed.
    if !quality::tps_check_available(rules) && plan.present.contains("visible_output_tps") {
        notes.push(format!(
            "the tps_mismatch check did not run: the rule table defines no `{}` metric or `{}` parameter",
            quality::RECOMPUTED_TPS_METRIC,
            quality::TPS_TOLERANCE_PARAM
        ));
    }
    let timed = tally.sum(TIMED, &[FILE_INDEX.to_string()])?;
    let inputs = plan.inputs.as_slice();
    for input in inputs
        .iter()
        .filter(|i| i.format == InputFormat::AzureRequestLog)
    {
        notes.push(format!(
            "{}: Azure OpenAI RequestResponse records carry one timing, durationMs (counted from the service receiving the request, not a gateway's t0), read as total_handler_ms; with no header or first-output time the gateway_coarse table classifies the requests on that one time",
            input.path.display()
        ));
    }
    for input in inputs {
        for note in &input.notes {
            notes.push(format!("{}: {note}", input.path.display()));
        }
    }
    let file_rows = tally.rows(&[FILE_INDEX.to_string()])?;
    let mut untimed = vec![];
    for (i, input) in inputs.iter().enumerate() {
        let path = input.path.display().to_string();
        let key = vec![index_key(i)];
        if timed.get(&key).copied().unwrap_or(0) == 0 {
            notes.push(format!(
                "{path}: no row has a timing field (looked for flat, dotted and `other.timing` fields); every request is insufficient_data"
            ));
            if file_rows.get(&key).copied().unwrap_or(0) > 0 {
                untimed.push(i);
            }
        }
    }

    // A timing field held in two places (flat and nested) may disagree: say which is read.
    let mut shadowed: BTreeMap<(&str, String, String), Vec<String>> = BTreeMap::new();
    for input in inputs {
        for (field, read, ignored) in &input.mapping.shadowed {
            let ignored: Vec<String> = ignored.iter().map(|o| o.to_string()).collect();
            shadowed
                .entry((field, read.to_string(), ignored.join(" and ")))
                .or_default()
                .push(input.path.display().to_string());
        }
    }
    for ((field, read, ignored), files) in shadowed {
        let files = match files.len() {
            1..=3 => files.join(", "),
            n => format!("{} and {} more files", files[0], n - 1),
        };
        notes.push(format!(
            "{files}: {field} is both {read} and {ignored}; tracediag reads {read} (the first in its lookup order) and ignores the other"
        ));
    }

    // A number in the timestamp column is Unix time, its unit told by each value's size:
    // say so, since a count from another epoch would shift every window.
    let unix: Vec<String> = inputs
        .iter()
        .filter(|i| i.mapping.unix_time)
        .map(|i| i.path.display().to_string())
        .collect();
    if !unix.is_empty() {
        let files = match unix.len() {
            1..=3 => unix.join(", "),
            n => format!("{} and {} more files", unix[0], n - 1),
        };
        notes.push(format!(
            "{files}: timestamp holds numbers, read as Unix time (UTC) in the unit each value's size tells: below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds, else nanoseconds"
        ));
    }

    let drifted = schema_drift(inputs);
    if !drifted.is_empty() {
        notes.push(format!(
            "schema drift between the files of this run: {}",
            drifted.join("; ")
        ));
    }

    let groups = if by.is_empty() {
        None
    } else {
        let counts = tally.rows(by)?;
        let fails = tally.sum(FAILED, by)?;
        let class_counts = tally.rows(&with_keys(by, &[CLASS_INDEX]))?;
        let mut metrics = metric_rows(by, &by_group)?;
        let order = rules.class_order();
        let groups = counts
            .iter()
            .map(|(key, rows)| {
                let classes = order
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| {
                        let mut k = key.clone();
                        k.push(index_key(i));
                        class_counts.get(&k).map(|n| Count {
                            name: c.to_string(),
                            count: *n,
                        })
                    })
                    .collect();
                GroupRow {
                    key: key.clone(),
                    rows: *rows,
                    failures: fails.get(key).copied().unwrap_or(0),
                    end_to_end_ms: by_group
                        .get(key)
                        .map(|p| p[e2e_at].clone())
                        .unwrap_or_default(),
                    classes,
                    metrics: metrics.remove(key).unwrap_or_default(),
                }
            })
            .collect();
        Some(Groups {
            by: by.to_vec(),
            absent: absent_columns(inputs, by),
            groups,
        })
    };

    let summary = Summary {
        tool: tool(),
        rules: RulesInfo::of(rules),
        percentile_method: PERCENTILE_METHOD,
        percentile_rule: crate::stats::support::RULE,
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(n, i)| InputSummary {
                table: (rules.parts.len() > 1).then(|| rules.parts[plan.table_of[n]].name.clone()),
                path: i.path.display().to_string(),
                format: if opts.from_sql_result {
                    format!("{}, a result of rules --emit sql", i.format)
                } else {
                    i.format.to_string()
                },
                fields: i
                    .mapping
                    .found()
                    .map(|(f, o)| FieldSource {
                        field: f.to_string(),
                        from: o.to_string(),
                    })
                    .collect(),
            })
            .collect(),
        mapped_columns: MappedColumn::of(&opts.columns),
        // Set by `run`, which holds the policy with its drawn salt.
        client_ids: None,
        rows,
        time_span,
        streaming,
        outcomes,
        failures,
        classes,
        metrics,
        metrics_left_out: LeftOut::of(rules, &plan.uncomputable, &plan.tools),
        quality,
        notes,
        groups,
        window: window(opts),
        bad_rows: None,
        overlapping_inputs: plan.overlap.clone(),
        // Set by `run`: a query of its own over each input.
        peer_figures: None,
    };
    Ok((summary, untimed))
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC (`2026-06-10T14:00:04.123Z`); `None`
/// outside chrono's range.
pub fn iso_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A metric that is a field or another metric alone, through a chain of them, is
    /// counted as that column where the column is among the values; any other is counted
    /// under its own name.
    #[test]
    fn an_alias_of_a_value_is_counted_once() {
        let src = r#"
name = "t"
default_class = "normal"
[[metrics]]
name = "e2e"
expr = "total_handler_ms"
doc = "d"
[[metrics]]
name = "e2e_again"
expr = "e2e"
doc = "d"
[[metrics]]
name = "headers"
expr = "upstream_headers_ms"
doc = "d"
[[metrics]]
name = "e2e_plus"
expr = "e2e + 0"
doc = "d"
"#;
        let rules = RuleSet::parse(src, "t.toml").unwrap();
        let values: Vec<String> = [
            "total_handler_ms",
            "headers",
            "e2e_again",
            "e2e_plus",
            "e2e",
        ]
        .map(String::from)
        .to_vec();
        let (counted, counted_as) = distinct_columns(&rules, &values);
        assert_eq!(counted, ["total_handler_ms", "headers", "e2e_plus"]);
        assert_eq!(counted_as, [0, 1, 0, 2, 0]);
        // Where the column itself is not a value, the first alias of it is counted.
        let values: Vec<String> = ["e2e_again", "e2e"].map(String::from).to_vec();
        assert_eq!(
            distinct_columns(&rules, &values),
            (vec!["e2e_again".to_string()], vec![0, 0])
        );
    }

    /// `--since` and `--until` take what logs write: UTC with or without `Z`, a date, or
    /// a time with an offset, turned into UTC.
    #[test]
    fn instants_with_an_offset_are_turned_into_utc() {
        let utc = parse_instant("2026-11-16T06:00:00Z").unwrap();
        for text in [
            "2026-11-16T14:00+08:00",
            "2026-11-16T14:00:00+08:00",
            "2026-11-16T14:00:00.000+0800",
            "2026-11-16 14:00+08:00",
            "2026-11-16T06:00",
            "2026-11-16 06:00:00",
        ] {
            assert_eq!(parse_instant(text).unwrap(), utc, "{text}");
        }
        assert_eq!(
            parse_instant("2026-11-16").unwrap(),
            parse_instant("2026-11-16T00:00Z").unwrap()
        );
        let e = parse_instant("16/11/2026").unwrap_err().to_string();
        assert!(e.contains("2026-11-16T14:00+08:00"), "{e}");
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso_ms(0).unwrap(), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso_ms(1_781_100_011_000).unwrap(),
            "2026-06-10T14:00:11.000Z"
        );
    }
}
