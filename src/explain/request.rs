//! One request explained: its rows read from the plan, its timeline, its rules' evidence
//! and its place among its cohort.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::clock::timeline;
use super::evidence::{atoms, check_column, checks_frame, leaves, sql, Side};
use crate::analyze;
use crate::catalogue::{self, Kind};
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::quality;
use crate::ruleset::compile::{CLASSES_SEPARATOR, CLASS_INDEX, ESTIMATED_SUFFIX};
use crate::ruleset::types::{self, Node, Ty};
use crate::ruleset::RuleSet;
use crate::source::{AroundRows, Locations, ROW_COL, SOURCE_COL};
use crate::stats::histogram::Histograms;
use crate::stats::{self, exact};
use crate::summary::{round3, tool, RulesInfo};
// Named: polars's prelude has a `Label` too.
use super::result::Label;
use super::result::*;
use super::{polars_error, refuse_untimed, About};

/// Explain every row whose `request_id` is `id`, in input order. Only those rows are
/// read (`plan::Scope::Request`: a lookup of the id column, then the rows alone); the
/// cohort is asked for its aggregates.
pub fn request(
    rules: &RuleSet,
    plan: &Plan,
    about: &About,
    id: &str,
) -> Result<RequestExplanation> {
    let rows = plan.request.clone().unwrap_or_else(|| plan.lf.clone());
    let df = stats::collect(rows.filter(col("request_id").eq(lit(id))))
        .map_err(|e| plan.read_error(&e))?;
    if df.height() == 0 {
        // A window that holds no request at all is the typo to report, not the id.
        if let Some(e) = plan.empty_window()? {
            return Err(e);
        }
        let mut msg = format!("no request `{id}` in {}", about.inputs.join(", "));
        if let Some(w) = &about.window {
            msg.push_str(&match (&w.since, &w.until) {
                (Some(s), Some(u)) => format!(" received between {s} and {u}"),
                (Some(s), None) => format!(" received at or after {s}"),
                (None, Some(u)) => format!(" received before {u}"),
                (None, None) => String::new(),
            });
        }
        // Only on this error path: every id, to suggest the nearest.
        let ids = stats::collect(plan.lf.clone().select([col("request_id")]))
            .map_err(|e| plan.read_error(&e))?;
        let ids = ids
            .column("request_id")
            .and_then(|c| c.str().cloned())
            .map_err(polars_error)?;
        if let Some(s) = types::nearest(id, ids.iter().flatten()) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        return Err(Error::Usage(msg));
    }
    refuse_untimed(plan, about, &df)?;
    let (all, around) = match &plan.around {
        Some((lf, rows)) => (lf, Some(rows)),
        None => (&plan.lf, None),
    };
    let mut ctx =
        Ctx::new(rules, &df, &plan.locations, all, &plan.uncomputable).map_err(polars_error)?;
    ctx.around = around;
    let requests = (0..df.height())
        .map(|i| ctx.explain_row(i, i + 1))
        .collect::<PolarsResult<Vec<_>>>()
        .map_err(|e| plan.read_error(&e))?;
    Ok(RequestExplanation {
        tool: tool(),
        rules: RulesInfo::of(rules),
        inputs: about.inputs.clone(),
        mapped_columns: about.mapped_columns.clone(),
        window: about.window.clone(),
        client_ids: about.client_ids.clone(),
        bad_rows: about.bad_rows.clone(),
        request_id: id.to_string(),
        occurrences: df.height(),
        requests,
    })
}

/// Whether a field or metric is a rate, where a low value is the bad one.
pub(super) fn is_rate(rules: &RuleSet, name: &str) -> bool {
    match catalogue::field(name) {
        Some(f) => f.kind == Kind::Rate,
        None => rules
            .metrics
            .iter()
            .any(|m| m.name == name && m.ty == Ty::Rate),
    }
}

/// A number as exactly as it is worth showing: up to three decimals, no trailing zeros.
pub fn exact(x: f64) -> String {
    format!("{}", round3(x))
}

