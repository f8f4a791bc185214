//! The rule table as SQL for DuckDB, Spark and Trino: one query that, over a table with the
//! canonical columns, computes every derived metric (and its `_estimated` flag), `class`,
//! `classes` and the data-quality flags the way `compile` does in polars; and one query for
//! the analyze summary built on it.
//!
//! The SQL is written from the checked tree (`Node`), never from the rule's text, so every
//! place where the engines' defaults differ from polars is spelled out:
//!
//! - arithmetic is on DOUBLE (an integer operand is cast first): Trino divides integers by
//!   truncating, polars (once cast) does not;
//! - `a / b` is `a / NULLIF(b, 0)`: null when `b` is zero, where Spark in ANSI mode raises
//!   an error and DuckDB gives infinity or null depending on its version;
//! - `greatest`/`least` are null when any argument is null, as in polars and Trino, where
//!   DuckDB and Spark skip null arguments;
//! - `x IS [NOT] TRUE|FALSE` becomes `COALESCE(x, …)`, which every engine has;
//! - a rule matches only when its condition is true (`COALESCE(cond, FALSE)`): null, from a
//!   comparison with a missing value, is no match;
//! - `elapsed(p)` is the point itself (the checker already turned it into its operand);
//! - number literals are written with an exponent (`3e3`), which all three read as DOUBLE.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::compile::{estimated_metrics, CLASSES_SEPARATOR, ESTIMATED_SUFFIX};
use super::types::{Arith, Func, Node};
use super::RuleSet;
use crate::catalogue::{self, Catalogue, Kind, FIELDS};
use crate::error::{Error, Result};
use crate::quality::{self, MAX_PLAUSIBLE_MS, RECOMPUTED_TPS_METRIC, TPS_TOLERANCE_PARAM};
use crate::stats::QUANTILES;

/// The SQL engines a query can be written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    DuckDb,
    Spark,
    Trino,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::DuckDb => "duckdb",
            Dialect::Spark => "spark",
            Dialect::Trino => "trino",
        }
    }

    /// A quoted identifier: `"name"`, or `` `name` `` in Spark.
    pub(crate) fn ident(self, name: &str) -> String {
        match self {
            Dialect::Spark => format!("`{}`", name.replace('`', "``")),
            Dialect::DuckDb | Dialect::Trino => format!("\"{}\"", name.replace('"', "\"\"")),
        }
    }

    /// A string literal. Spark reads backslash escapes inside quotes and joins adjacent
    /// literals (`'a''b'` is `ab` there), so it escapes with backslashes.
    pub(crate) fn string(self, s: &str) -> String {
        match self {
            Dialect::Spark => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Dialect::DuckDb | Dialect::Trino => format!("'{}'", s.replace('\'', "''")),
        }
    }

    /// An exact type-7 percentile, where the engine has one.
    fn percentile(self, x: &str, q: f64) -> String {
        let q = number(q);
        match self {
            Dialect::DuckDb => format!("QUANTILE_CONT({x}, {q})"),
            Dialect::Spark => format!("PERCENTILE({x}, {q})"),
            Dialect::Trino => format!("APPROX_PERCENTILE({x}, {q})"),
        }
    }
}

/// The table the query reads when none is named.
pub const DEFAULT_TABLE: &str = "requests";

/// A DOUBLE literal: exponent notation is DOUBLE in DuckDB, Spark and Trino alike (a plain
/// `0.5` is a DECIMAL in Spark and Trino).
pub(crate) fn number(x: f64) -> String {
    let s = format!("{x:e}");
    if x < 0.0 {
        format!("({s})")
    } else {
        s
    }
}

/// The data-quality flags a SQL table can have. `dq_unparsed` and `dq_unreadable` describe
/// reading a file (a value not of its type, a line not read whole): a warehouse table's
/// columns are already typed, so they have no SQL counterpart.
pub const SQL_QUALITY_CHECKS: [quality::Check; 6] = [
    quality::OUT_OF_ORDER,
    quality::NEGATIVE,
    quality::ZERO_AS_MISSING,
    quality::TPS_MISMATCH,
    quality::DUPLICATE_ID,
    quality::IMPLAUSIBLE,
];

struct Emitter<'a> {
    d: Dialect,
    params: BTreeMap<String, f64>,
    /// Metrics that may carry an estimate (they have an `<name>_estimated` column).
    estimated: &'a BTreeMap<String, bool>,
}

