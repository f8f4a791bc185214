//! Turns checked expressions into polars expressions. Metrics become columns (in
//! dependency order) and rules become one `when/then` chain in table order: the first
//! match is the request's `class`, every match is a tag in `classes`.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::types::{Arith, Cmp, Func, Node};
use super::RuleSet;
use crate::kernels::{compare, first_match};

/// Suffix of the flag column that marks a metric built on an estimate.
pub const ESTIMATED_SUFFIX: &str = "_estimated";

/// Column holding the class as its position in the table (`RuleSet::class_order`: the
/// rules in order, the default class last). What aggregates group on: a small integer per
/// request, where the name would be a string per request. `class` is derived from it.
pub const CLASS_INDEX: &str = "__class";

/// Separator between tags in the `classes` column (a string, so CSV can hold it).
pub const CLASSES_SEPARATOR: &str = ";";

pub struct Compiler<'a> {
    params: &'a BTreeMap<String, f64>,
    /// Metrics that may carry an estimate (they have an `<name>_estimated` column).
    estimated_metrics: &'a BTreeMap<String, bool>,
}

impl<'a> Compiler<'a> {
    pub fn new(
        params: &'a BTreeMap<String, f64>,
        estimated_metrics: &'a BTreeMap<String, bool>,
    ) -> Self {
        Compiler {
            params,
            estimated_metrics,
        }
    }

    /// The value expression.
    pub fn value(&self, node: &Node) -> Expr {
        match node {
            Node::Field(n) | Node::Metric(n) => col(n.as_str()),
            Node::Param(n) => lit(self.params[n]),
            Node::Num(x) => lit(*x),
            Node::Str(s) => lit(s.as_str()),
            Node::Bool(b) => lit(*b),
            Node::Arith(op, a, b) => {
                // Cast first: polars divides integers by flooring.
                let (a, b) = (
                    self.value(a).cast(DataType::Float64),
                    self.value(b).cast(DataType::Float64),
                );
                match op {
                    Arith::Add => a + b,
                    Arith::Sub => a - b,
                    Arith::Mul => a * b,
                    // Division by zero gives null, not infinity: a per-token figure for a
                    // one-token response is undefined, not infinite.
                    Arith::Div => when(compare(b.clone(), Cmp::Eq, lit(0.0)))
                        .then(lit(NULL).cast(DataType::Float64))
                        .otherwise(a / b),
                }
            }
            Node::Cmp(op, a, b) => compare(self.value(a), *op, self.value(b)),
            Node::And(a, b) => self.value(a).and(self.value(b)),
            Node::Or(a, b) => self.value(a).or(self.value(b)),
            Node::Not(a) => self.value(a).not(),
            Node::Neg(a) => lit(0.0) - self.value(a).cast(DataType::Float64),
            Node::IsNull { expr, negated } => {
                let e = self.value(expr);
                if *negated {
                    e.is_not_null()
                } else {
                    e.is_null()
                }
            }
            Node::Truth {
                expr,
                value,
                negated,
            } => {
                let e = self.value(expr);
                // x IS TRUE: true only when x is true; x IS FALSE: only when it is false.
                let is = if *value {
                    e.fill_null(lit(false))
                } else {
                    e.not().fill_null(lit(false))
                };
                if *negated {
                    is.not()
                } else {
                    is
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
                    .map(|item| e.clone().eq(self.value(item)))
                    .reduce(|a, b| a.or(b))
                    .unwrap_or(lit(false));
                if *negated {
                    any.not()
                } else {
                    any
                }
            }
            Node::Call { func, args, .. } => {
                let vals: Vec<Expr> = args.iter().map(|a| self.value(a)).collect();
                match func {
                    Func::Abs => {
                        let x = vals[0].clone().cast(DataType::Float64);
                        when(x.clone().lt(lit(0.0)))
                            .then(lit(0.0) - x.clone())
                            .otherwise(x)
                    }
                    Func::Coalesce => {
                        let mut it = vals.into_iter().rev();
                        let last = it.next().expect("checked: at least 2 arguments");
                        it.fold(last, |acc, v| {
                            when(v.clone().is_not_null()).then(v).otherwise(acc)
                        })
                    }
                    // Null if any argument is null: a missing figure is not a small one.
                    Func::Greatest | Func::Least => {
                        let mut it = vals.into_iter();
                        let first = it.next().expect("checked: at least 2 arguments");
                        it.fold(first, |acc, v| {
                            let pick_acc = if *func == Func::Greatest {
                                acc.clone().gt_eq(v.clone())
                            } else {
                                acc.clone().lt_eq(v.clone())
                            };
                            when(acc.clone().is_null().or(v.clone().is_null()))
                                .then(lit(NULL).cast(DataType::Float64))
                                .otherwise(
                                    when(pick_acc)
                                        .then(acc.cast(DataType::Float64))
                                        .otherwise(v.cast(DataType::Float64)),
                                )
                        })
                    }
                }
            }
        }
    }

    /// The "built on an estimate" flag of an expression, if it can ever be estimated.
    pub fn estimated(&self, node: &Node) -> Option<Expr> {
        let children: Vec<&Node> = match node {
            Node::Metric(n) => {
                return self
                    .estimated_metrics
                    .get(n)
                    .copied()
                    .unwrap_or(false)
                    .then(|| col(format!("{n}{ESTIMATED_SUFFIX}").as_str()))
            }
            Node::Call {
                func: Func::Coalesce,
                args,
                estimated,
            } => {
                // Only the argument actually chosen decides: a fallback taken in an
                // estimating coalesce is an estimate; otherwise the chosen value's flag.
                let flags: Vec<Option<Expr>> = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| match (self.estimated(a), *estimated && i > 0) {
                        (_, true) => Some(lit(true)),
                        (f, false) => f,
                    })
                    .collect();
                if flags.iter().all(Option::is_none) {
                    return None;
                }
                let mut branches = args.iter().zip(flags).rev();
                let (last_arg, last_flag) = branches.next().expect("checked: at least 2 arguments");
                let tail = when(self.value(last_arg).is_not_null())
                    .then(last_flag.unwrap_or(lit(false)))
                    .otherwise(lit(false));
                return Some(branches.fold(tail, |acc, (a, f)| {
                    when(self.value(a).is_not_null())
                        .then(f.unwrap_or(lit(false)))
                        .otherwise(acc)
                }));
            }
            _ => node.children(),
        };
        children
            .into_iter()
            .filter_map(|c| self.estimated(c))
            .reduce(|a, b| a.or(b))
    }
}

