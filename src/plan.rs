//! The lazy plan of a gateway-log run, built once: sources → canonical columns → client-id
//! hashing → metrics → class and tags (or, for a result of the emitted SQL, those read
//! from it: `sql_result`) → data-quality flags → the incident window → the
//! bad-row policy. Commands ask it only for what they show (aggregates, a filter, a sink);
//! nothing here collects the per-request frame.
//!
//! Two things need a look at the data before the plan is complete, each a streaming query
//! that keeps only what it finds: the duplicate request ids (`quality::duplicate_ids`; for a
//! summary, whose first pass confirms them, their candidates: `Scope::Summary`) and, under
//! `--on-bad-row skip` or `error`, the rows holding a value not of its field's type.

use polars::prelude::*;

use crate::analyze::{time_filter, Options};
use crate::catalogue::{self, Kind};
use crate::error::{Error, Result};
use crate::ids::{self, IdPolicy, Salt};
use crate::quality;
use crate::ruleset::compile;
use crate::ruleset::tables::TABLE_COLUMN;
use crate::ruleset::RuleSet;
use crate::source::{
    self, BadRowPolicy, Input, Locations, FILE_INDEX, ROW_COL, SOURCE_COL, UNPARSED_PREFIX,
};
use crate::sql_result;
use crate::stats;
use crate::summary::{Overlap, BAD_ROW_EXAMPLES};
use crate::window;

/// The plan and what was learnt while building it.
pub struct Plan {
    /// One row per request: labels, timing fields, metrics, `class`, `classes`, `dq_*`.
    pub lf: LazyFrame,
    /// The rule tables that classify the inputs (`RuleSet::choose`): what every later
    /// question about classes, metrics and parameters is asked of.
    pub rules: RuleSet,
    /// Per input (by position), its table's position in `rules.parts`.
    pub table_of: Vec<usize>,
    /// The column holding each request's end-to-end time on its table's clock: the
    /// table's own where one table classifies every input, else `END_TO_END`.
    pub end_to_end: String,
    /// `Scope::Request`: the rows holding the request id, as `lf` holds them.
    pub request: Option<LazyFrame>,
    /// `Scope::Request` on a log of more than its `cohort_rows` rows: the rows of the
    /// request's file around it, as `lf` holds them, where its cohort is looked for.
    pub around: Option<(LazyFrame, source::AroundRows)>,
    pub inputs: Vec<Input>,
    /// Where each row is in its file (`source_file`, `source_row` → line or row).
    pub locations: Locations,
    /// Client identifiers: hashed with this policy (its salt drawn when the run started).
    pub id_policy: IdPolicy,
    /// Rows `--on-bad-row skip` left out for a value not of its field's type.
    pub unparsed_skipped: u64,
    /// The first few of them, as `file: line N, column `x`: …`.
    pub skipped_examples: Vec<String>,
    /// Input files holding the same requests, when most duplicate ids come from them.
    pub overlap: Option<Overlap>,
    /// The rule table's reported metrics no input can compute (a field each needs is in no
    /// input): summaries leave them out and name them, rather than show a row of nulls.
    pub uncomputable: Vec<String>,
    /// What carries the timings some input holds (`catalogue::carried_by`): a gateway
    /// log, a tool's own log.
    pub tools: std::collections::BTreeSet<&'static str>,
    /// The catalogue fields some input maps; every other field is null in every row.
    pub present: std::collections::BTreeSet<String>,
    /// The rows of the log, before the incident window (as the duplicate-id check counted
    /// them; none for one request's plan).
    pub rows: Option<u64>,
    /// The plan before the incident window, and the window: asked for the data's span
    /// only when the window holds no request (`empty_window`).
    unwindowed: LazyFrame,
    since: Option<i64>,
    until: Option<i64>,
    /// `Scope::Summary`: the duplicate ids' candidates, to be confirmed on the summary's
    /// first pass (`Plan::confirm_query`, `Plan::settle`). Until then `dq_duplicate_id`
    /// flags the rows whose id has a candidate fingerprint (`quality::Candidates::flag`),
    /// which the confirmation reads.
    confirming: Option<quality::Candidates>,
}

/// Whether `Scope::Summary` confirms the duplicate ids on the summary's first pass: where
/// that pass sees every row the ids were counted in (no incident window, no row skipped).
fn summary_confirms(opts: &Options) -> bool {
    opts.since.is_none() && opts.until.is_none() && opts.on_bad_row != BadRowPolicy::Skip
}

