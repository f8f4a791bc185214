//! The rule language's types and its checker. An expression (SQL syntax, parsed by
//! `sqlparser`) is checked against the field catalogue and turned into a small typed tree
//! (`Node`). The checker is where the same-origin rule lives: subtracting or comparing two
//! time points that count from different origins is a type error, as is comparing a
//! latency with a token count.

use std::collections::BTreeMap;
use std::fmt;

use sqlparser::ast::Spanned as _;
use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget,
    ObjectNamePart, UnaryOperator, Value,
};
use sqlparser::tokenizer::Span;

use crate::catalogue::{self, Event, Kind};

/// The type of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// Milliseconds since `origin`; `marks` is the event when it is one known point.
    Point {
        origin: Event,
        marks: Option<Event>,
    },
    /// A duration in milliseconds with no origin (a local phase, or a same-origin delta).
    Span,
    /// Tokens per second (or per millisecond: the unit of a rate is the author's to scale).
    Rate,
    Count,
    Code,
    /// A percentage, 0–100: compared with a `pct` parameter, never with a ratio.
    Percent,
    /// A `ratio` parameter (0–1): a number that must never meet a percentage.
    Ratio,
    /// A plain number: a literal, a ratio of two like quantities.
    Number,
    Bool,
    Label,
    Timestamp,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Point { origin, marks } => match marks {
                Some(m) => write!(
                    f,
                    "time point {}→{} (ms since {origin})",
                    origin.short(),
                    m.short()
                ),
                None => write!(f, "time point (ms since {origin})"),
            },
            Ty::Span => f.write_str("duration (ms)"),
            Ty::Rate => f.write_str("rate (tokens/s)"),
            Ty::Count => f.write_str("count"),
            Ty::Code => f.write_str("code"),
            Ty::Percent => f.write_str("percentage"),
            Ty::Ratio => f.write_str("ratio (0–1)"),
            Ty::Number => f.write_str("number"),
            Ty::Bool => f.write_str("boolean"),
            Ty::Label => f.write_str("label"),
            Ty::Timestamp => f.write_str("timestamp"),
        }
    }
}

impl Ty {
    pub fn from_kind(kind: Kind) -> Ty {
        match kind {
            Kind::Point { origin, marks } => Ty::Point {
                origin,
                marks: Some(marks),
            },
            Kind::Phase | Kind::Duration => Ty::Span,
            Kind::Percent => Ty::Percent,
            Kind::Ratio => Ty::Ratio,
            Kind::Rate => Ty::Rate,
            Kind::Count => Ty::Count,
            Kind::Code => Ty::Code,
            Kind::Label => Ty::Label,
            Kind::Flag => Ty::Bool,
            Kind::Timestamp => Ty::Timestamp,
        }
    }

    /// A parameter's unit, as written in the rule file.
    pub fn from_unit(unit: &str) -> Option<Ty> {
        match unit {
            "ms" => Some(Ty::Span),
            "tps" => Some(Ty::Rate),
            "ratio" => Some(Ty::Ratio),
            "tokens" => Some(Ty::Count),
            "pct" => Some(Ty::Percent),
            "count" => Some(Ty::Count),
            _ => None,
        }
    }