/// Which metrics can carry an estimate, in dependency order.
pub fn estimated_metrics(rules: &RuleSet) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    let params = rules.param_values();
    for m in &rules.metrics {
        let c = Compiler::new(&params, &out);
        let est = c.estimated(&m.node).is_some();
        out.insert(m.name.clone(), est);
    }
    out
}

/// Adds every metric column (and `<metric>_estimated` where it applies), then `class` and
/// `classes`, to `lf`.
pub fn apply(rules: &RuleSet, mut lf: LazyFrame) -> LazyFrame {
    let params = rules.param_values();
    let est = estimated_metrics(rules);
    let c = Compiler::new(&params, &est);
    // Metrics in layers: a metric goes in the layer after the latest of the metrics it
    // refers to, so that each layer is one with_columns (its expressions see only earlier
    // layers): a few plan nodes rather than one per metric.
    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut layers: Vec<Vec<Expr>> = vec![];
    for m in &rules.metrics {
        let layer = metric_refs(&m.node)
            .iter()
            .filter_map(|r| layer_of.get(r.as_str()))
            .map(|l| l + 1)
            .max()
            .unwrap_or(0);
        layer_of.insert(m.name.as_str(), layer);
        if layers.len() <= layer {
            layers.resize_with(layer + 1, Vec::new);
        }
        layers[layer].push(
            c.value(&m.node)
                .cast(DataType::Float64)
                .alias(m.name.as_str()),
        );
        if let Some(flag) = c.estimated(&m.node) {
            layers[layer].push(
                flag.fill_null(lit(false))
                    .alias(format!("{}{ESTIMATED_SUFFIX}", m.name).as_str()),
            );
        }
    }
    for cols in layers {
        lf = lf.with_columns(cols);
    }
    // The index first: the name refers to it.
    let [index, class, classes]: [Expr; 3] = class_exprs(rules, &c)
        .try_into()
        .unwrap_or_else(|_| unreachable!("three columns"));
    lf.with_column(index).with_columns([class, classes])
}

/// The metrics `node` refers to, each once.
fn metric_refs(node: &Node) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if let Node::Metric(name) = n {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        stack.extend(n.children());
    }
    out
}