/// The input files' names, in order.
fn input_names(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .map(|i| i.path.display().to_string())
        .collect()
}

/// Column of each request's end-to-end time on its table's clock, in a plan classified by
/// tables of several clocks (`Plan::end_to_end`).
pub const END_TO_END: &str = "__end_to_end";

/// What a plan is built for.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// The whole log.
    Log,
    /// One request id (explain): `Plan::request` holds only its rows, read without
    /// decoding the rest of the log, with the duplicate check run among them (they are
    /// every row with that id, so it is exact). The whole log (`Plan::lf`, which explain
    /// asks only for the request's cohort) skips the duplicate pass: its `dq_duplicate_id`
    /// is null, not looked for. On a log of more than `cohort_rows` rows, `Plan::around`
    /// holds that many rows of the request's file around it, read as one slice, so that
    /// the cohort's cost is bounded by them, not by the log.
    Request { id: &'a str, cohort_rows: u64 },
    /// The whole log, for a summary (`analyze::run_beside`): the duplicate ids' second
    /// pass, which confirms by the ids themselves the fingerprints seen twice, rides on the
    /// summary's first pass (`Plan::confirm_query`) rather than being a pass of its own.
    /// Meanwhile `dq_duplicate_id` flags the rows whose id has a fingerprint seen twice
    /// (the confirmation reads them from the pass's own stream); the summary takes the
    /// check's count and examples from the confirmed ids (`Plan::settle`), which are those
    /// of the rows it sees: without an incident window or rows skipped
    /// (`summary_confirms`), the rows the ids were counted in. Otherwise it is `Log`.
    Summary,
}

/// Build the plan for `opts` under `rules` (a gateway table), for the whole log.
pub fn build(rules: &RuleSet, opts: &Options) -> Result<Plan> {
    build_for(rules, opts, Scope::Log)
}