pub(super) struct Ctx<'a> {
    rules: &'a RuleSet,
    /// The rows being explained (a few, collected from the plan).
    df: &'a DataFrame,
    /// Where the cohorts' aggregates are asked: the whole plan, or the rows around the
    /// request (`around`).
    all: &'a LazyFrame,
    /// Which rows `all` holds when it is not the whole log.
    around: Option<&'a AroundRows>,
    locations: &'a Locations,
    /// Reported metrics no input can compute (`Plan::uncomputable`): no cohort row.
    uncomputable: &'a [String],
    params: BTreeMap<String, f64>,
    timestamps: Option<Int64Chunked>,
    /// Every rule's elementary conditions, both sides and the result, evaluated on `df`
    /// by the compiled expressions (`checks_frame`).
    checks: DataFrame,
}

pub(super) struct Row<'a> {
    df: &'a DataFrame,
    i: usize,
}

impl Row<'_> {
    pub(super) fn get(&self, name: &str) -> Value {
        let Ok(c) = self.df.column(name) else {
            return Value::Missing;
        };
        match c.get(self.i) {
            Err(_) | Ok(AnyValue::Null) => Value::Missing,
            Ok(AnyValue::Boolean(b)) => Value::Flag(b),
            Ok(av) => {
                if let Some(s) = av.get_str() {
                    Value::Text(s.to_string())
                } else if av.dtype().is_integer() {
                    av.extract::<i64>().map_or(Value::Missing, Value::Integer)
                } else if let Some(x) = av.extract::<f64>() {
                    if x.is_nan() {
                        Value::Missing
                    } else {
                        Value::Number(x)
                    }
                } else {
                    Value::Text(av.to_string())
                }
            }
        }
    }

    pub(super) fn text(&self, name: &str) -> Option<String> {
        match self.get(name) {
            Value::Missing => None,
            Value::Text(s) => Some(s),
            Value::Number(x) => Some(exact(x)),
            Value::Integer(n) => Some(n.to_string()),
            Value::Flag(b) => Some(b.to_string()),
        }
    }

    pub(super) fn int(&self, name: &str) -> Option<i64> {
        self.get(name).number().map(|x| x as i64)
    }

    pub(super) fn flag(&self, name: &str) -> bool {
        self.get(name).flag().unwrap_or(false)
    }

    pub(super) fn num(&self, name: &str) -> Option<f64> {
        self.get(name).number()
    }

    /// A metric built on the estimated t1 offset, on this row.
    pub(super) fn estimated(&self, name: &str) -> bool {
        self.flag(&format!("{name}{ESTIMATED_SUFFIX}"))
    }
}

impl<'a> Ctx<'a> {
    pub(super) fn new(
        rules: &'a RuleSet,
        df: &'a DataFrame,
        locations: &'a Locations,
        all: &'a LazyFrame,
        uncomputable: &'a [String],
    ) -> PolarsResult<Self> {
        let timestamps = match df.column("timestamp") {
            Ok(c) => Some(c.cast(&DataType::Int64)?.i64()?.clone()),
            Err(_) => None,
        };
        Ok(Ctx {
            rules,
            df,
            all,
            around: None,
            locations,
            uncomputable,
            params: rules.param_values(),
            timestamps,
            checks: checks_frame(rules, df)?,
        })
    }