fn class_exprs(rules: &RuleSet, c: &Compiler) -> Vec<Expr> {
    let default = rules.rules.len() as u32;
    // A set of several tables: each rule holds only on its own table's rows.
    let own_table = |part: usize| {
        (rules.parts.len() > 1).then(|| col(super::tables::TABLE_COLUMN).eq(lit(part as u32)))
    };
    let conds: Vec<(Expr, &str)> = rules
        .rules
        .iter()
        .map(|r| {
            let cond = c.value(&r.node).fill_null(lit(false));
            let cond = match own_table(r.part) {
                Some(t) => t.and(cond),
                None => cond,
            };
            (cond, r.class.as_str())
        })
        .collect();
    // The first match, as an index (`u32`, which its readers compare it with).
    let index = first_match(conds.iter().map(|(c, _)| c.clone()).collect(), default);
    // The name, from the index (evaluated only where a row is shown).
    let names = rules.class_order();
    let class = chain(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (col(CLASS_INDEX).eq(lit(i as u32)), lit(*n))),
        lit(rules.default_class.as_str()),
    );
    let tags: Vec<Expr> = conds
        .iter()
        .map(|(ci, ni)| {
            when(ci.clone())
                .then(lit(*ni))
                .otherwise(lit(NULL).cast(DataType::String))
        })
        .collect();
    let classes = if tags.is_empty() {
        lit(rules.default_class.as_str())
    } else {
        let joined = concat_str(tags, CLASSES_SEPARATOR, true);
        when(joined.clone().eq(lit("")))
            .then(lit(rules.default_class.as_str()))
            .otherwise(joined)
    };
    vec![
        index.alias(CLASS_INDEX),
        class.alias("class"),
        classes.alias("classes"),
    ]
}

/// `when(c1).then(v1).when(c2).then(v2)…otherwise(default)`.
pub fn chain(branches: impl Iterator<Item = (Expr, Expr)>, default: Expr) -> Expr {
    let mut branches = branches.peekable();
    let Some((c0, v0)) = branches.next() else {
        return default;
    };
    let first = when(c0).then(v0);
    let Some((c1, v1)) = branches.next() else {
        return first.otherwise(default);
    };
    let mut chained = first.when(c1).then(v1);
    for (ci, vi) in branches {
        chained = chained.when(ci).then(vi);
    }
    chained.otherwise(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The t1 offset is exact where upstream_start_ms is logged, estimated where it falls
    /// back on the local phases, and the flag follows into every metric built on it.
    #[test]
    fn estimates_are_flagged_exactly_where_the_fallback_is_taken() {
        let rules = RuleSet::gateway().unwrap();
        let df = df!(
            "upstream_start_ms" => [Some(12.0f64), None, None],
            "auth_ms" => [Some(5.0f64), Some(5.0), None],
            "distribution_ms" => [Some(2.0f64), Some(2.0), Some(2.0)],
            "body_read_ms" => [Some(3.0f64), Some(3.0), Some(3.0)],
            "upstream_headers_ms" => [200.0f64, 200.0, 200.0],
            "first_response_ms" => [1000.0f64, 1000.0, 1000.0],
        )
        .unwrap();
        let mut lf = df.lazy();
        // Every other catalogue field, null.
        for f in crate::catalogue::FIELDS {
            if ![
                "upstream_start_ms",
                "auth_ms",
                "distribution_ms",
                "body_read_ms",
                "upstream_headers_ms",
                "first_response_ms",
            ]
            .contains(&f.name)
            {
                lf = lf.with_column(
                    lit(NULL)
                        .cast(crate::source::dtype_of(f.kind))
                        .alias(f.name),
                );
            }
        }
        let out = apply(&rules, lf).collect().unwrap();
        let f = |c: &str| -> Vec<Option<f64>> {
            let s = out.column(c).unwrap().f64().unwrap().clone();
            (0..s.len()).map(|i| s.get(i)).collect()
        };
        let b = |c: &str| -> Vec<Option<bool>> {
            let s = out.column(c).unwrap().bool().unwrap().clone();
            (0..s.len()).map(|i| s.get(i)).collect()
        };
        assert_eq!(f("t1_offset_ms"), [Some(12.0), Some(10.0), None]);
        assert_eq!(
            b("t1_offset_ms_estimated"),
            [Some(false), Some(true), Some(false)]
        );
        assert_eq!(f("prefill_ms"), [Some(788.0), Some(790.0), None]);
        assert_eq!(
            b("prefill_ms_estimated"),
            [Some(false), Some(true), Some(false)]
        );
    }
}