/// Build the plan for `opts` under `rules` (a gateway table), for `scope`.
pub fn build_for(rules: &RuleSet, opts: &Options, scope: Scope) -> Result<Plan> {
    // A query's result was written by one table (`rules --emit sql`): the first, unless
    // one was given.
    let single;
    let rules = if opts.from_sql_result && rules.parts.len() > 1 {
        single = rules.part_alone(0)?;
        &single
    } else {
        rules
    };
    let carried = if opts.from_sql_result {
        sql_result::carried(rules)
    } else {
        vec![]
    };
    let (id, cohort_rows) = match scope {
        Scope::Log | Scope::Summary => (None, source::COHORT_ROWS),
        Scope::Request { id, cohort_rows } => (Some(id), cohort_rows),
    };
    let loaded = source::load_mapped(
        &opts.inputs,
        opts.input_format,
        opts.on_bad_row,
        &carried,
        id,
        cohort_rows,
        &opts.columns,
    )?;
    let (lf, inputs) = (loaded.lf, loaded.inputs);
    let mapped: Vec<std::collections::BTreeSet<String>> = inputs
        .iter()
        .map(|i| i.mapping.found().map(|(n, _)| n.to_string()).collect())
        .collect();
    let (chosen, table_of) = rules.choose(&mapped);
    let rules = &chosen;
    let with_table = |lf: LazyFrame| -> LazyFrame {
        if rules.parts.len() < 2 {
            return lf;
        }
        let branches = table_of
            .iter()
            .enumerate()
            .map(|(file, table)| (col(FILE_INDEX).eq(lit(file as u32)), lit(*table as u32)));
        lf.with_column(compile::chain(branches, lit(0u32)).alias(TABLE_COLUMN))
    };
    let lf = with_table(lf);
    let loaded_request = loaded.request.map(with_table);
    let loaded_around = loaded.around.map(|mut a| {
        a.lf = with_table(a.lf);
        a
    });
    // Raw client identifiers go no further than the projection.
    let id_policy = match &opts.ids {
        Some(p) => p.clone(),
        None => IdPolicy::Salted(Salt::random()?),
    };
    let lf = ids::apply(lf, &id_policy);
    // A query's result brings its metrics and classes (checked against the table); a log
    // has them computed by the table.
    if opts.from_sql_result {
        if let Some(e) = sql_result::check(rules, &lf, &Locations::of(&inputs))
            .map_err(|e| read_error(&inputs, &e))?
        {
            return Err(e);
        }
    }
    // Each request's end-to-end time, where tables of several clocks classify the inputs:
    // its own table's.
    let (end_to_end, e2e) = match rules.parts.as_slice() {
        [one] => (one.end_to_end.clone(), None),
        parts => {
            let branches = parts.iter().enumerate().map(|(i, p)| {
                (
                    col(TABLE_COLUMN).eq(lit(i as u32)),
                    col(p.end_to_end.as_str()).cast(DataType::Float64),
                )
            });
            let e2e = compile::chain(branches, lit(NULL).cast(DataType::Float64));
            (END_TO_END.to_string(), Some(e2e.alias(END_TO_END)))
        }
    };
    let derive = |lf: LazyFrame| {
        let lf = if opts.from_sql_result {
            sql_result::apply(rules, lf)
        } else {
            compile::apply(rules, lf)
        };
        match &e2e {
            Some(e) => lf.with_column(e.clone()),
            None => lf,
        }
    };
    let lf = derive(lf);
    let request = loaded_request.map(|r| derive(ids::apply(r, &id_policy)));
    let around = loaded_around.map(|a| (derive(ids::apply(a.lf, &id_policy)), a.extent));
    let mut confirming = None;
    let (duplicates, request) = match (request, scope) {
        (None, Scope::Summary) if summary_confirms(opts) => {
            let c = quality::candidates(lf.clone()).map_err(|e| read_error(&inputs, &e))?;
            let (flag, rows) = (c.flag(), c.rows);
            confirming = Some(c);
            (Some((flag, rows, None)), None)
        }
        (None, _) => {
            let d = quality::duplicate_ids(lf.clone()).map_err(|e| read_error(&inputs, &e))?;
            let overlap = quality::overlap(&d, &input_names(&inputs));
            (Some((d.flag(), d.rows, overlap)), None)
        }
        (Some(r), _) => {
            let d = quality::duplicate_ids(r.clone()).map_err(|e| read_error(&inputs, &e))?;
            (None, Some((r, d)))
        }
    };
    // The incident window applies after the data-quality checks, so a duplicate id outside
    // the window still marks the one inside it.
    let present: std::collections::BTreeSet<String> = inputs
        .iter()
        .flat_map(|i| i.mapping.found().map(|(name, _)| name.to_string()))
        .collect();
    let is_present = |f: &str| present.contains(f);
    let window = time_filter("timestamp", opts.since, opts.until);
    let windowed = |lf: LazyFrame| match &window {
        Some(f) => lf.filter(f.clone()),
        None => lf,
    };
    let (flag, rows, overlap) = match duplicates {
        Some((flag, rows, overlap)) => (Some(flag), Some(rows), overlap),
        None => (None, None, None),
    };
    let lf = quality::apply(rules, lf, flag, &is_present);
    let unwindowed = lf.clone();
    let lf = windowed(lf);
    let request =
        request.map(|(r, d)| windowed(quality::apply(rules, r, Some(d.flag()), &is_present)));
    // Like the whole log, the rows around skip the duplicate pass.
    let around = around.map(|(a, extent)| {
        (
            windowed(quality::apply(rules, a, None, &is_present)),
            extent,
        )
    });
    let locations = Locations::of(&inputs);
    // A query's result carries every metric as a column of its own, except those built
    // on adapter-only fields (`RuleSet::adapter_metrics`), which the query leaves out.
    let uncomputable = if opts.from_sql_result {
        let off = rules.adapter_metrics();
        rules
            .reported_metrics()
            .into_iter()
            .filter(|m| off.contains(&m.name))
            .map(|m| m.name.clone())
            .collect()
    } else {
        rules.uncomputable_metrics(&|field| present.contains(field))
    };
    let tools = present
        .iter()
        .filter_map(|name| catalogue::carried_by(name))
        .collect();
    let mut plan = Plan {
        lf,
        rules: chosen.clone(),
        table_of,
        end_to_end,
        request,
        around,
        inputs,
        locations,
        id_policy,
        unparsed_skipped: 0,
        skipped_examples: vec![],
        overlap,
        rows,
        uncomputable,
        tools,
        present,
        unwindowed,
        since: opts.since,
        until: opts.until,
        confirming,
    };
    unparsed_values(&mut plan, opts.on_bad_row)?;
    Ok(plan)
}