impl Emitter<'_> {
    fn col(&self, name: &str) -> String {
        self.d.ident(name)
    }

    /// Whether the expression is already a DOUBLE in SQL (no cast needed before arithmetic).
    fn is_double(&self, node: &Node) -> bool {
        match node {
            Node::Field(n) => catalogue::field(n).is_some_and(|f| {
                matches!(
                    f.kind,
                    Kind::Point { .. }
                        | Kind::Phase
                        | Kind::Rate
                        | Kind::Duration
                        | Kind::Percent
                        | Kind::Ratio
                )
            }),
            Node::Metric(_) | Node::Param(_) | Node::Num(_) => true,
            Node::Arith(..) | Node::Neg(_) => true,
            Node::Call {
                func: Func::Coalesce,
                args,
                ..
            } => args.iter().all(|a| self.is_double(a)),
            Node::Call { .. } => true,
            _ => false,
        }
    }

    fn double(&self, node: &Node) -> String {
        let v = self.value(node);
        if self.is_double(node) {
            v
        } else {
            format!("CAST({v} AS DOUBLE)")
        }
    }

    /// The value of a checked expression, in the semantics of `compile::Compiler::value`.
    fn value(&self, node: &Node) -> String {
        match node {
            Node::Field(n) | Node::Metric(n) => self.col(n),
            Node::Param(n) => format!("{} /* {n} */", number(self.params[n])),
            Node::Num(x) => number(*x),
            Node::Str(s) => self.d.string(s),
            Node::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            Node::Arith(op, a, b) => {
                let (a, b) = (self.double(a), self.double(b));
                match op {
                    Arith::Add => format!("({a} + {b})"),
                    Arith::Sub => format!("({a} - {b})"),
                    Arith::Mul => format!("({a} * {b})"),
                    Arith::Div => format!("({a} / NULLIF({b}, 0e0))"),
                }
            }
            Node::Cmp(op, a, b) => {
                format!("({} {} {})", self.value(a), op.sql(), self.value(b))
            }
            Node::And(a, b) => format!("({} AND {})", self.value(a), self.value(b)),
            Node::Or(a, b) => format!("({} OR {})", self.value(a), self.value(b)),
            Node::Not(a) => format!("(NOT {})", self.value(a)),
            Node::Neg(a) => format!("(0e0 - {})", self.double(a)),
            Node::IsNull { expr, negated } => format!(
                "({} IS {}NULL)",
                self.value(expr),
                if *negated { "NOT " } else { "" }
            ),
            Node::Truth {
                expr,
                value,
                negated,
            } => {
                let e = self.value(expr);
                // IS TRUE / IS NOT FALSE: the value, with null as false / true; IS FALSE /
                // IS NOT TRUE: its negation, likewise.
                match (value, negated) {
                    (true, false) => format!("COALESCE({e}, FALSE)"),
                    (true, true) => format!("COALESCE(NOT {e}, TRUE)"),
                    (false, false) => format!("COALESCE(NOT {e}, FALSE)"),
                    (false, true) => format!("COALESCE({e}, TRUE)"),
                }
            }
            Node::InList {
                expr,
                list,
                negated,
            } => {
                let e = self.value(expr);
                let any = list
                    .iter()
                    .map(|item| format!("{e} = {}", self.value(item)))
                    .collect::<Vec<_>>()
                    .join(" OR ");
                if *negated {
                    format!("(NOT ({any}))")
                } else {
                    format!("({any})")
                }
            }
            Node::Call { func, args, .. } => match func {
                Func::Abs => format!("ABS({})", self.double(&args[0])),
                Func::Coalesce => format!(
                    "COALESCE({})",
                    args.iter()
                        .map(|a| self.value(a))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Func::Greatest | Func::Least => {
                    let name = if *func == Func::Greatest {
                        "GREATEST"
                    } else {
                        "LEAST"
                    };
                    let vals: Vec<String> = args.iter().map(|a| self.double(a)).collect();
                    let any_null = vals
                        .iter()
                        .map(|v| format!("{v} IS NULL"))
                        .collect::<Vec<_>>()
                        .join(" OR ");
                    format!(
                        "CASE WHEN {any_null} THEN CAST(NULL AS DOUBLE) ELSE {name}({}) END",
                        vals.join(", ")
                    )
                }
            },
        }
    }

    /// The "built on an estimate" flag, in the semantics of `compile::Compiler::estimated`.
    fn estimated(&self, node: &Node) -> Option<String> {
        let children: Vec<&Node> = match node {
            Node::Metric(n) => {
                return self
                    .estimated
                    .get(n)
                    .copied()
                    .unwrap_or(false)
                    .then(|| self.col(&format!("{n}{ESTIMATED_SUFFIX}")))
            }
            Node::Call {
                func: Func::Coalesce,
                args,
                estimated,
            } => {
                // The argument actually chosen decides: a fallback taken in an estimating
                // coalesce is an estimate; otherwise the chosen value's own flag.
                let flags: Vec<Option<String>> = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| match (self.estimated(a), *estimated && i > 0) {
                        (_, true) => Some("TRUE".into()),
                        (f, false) => f,
                    })
                    .collect();
                if flags.iter().all(Option::is_none) {
                    return None;
                }
                let mut case = String::from("CASE");
                for (a, f) in args.iter().zip(flags) {
                    let _ = write!(
                        case,
                        " WHEN {} IS NOT NULL THEN {}",
                        self.value(a),
                        f.unwrap_or_else(|| "FALSE".into())
                    );
                }
                case.push_str(" ELSE FALSE END");
                return Some(case);
            }
            _ => node.children(),
        };
        children
            .into_iter()
            .filter_map(|c| self.estimated(c))
            .reduce(|a, b| format!("({a} OR {b})"))
    }
}