    fn is_time(self) -> bool {
        matches!(self, Ty::Point { .. } | Ty::Span)
    }

    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Ty::Point { .. }
                | Ty::Span
                | Ty::Rate
                | Ty::Count
                | Ty::Percent
                | Ty::Ratio
                | Ty::Number
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl Cmp {
    /// The operator as SQL writes it (and as `explain` shows a condition).
    pub fn sql(self) -> &'static str {
        match self {
            Cmp::Eq => "=",
            Cmp::NotEq => "<>",
            Cmp::Lt => "<",
            Cmp::LtEq => "<=",
            Cmp::Gt => ">",
            Cmp::GtEq => ">=",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    Coalesce,
    Greatest,
    Least,
    Abs,
}

/// A checked expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Field(String),
    Metric(String),
    Param(String),
    Num(f64),
    Str(String),
    Bool(bool),
    Arith(Arith, Box<Node>, Box<Node>),
    Cmp(Cmp, Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Neg(Box<Node>),
    IsNull {
        expr: Box<Node>,
        negated: bool,
    },
    /// `x IS [NOT] TRUE|FALSE`: never null (SQL three-valued logic made explicit).
    Truth {
        expr: Box<Node>,
        value: bool,
        negated: bool,
    },
    InList {
        expr: Box<Node>,
        list: Vec<Node>,
        negated: bool,
    },
    /// `estimated` is set when a time point is coalesced with a fallback duration: rows
    /// that take the fallback carry an estimate, and every figure built on it says so.
    Call {
        func: Func,
        args: Vec<Node>,
        estimated: bool,
    },
}

impl Node {
    /// The expressions this one is built from, in order (none for a name or a literal).
    pub fn children(&self) -> Vec<&Node> {
        match self {
            Node::Field(_)
            | Node::Metric(_)
            | Node::Param(_)
            | Node::Num(_)
            | Node::Str(_)
            | Node::Bool(_) => vec![],
            Node::Arith(_, a, b) | Node::Cmp(_, a, b) | Node::And(a, b) | Node::Or(a, b) => {
                vec![a, b]
            }
            Node::Not(a) | Node::Neg(a) => vec![a],
            Node::IsNull { expr, .. } | Node::Truth { expr, .. } => vec![expr],
            Node::InList { expr, list, .. } => {
                let mut v = vec![expr.as_ref()];
                v.extend(list);
                v
            }
            Node::Call { args, .. } => args.iter().collect(),
        }
    }

    /// Whether the expression can have a value in any row, when a field `field` rejects is
    /// null in every row and a metric `metric` rejects likewise: SQL's null propagation
    /// read off the tree. `coalesce` needs one argument with a value, `AND`/`OR` one side
    /// (`FALSE AND NULL` is `FALSE`), `IS [NOT] NULL` and `IS [NOT] TRUE` always have one;
    /// everything else needs all of its parts (greatest/least are null when an argument is).
    pub fn may_have_value(
        &self,
        field: &dyn Fn(&str) -> bool,
        metric: &dyn Fn(&str) -> bool,
    ) -> bool {
        let any = || {
            self.children()
                .iter()
                .any(|c| c.may_have_value(field, metric))
        };
        match self {
            Node::Field(f) => field(f),
            Node::Metric(m) => metric(m),
            Node::IsNull { .. } | Node::Truth { .. } => true,
            Node::And(..) | Node::Or(..) => any(),
            Node::Call {
                func: Func::Coalesce,
                ..
            } => any(),
            _ => self
                .children()
                .iter()
                .all(|c| c.may_have_value(field, metric)),
        }
    }
}

/// A type error, located by the span of the expression text it concerns.
#[derive(Debug, Clone)]
pub struct CheckError {
    pub span: Span,
    pub message: String,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl CheckError {
    fn new(span: Span, message: impl Into<String>) -> Self {
        CheckError {
            span,
            message: message.into(),
            notes: vec![],
            help: None,
        }
    }
    fn note(mut self, n: impl Into<String>) -> Self {
        self.notes.push(n.into());
        self
    }
    fn help(mut self, h: impl Into<String>) -> Self {
        self.help = Some(h.into());
        self
    }
}

/// Names visible to an expression besides catalogue fields.
pub struct Scope<'a> {
    /// Where field names are looked up.
    pub catalogue: catalogue::Catalogue,
    /// Metrics already typed.
    pub metrics: &'a BTreeMap<String, Ty>,
    /// Metric names that exist but are not typed yet (forward references resolve first).
    pub pending: &'a dyn Fn(&str, Span) -> Result<Ty, CheckError>,
    pub params: &'a BTreeMap<String, Ty>,
}

/// Check `expr` and return its typed tree.
pub fn check(expr: &Expr, scope: &Scope) -> Result<(Node, Ty), CheckError> {
    Checker { scope }.expr(expr)
}

struct Checker<'a, 'b> {
    scope: &'a Scope<'b>,
}

fn text(e: &Expr) -> String {
    format!("`{e}`")
}

/// Where a time point counts from, in words, for error notes.
fn origin_note(e: &Expr, ty: Ty) -> String {
    match ty {
        Ty::Point { origin, .. } => format!("{} counts from {origin}", text(e)),
        other => format!("{} is a {other}", text(e)),
    }
}

fn conversion_help(a: Ty, b: Ty) -> String {
    let t1 = matches!(
        a,
        Ty::Point {
            origin: Event::T1,
            ..
        }
    ) || matches!(
        b,
        Ty::Point {
            origin: Event::T1,
            ..
        }
    );
    if t1 {
        "convert the t1-origin side to t0 first: `upstream_headers_ms + t1_offset_ms` counts from t0 \
         (t1_offset_ms is exact when upstream_start_ms is logged, otherwise estimated from the local phases)"
            .into()
    } else {
        "subtract or compare only points that count from the same origin".into()
    }
}

impl Checker<'_, '_> {
    fn expr(&self, e: &Expr) -> Result<(Node, Ty), CheckError> {
        match e {
            Expr::Nested(inner) => self.expr(inner),
            Expr::Identifier(id) => self.ident(&id.value, e.span()),
            Expr::CompoundIdentifier(parts) => {
                let name = parts
                    .iter()
                    .map(|p| p.value.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                Err(CheckError::new(e.span(), format!("unknown name `{name}`"))
                    .help("fields are referred to by their canonical names, e.g. `first_response_ms` (see `tracediag fields`)"))
            }
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => n
                    .parse::<f64>()
                    .map(|x| (Node::Num(x), Ty::Number))
                    .map_err(|_| CheckError::new(e.span(), format!("`{n}` is not a number"))),
                Value::SingleQuotedString(s) => Ok((Node::Str(s.clone()), Ty::Label)),
                Value::Boolean(b) => Ok((Node::Bool(*b), Ty::Bool)),
                other => Err(CheckError::new(
                    e.span(),
                    format!("unsupported literal `{other}`: expected a number, a 'string', TRUE or FALSE"),
                )),
            },
            Expr::UnaryOp { op, expr } => {
                let (n, t) = self.expr(expr)?;
                match op {
                    UnaryOperator::Not => {
                        self.want_bool(expr, t)?;
                        Ok((Node::Not(Box::new(n)), Ty::Bool))
                    }
                    UnaryOperator::Minus => {
                        if let Ty::Point { .. } = t {
                            // -p is p scaled by -1: it would be a duration that forgot its origin.
                            return Err(scaled_point(e, "negate", expr, t));
                        }
                        if !t.is_numeric() {
                            return Err(CheckError::new(e.span(), format!("cannot negate {}: it is a {t}", text(expr))));
                        }
                        Ok((Node::Neg(Box::new(n)), t))
                    }
                    UnaryOperator::Plus => Ok((n, t)),
                    other => Err(CheckError::new(e.span(), format!("unsupported operator `{other}`"))),
                }
            }
            Expr::BinaryOp { left, op, right } => self.binary(e, left, op, right),
            Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
                let (n, _) = self.expr(inner)?;
                Ok((
                    Node::IsNull {
                        expr: Box::new(n),
                        negated: matches!(e, Expr::IsNotNull(_)),
                    },
                    Ty::Bool,
                ))
            }
            Expr::IsTrue(inner) | Expr::IsNotTrue(inner) | Expr::IsFalse(inner) | Expr::IsNotFalse(inner) => {
                let (n, t) = self.expr(inner)?;
                self.want_bool(inner, t)?;
                let value = matches!(e, Expr::IsTrue(_) | Expr::IsNotTrue(_));
                let negated = matches!(e, Expr::IsNotTrue(_) | Expr::IsNotFalse(_));
                Ok((Node::Truth { expr: Box::new(n), value, negated }, Ty::Bool))
            }
            Expr::In { expr, target, negated, .. } => {
                let (n, t) = self.expr(expr)?;
                let InTarget::List(items) = target else {
                    return Err(CheckError::new(e.span(), "IN takes a list of literals, e.g. `outcome IN ('error', 'timeout')`"));
                };
                let mut list = vec![];
                for item in items {
                    let (ni, ti) = self.expr(item)?;
                    if !matches!(ni, Node::Num(_) | Node::Str(_) | Node::Bool(_)) {
                        return Err(CheckError::new(item.span(), format!("IN lists hold literals; found {}", text(item))));
                    }
                    self.comparable(e, expr, t, item, ti)?;
                    list.push(ni);
                }
                Ok((Node::InList { expr: Box::new(n), list, negated: *negated }, Ty::Bool))
            }
            Expr::Between { expr, negated, low, high } => {
                // a BETWEEN l AND h  ≡  a >= l AND a <= h, with the same checks.
                let (n, t) = self.expr(expr)?;
                let (nl, tl) = self.expr(low)?;
                let (nh, th) = self.expr(high)?;
                self.comparable(e, expr, t, low, tl)?;
                self.comparable(e, expr, t, high, th)?;
                let within = Node::And(
                    Box::new(Node::Cmp(Cmp::GtEq, Box::new(n.clone()), Box::new(nl))),
                    Box::new(Node::Cmp(Cmp::LtEq, Box::new(n), Box::new(nh))),
                );
                let node = if *negated { Node::Not(Box::new(within)) } else { within };
                Ok((node, Ty::Bool))
            }
            Expr::Function(f) => self.function(e, f),
            other => Err(CheckError::new(
                other.span(),
                format!("unsupported expression {}", text(other)),
            )
            .help("the rule language has names, numbers, 'strings', + - * /, comparisons, AND/OR/NOT, IS [NOT] NULL, IS [NOT] TRUE/FALSE, IN, BETWEEN and coalesce/greatest/least/abs/elapsed (rules/README.md)")),
        }
    }

    fn ident(&self, name: &str, span: Span) -> Result<(Node, Ty), CheckError> {
        if let Some(f) = self.scope.catalogue.field(name) {
            if self.scope.catalogue == catalogue::Catalogue::Gateway
                && catalogue::is_identifier(name)
            {
                // The rules see salted hashes (a random salt by default): a condition on
                // an identifier would classify differently from run to run.
                return Err(CheckError::new(
                    span,
                    format!("`{name}` is a client identifier: rules cannot use it"),
                )
                .help("client identifiers are replaced with salted hashes before the rules run (unless --keep-ids); classify by timing, model, channel or status, and use `--by` to see clients"));
            }
            return Ok((Node::Field(name.to_string()), Ty::from_kind(f.kind)));
        }
        if let Some(t) = self.scope.metrics.get(name) {
            return Ok((Node::Metric(name.to_string()), *t));
        }
        if let Some(t) = self.scope.params.get(name) {
            return Ok((Node::Param(name.to_string()), *t));
        }
        match (self.scope.pending)(name, span) {
            Ok(t) => Ok((Node::Metric(name.to_string()), t)),
            Err(err) => Err(err),
        }
    }

    fn want_bool(&self, e: &Expr, t: Ty) -> Result<(), CheckError> {
        if t == Ty::Bool {
            Ok(())
        } else {
            Err(CheckError::new(
                e.span(),
                format!(
                    "expected a condition (true/false), found {}: a {t}",
                    text(e)
                ),
            ))
        }
    }

    fn binary(
        &self,
        whole: &Expr,
        left: &Expr,
        op: &BinaryOperator,
        right: &Expr,
    ) -> Result<(Node, Ty), CheckError> {
        let (ln, lt) = self.expr(left)?;
        let (rn, rt) = self.expr(right)?;
        if matches!(
            (lt, rt),
            (Ty::Percent, Ty::Ratio) | (Ty::Ratio, Ty::Percent)
        ) {
            return Err(self.mismatch(whole, "combine", left, lt, right, rt).help(
                "a percentage runs 0–100 and a ratio 0–1: give the parameter `unit = \"pct\"`",
            ));
        }
        // Past that check a ratio is a plain number.
        let plain = |t: Ty| if t == Ty::Ratio { Ty::Number } else { t };
        let (lt, rt) = (plain(lt), plain(rt));
        let (l, r) = (Box::new(ln), Box::new(rn));
        let cmp = |c: Cmp| -> Result<(Node, Ty), CheckError> {
            self.comparable(whole, left, lt, right, rt)?;
            Ok((Node::Cmp(c, l.clone(), r.clone()), Ty::Bool))
        };
        match op {
            BinaryOperator::And | BinaryOperator::Or => {
                self.want_bool(left, lt)?;
                self.want_bool(right, rt)?;
                let node = if *op == BinaryOperator::And {
                    Node::And(l, r)
                } else {
                    Node::Or(l, r)
                };
                Ok((node, Ty::Bool))
            }
            BinaryOperator::Eq => cmp(Cmp::Eq),
            BinaryOperator::NotEq => cmp(Cmp::NotEq),
            BinaryOperator::Lt => cmp(Cmp::Lt),
            BinaryOperator::LtEq => cmp(Cmp::LtEq),
            BinaryOperator::Gt => cmp(Cmp::Gt),
            BinaryOperator::GtEq => cmp(Cmp::GtEq),
            BinaryOperator::Plus => Ok((
                Node::Arith(Arith::Add, l, r),
                self.add(whole, left, lt, right, rt)?,
            )),
            BinaryOperator::Minus => Ok((
                Node::Arith(Arith::Sub, l, r),
                self.sub(whole, left, lt, right, rt)?,
            )),
            BinaryOperator::Multiply => Ok((
                Node::Arith(Arith::Mul, l, r),
                self.mul(whole, left, lt, right, rt)?,
            )),
            BinaryOperator::Divide => Ok((
                Node::Arith(Arith::Div, l, r),
                self.div(whole, left, lt, right, rt)?,
            )),
            other => Err(CheckError::new(
                whole.span(),
                format!("unsupported operator `{other}`"),
            )),
        }
    }

    fn mismatch(
        &self,
        whole: &Expr,
        what: &str,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> CheckError {
        CheckError::new(
            whole.span(),
            format!(
                "unit mismatch: cannot {what} {} and {}",
                text(left),
                text(right)
            ),
        )
        .note(format!("{} is a {lt}", text(left)))
        .note(format!("{} is a {rt}", text(right)))
    }

    fn cross_origin(
        &self,
        whole: &Expr,
        what: &str,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> CheckError {
        CheckError::new(
            whole.span(),
            format!(
                "{what} time points of different origins: {} and {}",
                text(left),
                text(right)
            ),
        )
        .note(origin_note(left, lt))
        .note(origin_note(right, rt))
        .help(conversion_help(lt, rt))
    }

    fn comparable(
        &self,
        whole: &Expr,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> Result<(), CheckError> {
        use Ty::*;
        if matches!((lt, rt), (Percent, Ratio) | (Ratio, Percent)) {
            return Err(self.mismatch(whole, "compare", left, lt, right, rt).help(
                "a percentage runs 0–100 and a ratio 0–1: give the parameter `unit = \"pct\"`",
            ));
        }
        let plain = |t: Ty| if t == Ratio { Number } else { t };
        let ok = match (plain(lt), plain(rt)) {
            (Point { origin: a, .. }, Point { origin: b, .. }) => {
                if a != b {
                    return Err(self.cross_origin(whole, "comparing", left, lt, right, rt));
                }
                true
            }
            // A time point compared with a duration or a plain number compares magnitudes.
            (a, b) if a.is_time() && (b.is_time() || b == Number) => true,
            (a, b) if b.is_time() && a == Number => true,
            (Rate, Rate) | (Rate, Number) | (Number, Rate) => true,
            (Percent, Percent) | (Percent, Number) | (Number, Percent) => true,
            (Count, Count) | (Count, Number) | (Number, Count) => true,
            (Code, Code) | (Code, Number) | (Number, Code) => true,
            (Number, Number) | (Label, Label) | (Bool, Bool) | (Timestamp, Timestamp) => true,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.mismatch(whole, "compare", left, lt, right, rt))
        }
    }

    fn add(
        &self,
        whole: &Expr,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> Result<Ty, CheckError> {
        use Ty::*;
        Ok(match (lt, rt) {
            // Composition: (t1→t2 since t1) + (t0→t1 since t0) = t2 since t0.
            (
                Point {
                    origin: o1,
                    marks: m1,
                },
                Point {
                    origin: o2,
                    marks: m2,
                },
            ) => {
                if m2 == Some(o1) {
                    Point {
                        origin: o2,
                        marks: m1,
                    }
                } else if m1 == Some(o2) {
                    Point {
                        origin: o1,
                        marks: m2,
                    }
                } else {
                    return Err(CheckError::new(
                        whole.span(),
                        format!("cannot add two time points {} and {}", text(left), text(right)),
                    )
                    .note(origin_note(left, lt))
                    .note(origin_note(right, rt))
                    .help("adding points only makes sense to move one to another origin: a t1-origin point plus the t0→t1 offset (`t1_offset_ms`) counts from t0"));
                }
            }
            (Point { origin, .. }, b) if b == Span || b == Number => Point {
                origin,
                marks: None,
            },
            (a, Point { origin, .. }) if a == Span || a == Number => Point {
                origin,
                marks: None,
            },
            _ => like_with_like(lt, rt)
                .ok_or_else(|| self.mismatch(whole, "add", left, lt, right, rt))?,
        })
    }

    fn sub(
        &self,
        whole: &Expr,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> Result<Ty, CheckError> {
        use Ty::*;
        Ok(match (lt, rt) {
            (Point { origin: a, .. }, Point { origin: b, .. }) => {
                if a != b {
                    return Err(self.cross_origin(whole, "subtracting", left, lt, right, rt));
                }
                Span
            }
            (Point { origin, .. }, b) if b == Span || b == Number => Point {
                origin,
                marks: None,
            },
            (Span, Point { .. }) => {
                return Err(CheckError::new(
                    whole.span(),
                    format!(
                        "cannot subtract a time point {} from a duration {}",
                        text(right),
                        text(left)
                    ),
                ))
            }
            _ => like_with_like(lt, rt)
                .ok_or_else(|| self.mismatch(whole, "subtract", left, lt, right, rt))?,
        })
    }

    fn mul(
        &self,
        whole: &Expr,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> Result<Ty, CheckError> {
        use Ty::*;
        if let Some((e, t)) = point_operand(left, lt, right, rt) {
            return Err(scaled_point(whole, "multiply", e, t));
        }
        Ok(match (lt, rt) {
            (Span, Number) | (Number, Span) => Span,
            // A per-token duration times a token count (TBT × tokens) is a duration.
            (a, Count) | (Count, a) if a == Span => Span,
            (Count, Number) | (Number, Count) => Count,
            (Rate, Number) | (Number, Rate) => Rate,
            (Percent, Number) | (Number, Percent) => Percent,
            (Number, Number) => Number,
            _ => return Err(self.mismatch(whole, "multiply", left, lt, right, rt)),
        })
    }

    fn div(
        &self,
        whole: &Expr,
        left: &Expr,
        lt: Ty,
        right: &Expr,
        rt: Ty,
    ) -> Result<Ty, CheckError> {
        use Ty::*;
        if let Ty::Point { .. } = lt {
            return Err(scaled_point(whole, "divide", left, lt));
        }
        if let Ty::Point { .. } = rt {
            return Err(scaled_point(whole, "divide by", right, rt));
        }
        Ok(match (lt, rt) {
            (Span, Number) => Span,
            // A share: the ratio of two durations.
            (Span, Span) => Number,
            // Per-token latency.
            (Span, Count) => Span,
            // Tokens per unit of time.
            (Count, Span) => Rate,
            (Count, Count) | (Rate, Rate) | (Percent, Percent) => Number,
            (Percent, Number) => Percent,
            (Count, Number) => Count,
            (Rate, Number) => Rate,
            (Number, Number) => Number,
            _ => return Err(self.mismatch(whole, "divide", left, lt, right, rt)),
        })
    }

    /// `elapsed(p)`: the time from a point's origin to it, as a duration. A point's value
    /// already is that time, so the node is the point's own: the conversion is a change of
    /// type only, written out so that a share or a rate of a point is never taken by
    /// accident (and the SQL the table stands for is unchanged).
    fn elapsed(&self, e: &Expr, f: &sqlparser::ast::Function) -> Result<(Node, Ty), CheckError> {
        let arg =
            match &f.args {
                FunctionArguments::List(list) => match list.args.as_slice() {
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(x))] => x,
                    other => {
                        return Err(CheckError::new(
                            e.span(),
                            format!(
                                "`elapsed` takes 1 time point, found {} arguments",
                                other.len()
                            ),
                        ))
                    }
                },
                _ => return Err(CheckError::new(
                    e.span(),
                    "`elapsed` needs a time point in parentheses, e.g. `elapsed(total_handler_ms)`",
                )),
            };
        let (node, t) = self.expr(arg)?;
        match t {
            Ty::Point { .. } => Ok((node, Ty::Span)),
            other => Err(CheckError::new(
                e.span(),
                format!("`elapsed` takes a time point; {} is a {other}", text(arg)),
            )
            .help(format!("use {} as it is", text(arg)))),
        }
    }

    fn function(&self, e: &Expr, f: &sqlparser::ast::Function) -> Result<(Node, Ty), CheckError> {
        let name = match f.name.0.as_slice() {
            [ObjectNamePart::Identifier(id)] => id.value.to_ascii_lowercase(),
            _ => {
                return Err(CheckError::new(
                    e.span(),
                    format!("unknown function `{}`", f.name),
                ))
            }
        };
        // A bare SQL keyword such as `user` parses as a function without parentheses: it
        // is a name.
        if matches!(f.args, FunctionArguments::None) {
            return self.ident(&name, e.span());
        }
        if name == "elapsed" {
            return self.elapsed(e, f);
        }
        let func = match name.as_str() {
            "coalesce" => Func::Coalesce,
            "greatest" => Func::Greatest,
            "least" => Func::Least,
            "abs" => Func::Abs,
            other => {
                let mut err = CheckError::new(e.span(), format!("unknown function `{other}`"))
                    .note("functions: coalesce, greatest, least, abs, elapsed");
                if let Some(s) = nearest(
                    other,
                    ["coalesce", "greatest", "least", "abs", "elapsed"].into_iter(),
                ) {
                    err = err.help(format!("did you mean `{s}`?"));
                }
                return Err(err);
            }
        };
        let FunctionArguments::List(list) = &f.args else {
            return Err(CheckError::new(
                e.span(),
                format!("`{name}` needs arguments in parentheses"),
            ));
        };
        let mut args = vec![];
        for a in &list.args {
            match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => args.push(x),
                _ => {
                    return Err(CheckError::new(
                        e.span(),
                        format!("`{name}` takes plain expressions as arguments"),
                    ))
                }
            }
        }
        let typed: Vec<(Node, Ty)> = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<_, _>>()?;
        if func == Func::Abs {
            if typed.len() != 1 {
                return Err(CheckError::new(
                    e.span(),
                    format!("`abs` takes 1 argument, found {}", typed.len()),
                ));
            }
            let t = match typed[0].1 {
                t @ Ty::Point { .. } => return Err(scaled_point(e, "take `abs` of", args[0], t)),
                t if t.is_numeric() => t,
                t => {
                    return Err(CheckError::new(
                        e.span(),
                        format!("`abs` needs a number, found a {t}"),
                    ))
                }
            };
            let node = Node::Call {
                func,
                args: vec![typed[0].0.clone()],
                estimated: false,
            };
            return Ok((node, t));
        }
        if typed.len() < 2 {
            return Err(CheckError::new(
                e.span(),
                format!("`{name}` takes at least 2 arguments, found {}", typed.len()),
            ));
        }
        // All arguments must be of one type. The one exception makes the t1 offset
        // expressible: coalesce(exact point, fallback duration) is the point, estimated
        // on the rows that take the fallback.
        let first = typed[0].1;
        let mut ty = first;
        let mut estimated = false;
        for (i, (_, t)) in typed.iter().enumerate().skip(1) {
            match (ty, *t) {
                (
                    Ty::Point {
                        origin: a,
                        marks: ma,
                    },
                    Ty::Point {
                        origin: b,
                        marks: mb,
                    },
                ) => {
                    if a != b {
                        return Err(self.cross_origin(
                            e,
                            &format!("`{name}` mixes"),
                            args[0],
                            first,
                            args[i],
                            *t,
                        ));
                    }
                    ty = Ty::Point {
                        origin: a,
                        marks: if ma == mb { ma } else { None },
                    };
                }
                (Ty::Point { .. }, Ty::Span) if func == Func::Coalesce => estimated = true,
                (a, b) if a == b => {}
                (Ty::Number, b) if b.is_numeric() => ty = b,
                (a, Ty::Number) if a.is_numeric() => {}
                (a, b) => {
                    return Err(CheckError::new(
                        e.span(),
                        format!("`{name}` arguments must share one type"),
                    )
                    .note(format!("{} is a {a}", text(args[0])))
                    .note(format!("{} is a {b}", text(args[i]))));
                }
            }
        }
        let node = Node::Call {
            func,
            args: typed.into_iter().map(|(n, _)| n).collect(),
            estimated,
        };
        Ok((node, ty))
    }
}

/// The operand of `left op right` that is a time point, if either is.
fn point_operand<'e>(left: &'e Expr, lt: Ty, right: &'e Expr, rt: Ty) -> Option<(&'e Expr, Ty)> {
    match (lt, rt) {
        (Ty::Point { .. }, _) => Some((left, lt)),
        (_, Ty::Point { .. }) => Some((right, rt)),
        _ => None,
    }
}

/// A time point used where only a quantity may stand (`* / - abs`). Its value is the time
/// since its origin, and any product or quotient of it is a number with that origin
/// forgotten, which a later subtraction could no longer check: `first_text_delta_ms -
/// upstream_headers_ms * 1` would subtract a t1-origin point from a t0-origin one.
fn scaled_point(whole: &Expr, what: &str, point: &Expr, t: Ty) -> CheckError {
    let since = match t {
        Ty::Point {
            origin,
            marks: Some(m),
        } => format!("the duration {}→{}", origin.short(), m.short()),
        Ty::Point { origin, .. } => format!("the duration since {}", origin.short()),
        _ => "a duration".into(),
    };
    CheckError::new(
        whole.span(),
        format!("cannot {what} a time point: {} in {}", text(point), text(whole)),
    )
    .note(origin_note(point, t))
    .note("a time point may only be added to or subtracted from a duration, or subtracted from a point of the same origin")
    .help(format!(
        "for a share or a rate of the time since its origin, write `elapsed({point})` ({since}); \
         for a phase, subtract two points of the same origin first"
    ))
}

/// The sum or difference of two quantities that are not time points: like with like, a
/// plain number taking the other side's unit.
fn like_with_like(a: Ty, b: Ty) -> Option<Ty> {
    use Ty::*;
    match (a, b) {
        (Span, Span) | (Span, Number) | (Number, Span) => Some(Span),
        (Count, Count) | (Count, Number) | (Number, Count) => Some(Count),
        (Rate, Rate) | (Rate, Number) | (Number, Rate) => Some(Rate),
        (Percent, Percent) | (Percent, Number) | (Number, Percent) => Some(Percent),
        (Number, Number) => Some(Number),
        _ => None,
    }
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 4))
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}
