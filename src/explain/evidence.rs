//! Rule conditions as evidence: the names they use, their elementary conditions, and each
//! condition's sides evaluated on the explained rows by the compiled expressions
//! (`ruleset::compile`), the one evaluator of the rule language. Whether a rule matched
//! is read from the frame's `classes`; this only shows why. Conditions print back as SQL.

use polars::prelude::*;

use super::request::exact;
use crate::ruleset::compile::{self, Compiler};
use crate::ruleset::types::{Arith, Func, Node};
use crate::ruleset::Rule;
use crate::ruleset::RuleSet;
use crate::stats;

/// Field, metric and parameter leaves, in order of first use (with repeats).
pub(super) fn leaves<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::Field(_) | Node::Metric(_) | Node::Param(_) => out.push(node),
        Node::Num(_) | Node::Str(_) | Node::Bool(_) => {}
        Node::Arith(_, a, b) | Node::Cmp(_, a, b) | Node::And(a, b) | Node::Or(a, b) => {
            leaves(a, out);
            leaves(b, out);
        }
        Node::Not(a) | Node::Neg(a) => leaves(a, out),
        Node::IsNull { expr, .. } | Node::Truth { expr, .. } => leaves(expr, out),
        Node::InList { expr, list, .. } => {
            leaves(expr, out);
            for l in list {
                leaves(l, out);
            }
        }
        Node::Call { args, .. } => {
            for a in args {
                leaves(a, out);
            }
        }
    }
}

/// The elementary conditions under AND / OR / NOT.
pub(super) fn conditions<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::And(a, b) | Node::Or(a, b) => {
            conditions(a, out);
            conditions(b, out);
        }
        Node::Not(a) => conditions(a, out),
        other => out.push(other),
    }
}

/// A rule's elementary conditions as its evidence lists them: in order, each once.
pub(super) fn atoms(rule: &Rule) -> Vec<&Node> {
    let mut atoms = vec![];
    conditions(&rule.node, &mut atoms);
    let mut seen = std::collections::BTreeSet::new();
    atoms.retain(|a| seen.insert(sql(a)));
    atoms
}

/// The parts of a condition its evidence shows.
#[derive(Clone, Copy)]
pub(super) enum Side {
    /// A comparison's left side, or the tested expression.
    Left,
    /// A comparison's right side.
    Right,
    /// The condition itself: true, false or null.
    Result,
}

/// The column of `checks_frame` holding `side` of rule `r`'s condition `k` (`atoms`).
pub(super) fn check_column(r: usize, k: usize, side: Side) -> String {
    let side = match side {
        Side::Left => "left",
        Side::Right => "right",
        Side::Result => "result",
    };
    format!("__check_{r}_{k}_{side}")
}

/// Every rule's conditions evaluated on `rows` (the few explained), by the same compiled
/// expressions that classify the log: the evidence shown is the evaluation that matched.
pub(super) fn checks_frame(rules: &RuleSet, rows: &DataFrame) -> PolarsResult<DataFrame> {
    let params = rules.param_values();
    let estimated = compile::estimated_metrics(rules);
    let c = Compiler::new(&params, &estimated);
    let mut exprs = vec![];
    for (r, rule) in rules.rules.iter().enumerate() {
        for (k, atom) in atoms(rule).into_iter().enumerate() {
            let (left, right) = match atom {
                Node::Cmp(_, a, b) => (a.as_ref(), Some(b.as_ref())),
                Node::IsNull { expr, .. }
                | Node::Truth { expr, .. }
                | Node::InList { expr, .. } => (expr.as_ref(), None),
                other => (other, None),
            };
            exprs.push(c.value(left).alias(check_column(r, k, Side::Left)));
            if let Some(right) = right {
                exprs.push(c.value(right).alias(check_column(r, k, Side::Right)));
            }
            exprs.push(c.value(atom).alias(check_column(r, k, Side::Result)));
        }
    }
    if exprs.is_empty() {
        return Ok(DataFrame::empty());
    }
    stats::collect(rows.clone().lazy().select(exprs))
}

fn precedence(node: &Node) -> u8 {
    match node {
        Node::Or(..) => 1,
        Node::And(..) => 2,
        Node::Not(..) => 3,
        Node::Cmp(..) | Node::IsNull { .. } | Node::Truth { .. } | Node::InList { .. } => 4,
        Node::Arith(Arith::Add | Arith::Sub, ..) => 5,
        Node::Arith(Arith::Mul | Arith::Div, ..) => 6,
        Node::Neg(..) => 7,
        _ => 8,
    }
}

/// An expression back as SQL text (parenthesised only where precedence needs it).
pub fn sql(node: &Node) -> String {
    render(node, 0)
}

fn render(node: &Node, min: u8) -> String {
    let p = precedence(node);
    let s = match node {
        Node::Field(n) | Node::Metric(n) | Node::Param(n) => n.clone(),
        Node::Num(x) => exact(*x),
        Node::Str(s) => format!("'{}'", s.replace('\'', "''")),
        Node::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        Node::Arith(op, a, b) => {
            let o = match op {
                Arith::Add => "+",
                Arith::Sub => "-",
                Arith::Mul => "*",
                Arith::Div => "/",
            };
            format!("{} {o} {}", render(a, p), render(b, p + 1))
        }
        Node::Cmp(op, a, b) => format!("{} {} {}", render(a, 5), op.sql(), render(b, 5)),
        Node::And(a, b) => format!("{} AND {}", render(a, p), render(b, p + 1)),
        Node::Or(a, b) => format!("{} OR {}", render(a, p), render(b, p + 1)),
        Node::Not(a) => format!("NOT {}", render(a, p)),
        Node::Neg(a) => format!("-{}", render(a, p + 1)),
        Node::IsNull { expr, negated } => format!(
            "{} IS {}NULL",
            render(expr, 5),
            if *negated { "NOT " } else { "" }
        ),
        Node::Truth {
            expr,
            value,
            negated,
        } => format!(
            "{} IS {}{}",
            render(expr, 5),
            if *negated { "NOT " } else { "" },
            if *value { "TRUE" } else { "FALSE" }
        ),
        Node::InList {
            expr,
            list,
            negated,
        } => format!(
            "{} {}IN ({})",
            render(expr, 5),
            if *negated { "NOT " } else { "" },
            list.iter()
                .map(|l| render(l, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Node::Call { func, args, .. } => format!(
            "{}({})",
            match func {
                Func::Coalesce => "coalesce",
                Func::Greatest => "greatest",
                Func::Least => "least",
                Func::Abs => "abs",
            },
            args.iter()
                .map(|a| render(a, 0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if p < min {
        format!("({s})")
    } else {
        s
    }
}