/// Every metric a node refers to.
fn metric_refs<'n>(node: &'n Node, out: &mut Vec<&'n str>) {
    match node {
        Node::Metric(n) => out.push(n),
        Node::Field(_) | Node::Param(_) | Node::Num(_) | Node::Str(_) | Node::Bool(_) => {}
        Node::Arith(_, a, b) | Node::Cmp(_, a, b) | Node::And(a, b) | Node::Or(a, b) => {
            metric_refs(a, out);
            metric_refs(b, out);
        }
        Node::Not(a) | Node::Neg(a) => metric_refs(a, out),
        Node::IsNull { expr, .. } | Node::Truth { expr, .. } | Node::InList { expr, .. } => {
            metric_refs(expr, out)
        }
        Node::Call { args, .. } => args.iter().for_each(|a| metric_refs(a, out)),
    }
}

/// The metrics in levels: a metric is one level above the highest metric it uses, so each
/// level is one `SELECT` over the one before (a column is visible only after its SELECT).
fn metric_levels(rules: &RuleSet) -> Vec<Vec<usize>> {
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    let mut levels: Vec<Vec<usize>> = vec![];
    let off = rules.adapter_metrics();
    // `rules.metrics` is in dependency order: a metric's inputs already have a level.
    for (i, m) in rules.metrics.iter().enumerate() {
        if off.contains(&m.name) {
            continue;
        }
        let mut refs = vec![];
        metric_refs(&m.node, &mut refs);
        let l = refs
            .iter()
            .filter_map(|r| level.get(r))
            .map(|l| l + 1)
            .max()
            .unwrap_or(0);
        level.insert(&m.name, l);
        if levels.len() <= l {
            levels.resize(l + 1, vec![]);
        }
        levels[l].push(i);
    }
    levels
}

/// What the query reads: a table (or table expression) with the canonical columns, or a
/// table of its own names read through common table expressions that map them
/// (`like::source`, `rules --emit sql --like`).
#[derive(Debug, Clone)]
pub struct Source {
    /// The table as the user named it, for the header.
    pub table: String,
    /// Expressions read before the metrics, in order; the last one is what they read.
    pub ctes: Vec<(String, String)>,
    /// The header's paragraph on what is read, in place of the canonical table's.
    pub reads: Option<String>,
}

impl Source {
    /// A table that has the canonical columns.
    pub fn table(table: &str) -> Source {
        Source {
            table: table.to_string(),
            ctes: vec![],
            reads: None,
        }
    }

    /// What the first metrics read: the last expression, else the table.
    fn from(&self) -> String {
        self.ctes
            .last()
            .map_or_else(|| self.table.clone(), |(name, _)| name.clone())
    }
}

/// The columns the per-request query adds to what it reads: the metrics (and their
/// `_estimated` flags), `class`, `classes` and the data-quality flags.
pub fn added_columns(rules: &RuleSet) -> Vec<String> {
    let est = estimated_metrics(rules);
    let off = rules.adapter_metrics();
    let mut out = vec![];
    for m in rules.metrics.iter().filter(|m| !off.contains(&m.name)) {
        out.push(m.name.clone());
        if est.get(&m.name).copied().unwrap_or(false) {
            out.push(format!("{}{ESTIMATED_SUFFIX}", m.name));
        }
    }
    out.extend(["class".to_string(), "classes".to_string()]);
    out.extend(SQL_QUALITY_CHECKS.iter().map(quality::column));
    out
}