impl Plan {
    /// `Scope::Summary`'s query confirming the duplicate ids' candidates, to run on the
    /// summary's first pass; none where there is nothing to confirm.
    pub fn confirm_query(&self) -> Option<LazyFrame> {
        let flag = quality::column(&quality::DUPLICATE_ID);
        self.confirming
            .as_ref()?
            .confirm_query(self.lf.clone(), col(flag.as_str()))
    }

    /// Settles `Scope::Summary`'s duplicate ids with `confirm_query`'s frame: they are
    /// returned (the summary's first pass, which saw every row they were counted in, takes
    /// the check's count and examples from them), the overlapping inputs are known, and
    /// from now on the plan flags their rows (not those of a fingerprint they share).
    pub fn settle(&mut self, confirmed: DataFrame) -> PolarsResult<Option<quality::Duplicates>> {
        let Some(c) = self.confirming.take() else {
            return Ok(None);
        };
        let d = c.confirmed(self.lf.clone(), confirmed)?;
        self.overlap = quality::overlap(&d, &input_names(&self.inputs));
        let flag = || {
            d.flag()
                .alias(quality::column(&quality::DUPLICATE_ID).as_str())
        };
        self.lf = self.lf.clone().with_column(flag());
        self.unwindowed = self.unwindowed.clone().with_column(flag());
        Ok(Some(d))
    }

    /// The rule table's reported metrics some input can compute, in display order.
    pub fn reported<'a>(&self, rules: &'a RuleSet) -> Vec<&'a crate::ruleset::Metric> {
        rules
            .reported_metrics()
            .into_iter()
            .filter(|m| !self.uncomputable.contains(&m.name))
            .collect()
    }

    /// True where a row holds a value in some timing field. Judged by the values, not the
    /// mapping: a JSON-string `other` maps every timing field but may hold none of them.
    pub fn any_timing(&self) -> Expr {
        catalogue::FIELDS
            .iter()
            .filter(|f| f.kind.is_timing() && self.present.contains(f.name))
            .map(|f| col(f.name).is_not_null())
            .reduce(|a, b| a.or(b))
            .unwrap_or(lit(false))
    }

    /// The first input (by position) with rows none of which holds a timing value: such a
    /// file holds nothing to diagnose. One pass over the timing columns, for the commands
    /// that learn it from no aggregate of their own (`analyze` counts it in its tally).
    pub fn untimed_input(&self) -> Result<Option<usize>> {
        let per_file = stats::collect(
            self.unwindowed
                .clone()
                .group_by([col(FILE_INDEX).cast(DataType::Int64)])
                .agg([self.any_timing().any(true).alias("__timed")]),
        )
        .map_err(|e| self.read_error(&e))?;
        let untimed = || -> PolarsResult<Option<usize>> {
            let files = per_file.column(FILE_INDEX)?.i64()?;
            let timed = per_file.column("__timed")?.bool()?;
            Ok(files
                .iter()
                .zip(timed.iter())
                .filter(|(_, t)| *t != Some(true))
                .filter_map(|(f, _)| f.map(|f| f as usize))
                .min())
        };
        untimed().map_err(|e| self.read_error(&e))
    }

    /// An error reading the inputs, naming them.
    pub fn read_error(&self, e: &PolarsError) -> Error {
        read_error(&self.inputs, e)
    }

    /// The error for an incident window that holds no request, naming the window and the
    /// data's span; `None` without a window, or when the window holds requests (that
    /// something else, e.g. `--on-bad-row skip`, left out). For failure paths only: it
    /// reads the inputs' timestamps once more.
    pub fn empty_window(&self) -> Result<Option<Error>> {
        if self.since.is_none() && self.until.is_none() {
            return Ok(None);
        }
        let span = window::span(self.unwindowed.clone(), "timestamp", self.since, self.until)
            .map_err(|e| self.read_error(&e))?;
        let names = input_names(&self.inputs);
        Ok(window::empty(
            self.since,
            self.until,
            "request",
            &window::source_name(&names),
            span,
        ))
    }

    /// The whole per-request frame, for the commands that still take one apart in memory
    /// (`compare`).
    pub fn collect(&self) -> Result<DataFrame> {
        stats::collect(self.lf.clone()).map_err(|e| self.read_error(&e))
    }
}