    pub(super) fn row(&self, i: usize) -> Row<'a> {
        Row { df: self.df, i }
    }

    /// The line row `i` begins on in its file (CSV, JSON lines).
    pub(super) fn source_line(&self, row: &Row) -> Option<i64> {
        let file = row.text(SOURCE_COL)?;
        self.locations.line(&file, row.int(ROW_COL)?)
    }

    pub(super) fn timestamp(&self, i: usize) -> Option<String> {
        self.timestamps
            .as_ref()
            .and_then(|t| t.get(i))
            .and_then(analyze::iso_ms)
    }

    pub(super) fn explain_row(&self, i: usize, occurrence: usize) -> PolarsResult<Explained> {
        let row = self.row(i);
        let class = row.text("class").unwrap_or_default();
        let tags: Vec<String> = row
            .text("classes")
            .map(|s| {
                s.split(CLASSES_SEPARATOR)
                    .filter(|t| !t.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        // The rule by the row's class index: in a set of several tables two may share a
        // class name.
        let by_index = row
            .int(CLASS_INDEX)
            .and_then(|i| self.rules.rules.get(i as usize))
            .filter(|r| r.class == class);
        let class_rule = by_index
            .or_else(|| self.rules.rule(&class))
            .map(|r| ClassRule {
                covers: r.covers.clone(),
                tell_apart: r.tell_apart.clone(),
                order: r.order,
                look_at: r.look_at.clone(),
                look_at_value: row.get(&r.look_at).rounded(),
                look_at_estimated: row.estimated(&r.look_at),
                layer: r.layer.clone(),
                next_check: r.next_check.clone(),
                detects: r.detects.clone(),
            });
        let labels = catalogue::FIELDS
            .iter()
            .filter(|f| {
                matches!(f.kind, Kind::Label | Kind::Code | Kind::Flag | Kind::Count)
                    && f.name != "request_id"
            })
            .map(|f| Label {
                name: f.name.to_string(),
                value: row.get(f.name).rounded(),
            })
            .collect();
        let data_quality = quality::ALL
            .iter()
            .filter(|c| row.flag(&quality::column(c)))
            .map(|c| c.name.to_string())
            .collect();
        let rules = self
            .rules
            .rules
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let matched = tags.iter().any(|t| t == &r.class);
                self.evidence(&row, k, matched, r.class == class)
            })
            .collect();
        Ok(Explained {
            occurrence,
            source_file: row.text(SOURCE_COL).unwrap_or_default(),
            source_row: row.int(ROW_COL),
            source_line: self.source_line(&row),
            timestamp: self.timestamp(i),
            labels,
            class,
            tags,
            class_rule,
            data_quality,
            timeline: timeline(self.rules, &row),
            rules,
            cohort: self.cohort(&row)?,
        })
    }

    /// The evidence of the `r`-th rule of the table on `row`.
    pub(super) fn evidence(
        &self,
        row: &Row,
        r: usize,
        matched: bool,
        gives_class: bool,
    ) -> RuleEvidence {
        let rule = &self.rules.rules[r];
        let mut names = vec![];
        leaves(&rule.node, &mut names);
        let mut values = vec![];
        let mut thresholds = vec![];
        for leaf in names {
            match leaf {
                Node::Field(n) | Node::Metric(n) => {
                    if values.iter().any(|v: &Evidence| &v.name == n) {
                        continue;
                    }
                    values.push(Evidence {
                        name: n.clone(),
                        source: if matches!(leaf, Node::Field(_)) {
                            "field"
                        } else {
                            "metric"
                        },
                        value: row.get(n).rounded(),
                        estimated: row.estimated(n),
                    });
                }
                Node::Param(n) => {
                    if thresholds.iter().any(|t: &Threshold| &t.name == n) {
                        continue;
                    }
                    let p = self.rules.params.iter().find(|p| &p.name == n);
                    thresholds.push(Threshold {
                        name: n.clone(),
                        value: self.params.get(n).copied().unwrap_or(f64::NAN),
                        unit: p.map(|p| p.unit.clone()).unwrap_or_default(),
                    });
                }
                _ => {}
            }
        }
        let checked = Row {
            df: &self.checks,
            i: row.i,
        };
        let checks = atoms(rule)
            .into_iter()
            .enumerate()
            .map(|(k, atom)| {
                let mut used = vec![];
                leaves(atom, &mut used);
                let estimated = used.iter().any(|n| match n {
                    Node::Metric(m) => row.estimated(m),
                    _ => false,
                });
                let value = |side: Side| checked.get(&check_column(r, k, side)).rounded();
                let op = match atom {
                    Node::Cmp(op, ..) => Some(op.sql().to_string()),
                    _ => None,
                };
                CheckResult {
                    expr: sql(atom),
                    right: op.as_ref().map(|_| value(Side::Right)),
                    op,
                    left: value(Side::Left),
                    result: checked.get(&check_column(r, k, Side::Result)),
                    estimated,
                }
            })
            .collect();
        RuleEvidence {
            order: rule.order,
            class: rule.class.clone(),
            matched,
            gives_class,
            when: rule.when.clone(),
            values,
            thresholds,
            checks,
        }
    }

    pub(super) fn cohort(&self, row: &Row) -> PolarsResult<Cohort> {
        let model = row.text("model");
        let channel = row.text("channel");
        let same = |name: &str, v: &Option<String>| -> Expr {
            match v {
                Some(s) => col(name)
                    .cast(DataType::String)
                    .eq(lit(s.as_str()))
                    .fill_null(lit(false)),
                None => col(name).is_null(),
            }
        };
        let reported: Vec<_> = self
            .rules
            .reported_metrics()
            .into_iter()
            .filter(|m| !self.uncomputable.contains(&m.name))
            .collect();
        let names: Vec<String> = reported.iter().map(|m| m.name.clone()).collect();
        let lf = self
            .all
            .clone()
            .filter(same("model", &model).and(same("channel", &channel)));
        // Per metric: the cohort's values, and those at or below this request's. Counted in
        // the same pass as the percentiles' histograms.
        let mut aggs = vec![len().cast(DataType::UInt64).alias("__requests")];
        for (k, m) in reported.iter().enumerate() {
            let v = col(m.name.as_str()).cast(DataType::Float64);
            let present = v.clone().is_not_null().and(v.clone().is_not_nan());
            aggs.push(
                present
                    .clone()
                    .cast(DataType::UInt64)
                    .sum()
                    .alias(format!("__n{k}").as_str()),
            );
            let at_or_below = match row.num(&m.name) {
                Some(x) => present.and(v.lt_eq(lit(x))).fill_null(lit(false)),
                None => lit(false),
            };
            aggs.push(
                at_or_below
                    .cast(DataType::UInt64)
                    .sum()
                    .alias(format!("__le{k}").as_str()),
            );
        }
        let histograms = Histograms::new(&lf, &[], &names)?;
        let counts =
            stats::collect_all(vec![lf.clone().select(aggs), histograms.query()])?.remove(0);
        let mut ranks = exact::Ranks::locate(&histograms.frames()?, &[], &[vec![]], &names)?;
        ranks.resolve(&lf)?;
        let pcts = ranks
            .finish()?
            .pop()
            .and_then(|mut m| m.remove(&vec![]))
            .unwrap_or_default();
        let count = |name: &str| -> PolarsResult<u64> {
            Ok(counts.column(name)?.u64()?.get(0).unwrap_or(0))
        };
        let mut metrics = vec![];
        for (k, m) in reported.iter().enumerate() {
            let value = row.num(&m.name);
            let (n, at_or_below) = (count(&format!("__n{k}"))?, count(&format!("__le{k}"))?);
            let rank_pct = value.and_then(|_| {
                (n > 0).then(|| ((at_or_below as f64 / n as f64) * 1000.0).round() / 10.0)
            });
            metrics.push(CohortMetric {
                name: m.name.clone(),
                label: m.label.clone().unwrap_or_default(),
                value: value.map(round3),
                estimated: row.estimated(&m.name),
                cohort: pcts.get(k).cloned().unwrap_or_default(),
                rank_pct,
            });
        }
        Ok(Cohort {
            model,
            channel,
            around: self.around.cloned(),
            requests: count("__requests")?,
            percentile_rule: crate::stats::support::RULE,
            metrics,
        })
    }
}