/// The common table expressions of the per-request query, the last one `classified`.
fn row_ctes(rules: &RuleSet, d: Dialect, source: &Source) -> Result<Vec<(String, String)>> {
    if rules.catalogue != Catalogue::Gateway {
        return Err(Error::Usage(format!(
            "--emit sql: the table `{}` is written against Azure Monitor windows, which tracediag builds from metric exports itself; only gateway request-log tables run as SQL",
            rules.name
        )));
    }
    if let Some(p) = rules.params.iter().find(|p| !p.value.is_finite()) {
        return Err(Error::Usage(format!(
            "--emit sql: parameter `{}` is {}, which SQL has no literal for",
            p.name, p.value
        )));
    }
    let est = estimated_metrics(rules);
    let e = Emitter {
        d,
        params: rules.param_values(),
        estimated: &est,
    };
    let mut ctes = source.ctes.clone();
    let mut from = source.from();
    for (l, members) in metric_levels(rules).into_iter().enumerate() {
        let mut cols = vec![];
        for i in members {
            let m = &rules.metrics[i];
            cols.push(format!("{} AS {}", e.double(&m.node), e.col(&m.name)));
            if let Some(flag) = e.estimated(&m.node) {
                cols.push(format!(
                    "COALESCE({flag}, FALSE) AS {}",
                    e.col(&format!("{}{ESTIMATED_SUFFIX}", m.name))
                ));
            }
        }
        let name = format!("metrics_{l}");
        ctes.push((
            name.clone(),
            format!("SELECT *,\n    {}\n  FROM {from}", cols.join(",\n    ")),
        ));
        from = name;
    }

    let mut cols = vec![];
    let conds: Vec<(String, String)> = rules
        .rules
        .iter()
        .map(|r| {
            (
                format!("COALESCE({}, FALSE)", e.value(&r.node)),
                d.string(&r.class),
            )
        })
        .collect();
    let default = d.string(&rules.default_class);
    if conds.is_empty() {
        cols.push(format!("{default} AS {}", e.col("class")));
        cols.push(format!("{default} AS {}", e.col("classes")));
    } else {
        let mut case = String::from("CASE");
        for (c, name) in &conds {
            let _ = write!(case, "\n      WHEN {c} THEN {name}");
        }
        let _ = write!(case, "\n      ELSE {default}\n    END");
        cols.push(format!("{case} AS {}", e.col("class")));
        // CONCAT_WS skips nulls in all three engines.
        let tags: Vec<String> = conds
            .iter()
            .map(|(c, name)| format!("CASE WHEN {c} THEN {name} END"))
            .collect();
        cols.push(format!(
            "COALESCE(NULLIF(CONCAT_WS({},\n      {}), ''), {default}) AS {}",
            d.string(CLASSES_SEPARATOR),
            tags.join(",\n      "),
            e.col("classes")
        ));
    }
    for check in SQL_QUALITY_CHECKS {
        cols.push(format!(
            "{} AS {}",
            quality_flag(rules, &e, &check),
            e.col(&quality::column(&check))
        ));
    }
    ctes.push((
        "classified".into(),
        format!("SELECT *,\n    {}\n  FROM {from}", cols.join(",\n    ")),
    ));
    Ok(ctes)
}