/// Rows holding a value that did not read as its field's type, under the policy: with
/// `Keep` nothing changes (the value is null and `dq_unparsed` counts it); with `Error`
/// the first one is the error; with `Skip` they leave the plan, and their number and the
/// first few are noted.
fn unparsed_values(plan: &mut Plan, policy: BadRowPolicy) -> Result<()> {
    if policy == BadRowPolicy::Keep {
        return Ok(());
    }
    let flag = quality::column(&quality::UNPARSED);
    let shown = if policy == BadRowPolicy::Error {
        1
    } else {
        BAD_ROW_EXAMPLES
    };
    let fields: Vec<&str> = catalogue::FIELDS
        .iter()
        .filter(|f| !matches!(f.kind, Kind::Label))
        .map(|f| f.name)
        .collect();
    let mut cols = vec![col(SOURCE_COL), col(ROW_COL)];
    cols.extend(
        fields
            .iter()
            .map(|f| col(format!("{UNPARSED_PREFIX}{f}").as_str())),
    );
    let flagged = plan.lf.clone().filter(col(flag.as_str()));
    let found = stats::collect_all(vec![
        flagged
            .clone()
            .select([len().cast(DataType::UInt64).alias("n")]),
        flagged.select(cols).limit(shown as IdxSize),
    ])
    .map_err(|e| plan.read_error(&e))?;
    let count = found[0]
        .column("n")
        .and_then(|c| Ok(c.u64()?.get(0).unwrap_or(0)))
        .map_err(|e| plan.read_error(&e))?;
    if count == 0 {
        return Ok(());
    }
    let first = &found[1];
    let mut where_ = vec![];
    for i in 0..first.height() {
        let at = || -> PolarsResult<(String, i64, &str)> {
            let file = first.column(SOURCE_COL)?.str()?.get(i).unwrap_or("?");
            let row = first.column(ROW_COL)?.i64()?.get(i).unwrap_or(0);
            let mut field = "?";
            for f in &fields {
                let c = first.column(&format!("{UNPARSED_PREFIX}{f}"))?;
                if c.bool()?.get(i).unwrap_or(false) {
                    field = f;
                    break;
                }
            }
            Ok((file.to_string(), row, field))
        };
        where_.push(at().map_err(|e| plan.read_error(&e))?);
    }
    if policy == BadRowPolicy::Error {
        let (file, row, field) = &where_[0];
        let input = plan
            .inputs
            .iter()
            .find(|i| i.path.display().to_string() == *file);
        let found = input
            .and_then(|i| source::raw_value(i, field, *row))
            .map(|v| format!("found `{v}`"))
            .unwrap_or_else(|| "found a value that is not one".into());
        let expected = catalogue::field(field)
            .map(|f| match f.kind {
                Kind::Count | Kind::Code => "an integer",
                Kind::Timestamp => "a date-time (ISO 8601 in UTC, or a Unix time)",
                Kind::Flag => "true/false",
                _ => "a finite number",
            })
            .unwrap_or("a value of the field's type");
        let at = plan.locations.describe(file, *row);
        return Err(Error::input(
            file.as_str(),
            format!(
                "{at}, column `{field}`: expected {expected}, {found} (--on-bad-row skip or keep reads the rest of the file)"
            ),
        ));
    }
    plan.skipped_examples = where_
        .into_iter()
        .map(|(file, row, field)| {
            let at = plan.locations.describe(&file, row);
            format!("{file}: {at}, column `{field}`: not a value of its type")
        })
        .collect();
    plan.unparsed_skipped = count;
    plan.lf = plan.lf.clone().filter(col(flag.as_str()).not());
    plan.request = plan
        .request
        .take()
        .map(|r| r.filter(col(flag.as_str()).not()));
    plan.around = plan
        .around
        .take()
        .map(|(a, extent)| (a.filter(col(flag.as_str()).not()), extent));
    Ok(())
}

fn read_error(inputs: &[Input], e: &PolarsError) -> Error {
    let path = if inputs.len() == 1 {
        inputs[0].path.display().to_string()
    } else {
        inputs
            .iter()
            .map(|i| i.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Error::input(
        path,
        format!("cannot read the request log: {}", source::polars_message(e)),
    )
}