/// `a OR b OR …`, each term false where it is null (`quality::any`).
fn any(terms: Vec<String>) -> String {
    if terms.is_empty() {
        return "FALSE".into();
    }
    terms
        .iter()
        .map(|t| format!("COALESCE({t}, FALSE)"))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// One data-quality flag, as `quality::apply` computes it.
fn quality_flag(rules: &RuleSet, e: &Emitter, check: &quality::Check) -> String {
    let c = |n: &str| e.col(n);
    match check.name {
        "out_of_order" => {
            let points = catalogue::t0_points_in_order();
            let mut terms = vec![];
            for (i, a) in points.iter().enumerate() {
                for b in &points[i + 1..] {
                    terms.push(format!("{} > {}", c(a.name), c(b.name)));
                }
            }
            format!("({})", any(terms))
        }
        // Over the canonical columns: the adapter-only fields are not in such a table
        // (`catalogue::ADAPTER_FIELDS`).
        "negative" => format!(
            "({})",
            any(FIELDS
                .iter()
                .filter(|f| f.kind.is_timing() && !catalogue::is_adapter_field(f.name))
                .map(|f| format!("{} < 0e0", c(f.name)))
                .collect())
        ),
        "zero_as_missing" => {
            let points: Vec<(&str, catalogue::Event)> = FIELDS
                .iter()
                .filter(|f| !catalogue::is_adapter_field(f.name))
                .filter_map(|f| match f.kind {
                    Kind::Point { marks, .. } => Some((f.name, marks)),
                    _ => None,
                })
                .collect();
            let terms = points
                .iter()
                .map(|(name, marks)| {
                    let later = any(points
                        .iter()
                        .filter(|(_, m)| m > marks && m.clock() == marks.clock())
                        .map(|(n, _)| format!("{} > 0e0", c(n)))
                        .collect());
                    format!("{} = 0e0 AND ({later})", c(name))
                })
                .collect();
            format!("({})", any(terms))
        }
        "tps_mismatch" => {
            if quality::tps_check_available(rules) {
                let tol = number(rules.param_values()[TPS_TOLERANCE_PARAM]);
                let re = c(RECOMPUTED_TPS_METRIC);
                format!(
                    "COALESCE(ABS({} - {re}) > {tol} /* {TPS_TOLERANCE_PARAM} */ * {re}, FALSE)",
                    c("visible_output_tps")
                )
            } else {
                "FALSE".into()
            }
        }
        "duplicate_id" => format!(
            "({id} IS NOT NULL AND COUNT(*) OVER (PARTITION BY {id}) > 1)",
            id = c("request_id")
        ),
        "implausible" => format!(
            "({})",
            any(FIELDS
                .iter()
                .filter(|f| {
                    matches!(f.kind, Kind::Point { .. } | Kind::Phase | Kind::Duration)
                        && !catalogue::is_adapter_field(f.name)
                })
                .map(|f| format!("{} > {}", c(f.name), number(MAX_PLAUSIBLE_MS)))
                .collect())
        ),
        other => unreachable!("SQL_QUALITY_CHECKS has no `{other}`"),
    }
}

fn header(rules: &RuleSet, d: Dialect, source: &Source, what: &str) -> String {
    // A table expression may span lines; in a `--` comment a line break would end it.
    let table = source
        .table
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut h = String::new();
    let _ = writeln!(
        h,
        "-- tracediag: {what}, rule table `{}` ({}), for {}.",
        rules.name,
        rules.source,
        d.name()
    );
    match &source.reads {
        Some(reads) => h.push_str(reads),
        None => {
            let _ = writeln!(
                h,
                "-- Reads {table}: one row per request with the canonical columns (`tracediag fields`);"
            );
            h.push_str(
                "-- a field the logs lack is a column of NULLs. Its other columns pass through; none may\n\
                 -- be named like a column this query adds. Client identifiers are used as they are in\n\
                 -- the table (no rule may use them).\n",
            );
        }
    }
    h.push_str(
        "-- Semantics as in tracediag: arithmetic on DOUBLE, x / 0 is NULL, greatest/least are\n\
         -- NULL when an argument is, a rule matches only where its condition is TRUE.\n",
    );
    if !rules.params.is_empty() {
        h.push_str("-- Parameters (`--set name=value` when emitting changes them):\n");
        for p in &rules.params {
            let _ = writeln!(h, "--   {} = {} {}", p.name, p.value, p.unit);
        }
    }
    h
}

fn with(ctes: &[(String, String)]) -> String {
    let mut s = String::from("WITH\n");
    let body: Vec<String> = ctes
        .iter()
        .map(|(name, q)| format!("{name} AS (\n  {q}\n)"))
        .collect();
    s.push_str(&body.join(",\n"));
    s.push('\n');
    s
}

/// The per-request query: every column of `table`, then the metrics (and their
/// `_estimated` flags), `class`, `classes` and the `dq_*` flags of `SQL_QUALITY_CHECKS`.
pub fn rows_query(rules: &RuleSet, d: Dialect, table: &str) -> Result<String> {
    rows_query_from(rules, d, &Source::table(table))
}

/// `rows_query` over any `Source`.
pub fn rows_query_from(rules: &RuleSet, d: Dialect, source: &Source) -> Result<String> {
    let ctes = row_ctes(rules, d, source)?;
    let mut q = header(rules, d, source, "per-request metrics, class and tags");
    let _ = writeln!(
        q,
        "-- Adds: the metrics and their _estimated flags, class (the first rule that matches),\n\
         -- classes (every match, `{CLASSES_SEPARATOR}`-separated) and the data-quality flags\n\
         -- {}.\n\
         -- dq_unparsed and dq_unreadable are about reading files: no SQL counterpart.",
        SQL_QUALITY_CHECKS
            .iter()
            .map(quality::column)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let off = rules.adapter_metrics();
    if !off.is_empty() {
        let _ = writeln!(
            q,
            "-- Left out: {}: built on figures only a tool's adapter reads (a relay's or a\n\
             -- benchmark client's clock), which a table of the canonical columns does not have.",
            off.join(", ")
        );
    }
    q.push_str(&with(&ctes));
    q.push_str("SELECT * FROM classified\n");
    Ok(q)
}

/// The figures the summary reports percentiles of: end-to-end, then every named metric.
pub fn summary_figures(rules: &RuleSet) -> Vec<String> {
    let e2e = rules.parts[0].end_to_end.clone();
    let off = rules.adapter_metrics();
    std::iter::once(e2e.clone())
        .chain(
            rules
                .reported_metrics()
                .iter()
                .map(|m| m.name.clone())
                .filter(|n| *n != e2e && !off.contains(n)),
        )
        .collect()
}

/// The analyze summary: one row for all requests (`position` 0, `class` NULL), then one per
/// class in table order (zero counts included): requests, share, failures, and for each
/// figure of `summary_figures` the non-null count `<figure>_n` and `<figure>_p50/_p95/_p99`.
pub fn summary_query(rules: &RuleSet, d: Dialect, table: &str) -> Result<String> {
    summary_query_from(rules, d, &Source::table(table))
}

/// `summary_query` over any `Source`.
pub fn summary_query_from(rules: &RuleSet, d: Dialect, source: &Source) -> Result<String> {
    let mut ctes = row_ctes(rules, d, source)?;
    let c = |n: &str| d.ident(n);
    let figures = summary_figures(rules);
    let suffix = |q: f64| format!("p{}", (q * 100.0).round());

    let mut aggs = vec![
        format!("GROUPING({}) AS {}", c("class"), c("is_total")),
        format!("COUNT(*) AS {}", c("requests")),
        format!(
            "SUM(CASE WHEN {o} IS NOT NULL AND {o} <> {ok} THEN 1 ELSE 0 END) AS {}",
            c("failures"),
            o = c("outcome"),
            ok = d.string("ok")
        ),
    ];
    for f in &figures {
        aggs.push(format!("COUNT({}) AS {}", c(f), c(&format!("{f}_n"))));
        for q in QUANTILES {
            aggs.push(format!(
                "{} AS {}",
                d.percentile(&c(f), q),
                c(&format!("{f}_{}", suffix(q)))
            ));
        }
    }
    ctes.push((
        "per_class".into(),
        format!(
            "SELECT {},\n    {}\n  FROM classified\n  GROUP BY GROUPING SETS (({}), ())",
            c("class"),
            aggs.join(",\n    "),
            c("class")
        ),
    ));
    let order: Vec<String> = std::iter::once(format!("(0, CAST(NULL AS {}))", string_type(d)))
        .chain(
            rules
                .class_order()
                .iter()
                .enumerate()
                .map(|(i, n)| format!("({}, {})", i + 1, d.string(n))),
        )
        .collect();
    ctes.push((
        "table_order".into(),
        format!(
            "SELECT * FROM (VALUES {}) AS t({}, {})",
            order.join(", "),
            c("position"),
            c("class")
        ),
    ));

    let mut cols = vec![
        format!("o.{}", c("position")),
        format!("o.{}", c("class")),
        format!("COALESCE(p.{r}, 0) AS {r}", r = c("requests")),
        format!(
            "CAST(COALESCE(p.{r}, 0) AS DOUBLE) / NULLIF(t.{r}, 0) AS {}",
            c("share"),
            r = c("requests")
        ),
        format!("COALESCE(p.{f}, 0) AS {f}", f = c("failures")),
    ];
    for f in &figures {
        cols.push(format!(
            "COALESCE(p.{n}, 0) AS {n}",
            n = c(&format!("{f}_n"))
        ));
        for q in QUANTILES {
            cols.push(format!("p.{}", c(&format!("{f}_{}", suffix(q)))));
        }
    }
    let mut q = header(rules, d, source, "the analyze summary");
    let _ = writeln!(
        q,
        "-- One row for all requests (position 0, class NULL), then one per class in table order:\n\
         -- requests, share, failures (outcome known and not ok; failures stay in every figure),\n\
         -- and for each figure the non-null count (_n) and p50/p95/p99 (_p50, _p95, _p99):",
    );
    for f in &figures {
        let _ = writeln!(q, "--   {f}");
    }
    q.push_str(match d {
        Dialect::DuckDb => "-- Percentiles: QUANTILE_CONT, exact, linear interpolation between closest ranks (type 7).\n",
        Dialect::Spark => "-- Percentiles: PERCENTILE, exact, linear interpolation between closest ranks (type 7).\n",
        Dialect::Trino => "-- Percentiles: APPROX_PERCENTILE is APPROXIMATE (a quantile digest), not tracediag's\n\
                           -- exact type-7 figure; counts, shares and failures are exact.\n",
    });
    q.push_str(&with(&ctes));
    let _ = write!(
        q,
        "SELECT {}\nFROM table_order o\nCROSS JOIN (SELECT * FROM per_class WHERE {tot} = 1) t\n\
         LEFT JOIN per_class p\n  ON (o.{pos} = 0 AND p.{tot} = 1) OR (p.{tot} = 0 AND p.{cl} = o.{cl})\n\
         ORDER BY o.{pos}\n",
        cols.join(",\n  "),
        tot = c("is_total"),
        pos = c("position"),
        cl = c("class"),
    );
    Ok(q)
}

pub(crate) fn string_type(d: Dialect) -> &'static str {
    match d {
        Dialect::DuckDb => "VARCHAR",
        Dialect::Spark => "STRING",
        Dialect::Trino => "VARCHAR",
    }
}

/// The table with the user's columns (`--map`, `--schema`) added under the catalogue's
/// names: `(SELECT *, <column> AS <field>, … FROM table) AS mapped`, each time converted to
/// milliseconds and each timestamp in a unit read as Unix time. A dotted column is a path
/// into nested fields (a struct, a ROW); the table's other columns pass through. The
/// checks against a file's columns (`source::columns::apply`) have no table to run on
/// here: the engine names a column it lacks.
pub fn mapped_table(
    d: Dialect,
    table: &str,
    columns: &crate::source::columns::ColumnMap,
) -> String {
    if columns.is_empty() {
        return table.to_string();
    }
    let cols: Vec<String> = columns
        .entries
        .iter()
        .map(|e| {
            let path: Vec<String> = e.column.split('.').map(|p| d.ident(p)).collect();
            let x = path.join(".");
            let kind = catalogue::field(e.field).map(|f| f.kind);
            let value = match (e.unit, kind) {
                (Some(u), Some(Kind::Timestamp)) => {
                    // Seconds since the epoch, as each engine reads them.
                    let seconds = scaled(&x, u.in_ms() / 1e3);
                    match d {
                        Dialect::DuckDb => format!("to_timestamp({seconds})"),
                        Dialect::Spark => format!("timestamp_seconds({seconds})"),
                        Dialect::Trino => format!("from_unixtime({seconds})"),
                    }
                }
                (Some(u), _) => scaled(&x, u.in_ms()),
                // Typed as the catalogue types the field (a time of integers is DOUBLE).
                (None, Some(Kind::Count | Kind::Code)) => format!("CAST({x} AS BIGINT)"),
                (None, Some(k)) if k.is_timing() || matches!(k, Kind::Percent | Kind::Ratio) => {
                    scaled(&x, 1.0)
                }
                (None, _) => x,
            };
            format!("{value} AS {}", d.ident(e.field))
        })
        .collect();
    format!("(SELECT *, {} FROM {table}) AS mapped", cols.join(", "))
}

/// `x` (cast to DOUBLE) times `factor`, a fraction written as a division (1e-3 is `/ 1e3`,
/// as the projection divides).
fn scaled(x: &str, factor: f64) -> String {
    let x = format!("CAST({x} AS DOUBLE)");
    if factor == 1.0 {
        x
    } else if factor > 1.0 {
        format!("{x} * {}", number(factor))
    } else {
        format!("{x} / {}", number(1.0 / factor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::{DuckDbDialect, GenericDialect, SparkSqlDialect};
    use sqlparser::parser::Parser;

    fn parser_for(d: Dialect) -> Box<dyn sqlparser::dialect::Dialect> {
        match d {
            Dialect::DuckDb => Box::new(DuckDbDialect {}),
            Dialect::Spark => Box::new(SparkSqlDialect {}),
            // sqlparser has no Trino dialect (and its ANSI one lacks GROUPING SETS): the
            // generic one here; the engines test parses it with sqlglot's Trino grammar.
            Dialect::Trino => Box::new(GenericDialect {}),
        }
    }

    /// Both queries of the shipped table parse, in every dialect, with sqlparser's dialect
    /// of that engine (the engines themselves run them in tests/sql_engines.rs).
    #[test]
    fn emitted_queries_parse_in_each_dialect() {
        let rules = RuleSet::gateway().unwrap();
        for d in [Dialect::DuckDb, Dialect::Spark, Dialect::Trino] {
            let p = parser_for(d);
            for q in [
                rows_query(&rules, d, DEFAULT_TABLE).unwrap(),
                summary_query(&rules, d, DEFAULT_TABLE).unwrap(),
            ] {
                let parsed = Parser::parse_sql(p.as_ref(), &q)
                    .unwrap_or_else(|e| panic!("{}: {e}\n{q}", d.name()));
                assert_eq!(parsed.len(), 1, "{}: one statement", d.name());
            }
        }
    }

    #[test]
    fn semantics_are_spelled_out() {
        let src = r#"
name = "t"
default_class = "normal"
[[params]]
name = "few"
value = -2.5
unit = "tokens"
doc = "x"
[[metrics]]
name = "per_token_ms"
expr = "elapsed(total_handler_ms) / output_tokens"
doc = "x"
[[metrics]]
name = "hi_ms"
expr = "greatest(auth_ms, body_read_ms)"
doc = "x"
[[rules]]
class = "x"
order = 1
when = "is_stream IS NOT FALSE AND output_tokens > few AND outcome IN ('it''s', 'ok')"
look_at = "auth_ms"
layer = "x"
next_check = "x"
detects = "x"
why = "x"
"#;
        let rules = RuleSet::parse(src, "t.toml").unwrap();
        let duck = rows_query(&rules, Dialect::DuckDb, "logs").unwrap();
        assert!(
            duck.contains(
                "(\"total_handler_ms\" / NULLIF(CAST(\"output_tokens\" AS DOUBLE), 0e0)) AS \"per_token_ms\""
            ),
            "{duck}"
        );
        assert!(duck.contains("CASE WHEN \"auth_ms\" IS NULL OR \"body_read_ms\" IS NULL THEN CAST(NULL AS DOUBLE) ELSE GREATEST(\"auth_ms\", \"body_read_ms\") END"), "{duck}");
        assert!(duck.contains("COALESCE(\"is_stream\", TRUE)"), "{duck}");
        assert!(
            duck.contains("(\"output_tokens\" > (-2.5e0) /* few */)"),
            "{duck}"
        );
        assert!(duck.contains("'it''s'"), "{duck}");
        assert!(duck.contains("FROM logs\n"), "{duck}");
        let spark = rows_query(&rules, Dialect::Spark, "logs").unwrap();
        assert!(spark.contains("'it\\'s'"), "{spark}");
        assert!(spark.contains("`per_token_ms`"), "{spark}");
        let trino = summary_query(&rules, Dialect::Trino, "logs").unwrap();
        assert!(
            trino.contains("APPROX_PERCENTILE is APPROXIMATE"),
            "{trino}"
        );
    }

    #[test]
    fn metrics_are_selected_in_levels() {
        let rules = RuleSet::gateway().unwrap();
        let levels = metric_levels(&rules);
        let names = |l: usize| -> Vec<&str> {
            levels[l]
                .iter()
                .map(|&i| rules.metrics[i].name.as_str())
                .collect()
        };
        assert_eq!(levels.len(), 3);
        assert!(names(0).contains(&"t1_offset_ms"));
        assert!(names(1).contains(&"headers_at_ms"));
        assert!(names(2).contains(&"prefill_ms"));
    }

    /// With the user's columns the queries still parse in every dialect.
    #[test]
    fn mapped_tables_parse_in_each_dialect() {
        let rules = RuleSet::gateway().unwrap();
        let map = crate::source::columns::ColumnMap::from_args(
            &[
                "first_sse_event_ms=ttft_ms".into(),
                "total_handler_ms=other.timing.latency_s:s".into(),
                "timestamp=started:ms".into(),
                "output_tokens=out_tok".into(),
            ],
            None,
        )
        .unwrap();
        for d in [Dialect::DuckDb, Dialect::Spark, Dialect::Trino] {
            let table = mapped_table(d, "logs", &map);
            for q in [
                rows_query(&rules, d, &table).unwrap(),
                summary_query(&rules, d, &table).unwrap(),
            ] {
                sqlparser::parser::Parser::parse_sql(&*parser_for(d), &q)
                    .unwrap_or_else(|e| panic!("{}: {e}\n{q}", d.name()));
            }
        }
        assert_eq!(
            mapped_table(Dialect::DuckDb, "logs", &Default::default()),
            "logs"
        );
    }

    #[test]
    fn azure_tables_are_refused() {
        let rules = RuleSet::azure().unwrap();
        let e = rows_query(&rules, Dialect::DuckDb, "t")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("only gateway request-log tables run as SQL"),
            "{e}"
        );
    }
}
