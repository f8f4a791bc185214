//! Rule tables: loading a TOML rule file, checking every expression against the field
//! catalogue (origins, units, names), and holding the result in table order.
//!
//! The language itself is SQL expression syntax parsed by `sqlparser` (see
//! `rules/README.md`); `sql` writes a checked table as a query for DuckDB, Spark or Trino.

pub mod compile;
mod file;
pub mod like;
pub mod sql;
pub mod tables;
pub mod timeline;
pub mod types;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use sqlparser::dialect::GenericDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Span, Token, Tokenizer};

use crate::catalogue::Catalogue;
use crate::error::{Error, Result, RuleError};
use file::RuleFile;
use types::{CheckError, Scope};
pub use types::{Node, Ty};

/// The shipped gateway table, compiled into the binary so `tracediag analyze` works from
/// anywhere; `--rules FILE` replaces it.
pub const GATEWAY_TOML: &str = include_str!("../../rules/gateway.toml");
pub const GATEWAY_PATH: &str = "rules/gateway.toml";
/// The shipped Azure Monitor table.
pub const AZURE_TOML: &str = include_str!("../../rules/azure.toml");
pub const AZURE_PATH: &str = "rules/azure.toml";

/// A request's end-to-end time where a table names none: the gateway's t0→t7.
pub const DEFAULT_END_TO_END: &str = "total_handler_ms";

/// The most names, numbers, operators and parentheses one expression may have. The shipped
/// tables' longest has a few dozen; the limit keeps the expression tree shallow enough to
/// walk recursively (see `parse_expr`).
pub const MAX_EXPR_TOKENS: usize = 300;

#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub doc: String,
    /// The table (`RuleSet::parts`) it belongs to.
    pub part: usize,
}

#[derive(Debug, Clone)]
pub struct Metric {
    pub name: String,
    pub expr: String,
    pub node: Node,
    pub ty: Ty,
    pub doc: String,
    pub label: Option<String>,
    /// The table (`RuleSet::parts`) it belongs to.
    pub part: usize,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub class: String,
    pub order: i64,
    pub when: String,
    pub node: Node,
    pub look_at: String,
    pub layer: String,
    pub next_check: String,
    pub detects: String,
    pub why: String,
    /// The gateway table's finer classes this one cannot tell apart (a coarser clock's).
    pub covers: Vec<String>,
    /// What to log to tell them apart.
    pub tell_apart: String,
    /// The table (`RuleSet::parts`) it belongs to.
    pub part: usize,
}

/// One rule file of a set: a set loaded from one file has one part; the shipped tables,
/// merged (`tables::shipped`), have one per clock, and each input is classified by one.
#[derive(Debug, Clone)]
pub struct Part {
    pub name: String,
    pub source: String,
    pub description: String,
    /// The file's text, exactly as loaded (`rules --emit toml`).
    pub text: String,
    /// The fields that make an input this table's (empty: any input).
    pub applies_to: Vec<String>,
    /// The field or metric that is a request's end-to-end time on its clock.
    pub end_to_end: String,
    /// The metrics and parameters its file defines: a set keeps one definition of a name
    /// two tables share, under the first, and each table still has it.
    pub defines: BTreeSet<String>,
}

/// A loaded, checked rule table.
#[derive(Debug, Clone)]
pub struct RuleSet {
    /// Where it came from, as given (used in reports).
    pub source: String,
    /// The file's text, exactly as loaded: what `tracediag rules --emit toml` prints, for a
    /// user to copy and edit.
    pub text: String,
    /// The fields its expressions are written against.
    pub catalogue: Catalogue,
    pub name: String,
    pub description: String,
    pub default_class: String,
    pub params: Vec<Param>,
    /// In dependency order: every metric comes after the metrics it uses.
    pub metrics: Vec<Metric>,
    /// In table order (a merged set: each table's in turn).
    pub rules: Vec<Rule>,
    /// The tables it is made of, in the order an input is matched against them.
    pub parts: Vec<Part>,
    /// The `--set` overrides applied, as `name=value`, in the order given.
    pub overrides: Vec<String>,
    /// Position of each metric in the file, for display order.
    metric_file_order: BTreeMap<String, usize>,
}

impl RuleSet {
    /// The shipped gateway table (checked by the tests, but still a `Result`: a broken
    /// build of the table is reported, never a panic).
    pub fn gateway() -> Result<RuleSet> {
        RuleSet::parse(GATEWAY_TOML, GATEWAY_PATH)
    }

    /// The shipped Azure Monitor table.
    pub fn azure() -> Result<RuleSet> {
        RuleSet::parse(AZURE_TOML, AZURE_PATH)
    }

    pub fn load(path: &Path) -> Result<RuleSet> {
        let src = std::fs::read_to_string(path)
            .map_err(|e| Error::input(path, format!("cannot read rule file: {e}")))?;
        RuleSet::parse(&src, &path.display().to_string())
    }

    /// Parse and check a rule file's text; `file` names it in errors.
    pub fn parse(src: &str, file: &str) -> Result<RuleSet> {
        Loader {
            src,
            file,
            catalogue: std::cell::Cell::new(Catalogue::Gateway),
        }
        .load()
        .map_err(Error::from)
    }

    /// Current parameter values by name.
    pub fn param_values(&self) -> BTreeMap<String, f64> {
        self.params
            .iter()
            .map(|p| (p.name.clone(), p.value))
            .collect()
    }

    /// Override a parameter (`--set name=value`).
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<()> {
        match self.params.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.value = value;
                self.overrides.push(format!("{name}={value}"));
                Ok(())
            }
            None => {
                let mut msg = match self.parts.len() {
                    1 => format!(
                        "--set: the rule table `{}` has no parameter `{name}`",
                        self.name
                    ),
                    _ => format!("--set: no shipped rule table has a parameter `{name}`"),
                };
                if let Some(s) = types::nearest(name, self.params.iter().map(|p| p.name.as_str())) {
                    msg.push_str(&format!("; did you mean `{s}`?"));
                }
                Err(Error::Usage(msg))
            }
        }
    }

    /// The same table with only the rule for `class` (its metrics and params kept): how
    /// each class is tested on its own.
    pub fn only(&self, class: &str) -> Option<RuleSet> {
        let rule = self.rules.iter().find(|r| r.class == class)?.clone();
        Some(RuleSet {
            rules: vec![rule],
            ..self.clone()
        })
    }

    /// Every class the table can give, in table order, the default class last.
    pub fn class_order(&self) -> Vec<&str> {
        self.rules
            .iter()
            .map(|r| r.class.as_str())
            .chain([self.default_class.as_str()])
            .collect()
    }

    pub fn rule(&self, class: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.class == class)
    }

    /// Metrics reported with percentiles (those with a label), in file order.
    /// The reported metrics that no row can have a value for when only the fields
    /// `present` accepts hold values (the rest are in no input): what a summary leaves out,
    /// naming them, instead of a row of nulls.
    pub fn uncomputable_metrics(&self, present: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut computable: BTreeMap<&str, bool> = BTreeMap::new();
        // Metrics come in dependency order: each one's parts are decided before it.
        for m in &self.metrics {
            let known = |name: &str| computable.get(name).copied().unwrap_or(false);
            let can = m.node.may_have_value(present, &known);
            computable.insert(&m.name, can);
        }
        self.reported_metrics()
            .into_iter()
            .filter(|m| !computable.get(m.name.as_str()).copied().unwrap_or(false))
            .map(|m| m.name.clone())
            .collect()
    }

    /// The metrics built on a field only a tool's adapter fills (`catalogue::ADAPTER_FIELDS`:
    /// a relay's or a benchmark client's clock, say) of a tool no table of the set is for
    /// (by its `applies_to`), in file order: what the emitted SQL leaves out, since a table
    /// of the canonical columns written for another clock has no column for them. A
    /// table of that tool's clock (`rules/relay.toml`) keeps them: its table has them.
    pub fn adapter_metrics(&self) -> Vec<String> {
        use crate::catalogue::adapter_of;
        let claimed: BTreeSet<&str> = self
            .parts
            .iter()
            .flat_map(|p| p.applies_to.iter().filter_map(|f| adapter_of(f)))
            .collect();
        self.metrics
            .iter()
            .filter(|m| {
                self.fields_of(&m.name)
                    .iter()
                    .filter_map(|f| adapter_of(f))
                    .any(|tool| !claimed.contains(tool))
            })
            .map(|m| m.name.clone())
            .collect()
    }

    /// The field and metric names a rule's condition names itself.
    pub fn names_of_rule(&self, rule: &Rule) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut stack = vec![&rule.node];
        while let Some(n) = stack.pop() {
            if let Node::Field(name) | Node::Metric(name) = n {
                out.insert(name.clone());
            }
            stack.extend(n.children());
        }
        out
    }

    /// The class of what a table cannot judge: its rows are counted by the field or
    /// metric each lacks (`Summary`'s classes say what is missing).
    pub const UNJUDGED: &'static str = "insufficient_data";

    /// The fields and metrics an `UNJUDGED` rule tests for `IS NULL`, each once, in the
    /// order the rules name them: what such a request can be missing.
    pub fn unjudged_names(&self) -> Vec<String> {
        let mut out: Vec<String> = vec![];
        for r in self.rules.iter().filter(|r| r.class == Self::UNJUDGED) {
            let mut stack = vec![&r.node];
            let mut found = vec![];
            while let Some(n) = stack.pop() {
                match n {
                    Node::IsNull {
                        expr,
                        negated: false,
                    } => {
                        if let Node::Field(name) | Node::Metric(name) = expr.as_ref() {
                            found.push(name.clone());
                        }
                    }
                    other => stack.extend(other.children().into_iter().rev()),
                }
            }
            for name in found {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        out
    }

    /// The catalogue fields a metric is built from, through the metrics it uses.
    pub fn fields_of(&self, metric: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        if let Some(def) = self.metrics.iter().find(|d| d.name == metric) {
            self.fields_in(&def.node, &mut out);
        }
        out
    }

    /// Adds the catalogue fields `node` reads, through the metrics it uses, to `out`.
    fn fields_in(&self, node: &Node, out: &mut BTreeSet<String>) {
        match node {
            Node::Field(f) => {
                out.insert(f.clone());
            }
            Node::Metric(m) => {
                if let Some(def) = self.metrics.iter().find(|d| d.name == *m) {
                    self.fields_in(&def.node, out);
                }
            }
            n => n
                .children()
                .into_iter()
                .for_each(|c| self.fields_in(c, out)),
        }
    }

    /// The named metrics (those with a label), in file order.
    pub fn reported_metrics(&self) -> Vec<&Metric> {
        let mut v = self.metrics_in_file_order();
        v.retain(|m| m.label.is_some());
        v
    }

    /// Every metric, in the order the file lists them.
    pub fn metrics_in_file_order(&self) -> Vec<&Metric> {
        let mut v: Vec<&Metric> = self.metrics.iter().collect();
        v.sort_by_key(|m| {
            self.metric_file_order
                .get(&m.name)
                .copied()
                .unwrap_or(usize::MAX)
        });
        v
    }
}

struct Loader<'a> {
    src: &'a str,
    file: &'a str,
    /// Set from the file's `catalogue` key before any name is checked.
    catalogue: std::cell::Cell<Catalogue>,
}

/// Position of the first character of a TOML string value's content. Columns inside the
/// expression map 1:1 onto the file as long as the string has no escapes.
struct TextOrigin {
    line: usize,
    column: usize,
}

// Loading stops at the first error, so the size of the error type costs nothing here; the
// public API boxes it (`Error::Rule`).
#[allow(clippy::result_large_err)]
impl Loader<'_> {
    fn error_at(
        &self,
        line: usize,
        column: usize,
        width: usize,
        message: impl Into<String>,
    ) -> RuleError {
        let source_line = self
            .src
            .lines()
            .nth(line.saturating_sub(1))
            .map(|s| s.to_string());
        RuleError {
            file: self.file.to_string(),
            line,
            column,
            width,
            message: message.into(),
            source_line: if line > 0 { source_line } else { None },
            notes: vec![],
            help: None,
        }
    }

    fn line_col(&self, byte: usize) -> (usize, usize) {
        let byte = byte.min(self.src.len());
        let before = &self.src[..byte];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit('\n')
            .next()
            .map(|s| s.chars().count())
            .unwrap_or(0)
            + 1;
        (line, col)
    }

    fn span_error(&self, span: Range<usize>, message: impl Into<String>) -> RuleError {
        let (line, col) = self.line_col(span.start);
        let (end_line, end_col) = self.line_col(span.end);
        let width = if end_line == line {
            end_col.saturating_sub(col).max(1)
        } else {
            1
        };
        self.error_at(line, col, width, message)
    }

    fn text_origin(&self, span: &Range<usize>) -> TextOrigin {
        let raw = &self.src[span.clone()];
        let (line, col) = self.line_col(span.start);
        for q in ["\"\"\"", "'''"] {
            if let Some(rest) = raw.strip_prefix(q) {
                // TOML trims a newline right after the opening quotes.
                if rest.starts_with('\n') || rest.starts_with("\r\n") {
                    return TextOrigin {
                        line: line + 1,
                        column: 1,
                    };
                }
                return TextOrigin {
                    line,
                    column: col + 3,
                };
            }
        }
        TextOrigin {
            line,
            column: col + 1,
        }
    }

    /// Map a location inside an expression's text to file line:column.
    fn map_loc(&self, origin: &TextOrigin, loc: Location) -> (usize, usize) {
        let (l, c) = (loc.line.max(1) as usize, loc.column.max(1) as usize);
        if l == 1 {
            (origin.line, origin.column + c - 1)
        } else {
            (origin.line + l - 1, c)
        }
    }

    fn expr_error(&self, span: &Range<usize>, e: CheckError) -> RuleError {
        let origin = self.text_origin(span);
        let (line, col) = self.map_loc(&origin, e.span.start);
        let width = if e.span.end.line == e.span.start.line {
            (e.span.end.column.saturating_sub(e.span.start.column)) as usize
        } else {
            1
        };
        let mut err = self.error_at(line, col, width.max(1), e.message);
        err.notes = e.notes;
        err.help = e.help;
        err
    }

    /// Names are snake_case and never shadow a log field.
    fn check_name(
        &self,
        name: &toml::Spanned<String>,
        what: &str,
    ) -> std::result::Result<(), RuleError> {
        let n = name.get_ref();
        let snake = n.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && n.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !snake {
            return Err(
                self.span_error(name.span(), format!("{what} name `{n}` must be snake_case"))
            );
        }
        if self.catalogue.get().field(n).is_some() {
            return Err(self.span_error(
                name.span(),
                format!("{what} `{n}` has the name of a log field; pick another name"),
            ));
        }
        Ok(())
    }

    fn parse_expr(
        &self,
        text: &str,
        span: &Range<usize>,
    ) -> std::result::Result<sqlparser::ast::Expr, RuleError> {
        let dialect = GenericDialect {};
        let fail = |msg: String| -> RuleError {
            // sqlparser reports "… at Line: L, Column: C"; point there.
            let origin = self.text_origin(span);
            let loc = parse_location(&msg).unwrap_or(Location { line: 1, column: 1 });
            let (line, col) = self.map_loc(&origin, loc);
            let clean = msg
                .trim_start_matches("sql parser error: ")
                .split(" at Line:")
                .next()
                .unwrap_or(&msg)
                .to_string();
            self.error_at(line, col, 1, format!("syntax error in expression: {clean}"))
        };
        let tokens = Tokenizer::new(&dialect, text)
            .tokenize_with_location()
            .map_err(|e| fail(ParserError::from(e).to_string()))?;
        let refuse = |at: Location, width: usize, message: String| {
            let (line, col) = self.map_loc(&self.text_origin(span), at);
            self.error_at(line, col, width, message)
        };
        // `:=` (a named argument in some SQL dialects) is not part of the rule language, and
        // sqlparser backtracks over it: each nesting of `f(k := a.` doubles the parse time,
        // so a 300-byte expression could run for hours. Refused before parsing.
        if let Some(t) = tokens.iter().find(|t| t.token == Token::Assignment) {
            return Err(refuse(
                t.span.start,
                2,
                "`:=` is not part of the rule language (compare with `=`; functions take no named arguments)".into(),
            ));
        }
        // sqlparser limits nesting (parentheses, prefix operators) but builds a chain of
        // binary operators `a + b + c + …` as a tree as deep as the chain is long, and the
        // checker, the compiler and dropping the tree all recurse over it: 30,000 terms
        // overflowed the main thread's stack. No real rule comes near the limit.
        let mut words = tokens
            .iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF));
        if let Some(extra) = words.nth(MAX_EXPR_TOKENS) {
            return Err(refuse(
                extra.span.start,
                1,
                format!(
                    "expression too long: more than {MAX_EXPR_TOKENS} names, numbers and operators; split it into named metrics"
                ),
            ));
        }
        let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
        let expr = parser.parse_expr().map_err(|e| fail(e.to_string()))?;
        let next = parser.peek_token();
        if next.token != Token::EOF {
            let loc = next.span.start;
            let origin = self.text_origin(span);
            let (line, col) = self.map_loc(&origin, loc);
            return Err(self.error_at(
                line,
                col,
                1,
                format!(
                    "unexpected `{}` after the end of the expression",
                    next.token
                ),
            ));
        }
        Ok(expr)
    }

    fn load(&self) -> std::result::Result<RuleSet, RuleError> {
        let raw: RuleFile = toml::from_str(self.src).map_err(|e| {
            let msg = e.message().trim().to_string();
            match e.span() {
                Some(span) => self.span_error(span, msg),
                None => self.error_at(0, 0, 0, msg),
            }
        })?;
        if let Some(c) = &raw.catalogue {
            let cat = Catalogue::parse(c.get_ref()).ok_or_else(|| {
                self.span_error(
                    c.span(),
                    format!(
                        "unknown catalogue `{}`: expected gateway or azure",
                        c.get_ref()
                    ),
                )
            })?;
            self.catalogue.set(cat);
        }

        // Parameters.
        let mut params = vec![];
        let mut param_types = BTreeMap::new();
        for p in &raw.params {
            let name = p.name.get_ref();
            self.check_name(&p.name, "parameter")?;
            let Some(ty) = Ty::from_unit(p.unit.get_ref()) else {
                return Err(self.span_error(
                    p.unit.span(),
                    format!(
                        "unknown unit `{}`: expected ms, tps, ratio, tokens, count or pct",
                        p.unit.get_ref()
                    ),
                ));
            };
            if param_types.insert(name.clone(), ty).is_some() {
                return Err(self.span_error(
                    p.name.span(),
                    format!("parameter `{name}` is defined twice"),
                ));
            }
            params.push(Param {
                name: name.clone(),
                value: p.value,
                unit: p.unit.get_ref().clone(),
                doc: p.doc.clone(),
                part: 0,
            });
        }

        // Metrics: names first (so expressions may refer to metrics defined later), then
        // type each one, resolving references depth-first and rejecting cycles.
        let mut defs: BTreeMap<String, usize> = BTreeMap::new();
        for (i, m) in raw.metrics.iter().enumerate() {
            let name = m.name.get_ref();
            self.check_name(&m.name, "metric")?;
            if param_types.contains_key(name) {
                return Err(self.span_error(
                    m.name.span(),
                    format!("metric `{name}` has the name of a parameter"),
                ));
            }
            if defs.insert(name.clone(), i).is_some() {
                return Err(
                    self.span_error(m.name.span(), format!("metric `{name}` is defined twice"))
                );
            }
        }
        let mut parsed = vec![];
        for m in &raw.metrics {
            parsed.push(self.parse_expr(m.expr.get_ref(), &m.expr.span())?);
        }

        let state = RefCell::new(MetricState::default());
        let all_names: Vec<String> = self
            .catalogue
            .get()
            .names()
            .into_iter()
            .chain(defs.keys().cloned())
            .chain(param_types.keys().cloned())
            .collect();
        self.resolve_all(&raw, &parsed, &defs, &param_types, &state, &all_names)?;
        let state = state.into_inner();

        let mut metrics = vec![];
        for name in &state.done_order {
            let i = defs[name];
            let m = &raw.metrics[i];
            let (node, ty) = state.typed[name].clone();
            if !ty.is_numeric() {
                return Err(self.span_error(
                    m.expr.span(),
                    format!("metric `{name}` must be a number, found a {ty}"),
                ));
            }
            metrics.push(Metric {
                name: name.clone(),
                expr: m.expr.get_ref().clone(),
                node,
                ty,
                doc: m.doc.clone(),
                label: m.label.clone(),
                part: 0,
            });
        }
        let metric_types: BTreeMap<String, Ty> =
            metrics.iter().map(|m| (m.name.clone(), m.ty)).collect();

        // Rules.
        let default_class = raw.default_class.get_ref().clone();
        self.check_name(&raw.default_class, "class")?;
        let mut rules = vec![];
        let mut classes = BTreeSet::new();
        let mut orders = BTreeMap::new();
        for r in &raw.rules {
            let class = r.class.get_ref();
            self.check_name(&r.class, "class")?;
            if class == &default_class {
                return Err(self.span_error(
                    r.class.span(),
                    format!("`{class}` is the default class; a rule cannot also produce it"),
                ));
            }
            if !classes.insert(class.clone()) {
                return Err(self.span_error(
                    r.class.span(),
                    format!("class `{class}` appears in two rules; each class has one rule"),
                ));
            }
            if let Some(prev) = orders.insert(*r.order.get_ref(), class.clone()) {
                return Err(self.span_error(
                    r.order.span(),
                    format!("order {} is already taken by `{prev}`", r.order.get_ref()),
                ));
            }
            let look = r.look_at.get_ref();
            if self.catalogue.get().field(look).is_none() && !metric_types.contains_key(look) {
                let mut err = self.span_error(
                    r.look_at.span(),
                    format!("look_at names `{look}`, which is neither a field nor a metric"),
                );
                if let Some(s) = types::nearest(look, all_names.iter().map(|s| s.as_str())) {
                    err.help = Some(format!("did you mean `{s}`?"));
                }
                return Err(err);
            }
            let expr = self.parse_expr(r.when.get_ref(), &r.when.span())?;
            let no_pending = |name: &str, span: Span| Err(unknown_name(name, span, &all_names));
            let scope = Scope {
                catalogue: self.catalogue.get(),
                metrics: &metric_types,
                pending: &no_pending,
                params: &param_types,
            };
            let (node, ty) =
                types::check(&expr, &scope).map_err(|e| self.expr_error(&r.when.span(), e))?;
            if ty != Ty::Bool {
                return Err(self.span_error(
                    r.when.span(),
                    format!("a rule's `when` must be a condition (true/false), found a {ty}"),
                ));
            }
            rules.push(Rule {
                class: class.clone(),
                order: *r.order.get_ref(),
                when: r.when.get_ref().clone(),
                node,
                look_at: look.clone(),
                layer: r.layer.clone(),
                next_check: r.next_check.clone(),
                detects: r.detects.clone(),
                why: r.why.clone(),
                covers: r.covers.iter().map(|c| c.get_ref().clone()).collect(),
                tell_apart: r.tell_apart.clone(),
                part: 0,
            });
        }
        rules.sort_by_key(|r| r.order);
        let mut applies_to = vec![];
        for f in &raw.applies_to {
            let name = f.get_ref();
            if self.catalogue.get().field(name).is_none() {
                let mut err = self.span_error(
                    f.span(),
                    format!("applies_to names `{name}`, which is not a log field"),
                );
                let fields = self.catalogue.get().names();
                if let Some(s) = types::nearest(name, fields.iter().map(|s| s.as_str())) {
                    err.help = Some(format!("did you mean `{s}`?"));
                }
                return Err(err);
            }
            applies_to.push(name.clone());
        }

        let metric_file_order = raw
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.get_ref().clone(), i))
            .collect();
        let end_to_end = match &raw.end_to_end {
            None => DEFAULT_END_TO_END.to_string(),
            Some(e) => {
                let name = e.get_ref();
                let ty = match self.catalogue.get().field(name) {
                    Some(f) => Some(Ty::from_kind(f.kind)),
                    None => metric_types.get(name).copied(),
                };
                match ty {
                    Some(Ty::Point { .. } | Ty::Span) => name.clone(),
                    Some(t) => {
                        return Err(self.span_error(
                            e.span(),
                            format!("end_to_end names `{name}`, a {t}: it must be a time"),
                        ))
                    }
                    None => {
                        let mut err = self.span_error(
                            e.span(),
                            format!(
                                "end_to_end names `{name}`, which is neither a field nor a metric"
                            ),
                        );
                        if let Some(s) = types::nearest(name, all_names.iter().map(|s| s.as_str()))
                        {
                            err.help = Some(format!("did you mean `{s}`?"));
                        }
                        return Err(err);
                    }
                }
            }
        };
        let defines = metrics
            .iter()
            .map(|m| m.name.clone())
            .chain(params.iter().map(|p| p.name.clone()))
            .collect();
        let part = Part {
            defines,
            end_to_end,
            name: raw.name.get_ref().clone(),
            source: self.file.to_string(),
            description: raw.description.clone(),
            text: self.src.to_string(),
            applies_to,
        };
        Ok(RuleSet {
            source: self.file.to_string(),
            text: self.src.to_string(),
            catalogue: self.catalogue.get(),
            name: raw.name.get_ref().clone(),
            description: raw.description.clone(),
            default_class,
            params,
            metrics,
            rules,
            parts: vec![part],
            overrides: vec![],
            metric_file_order,
        })
    }

    fn resolve_all(
        &self,
        raw: &RuleFile,
        parsed: &[sqlparser::ast::Expr],
        defs: &BTreeMap<String, usize>,
        params: &BTreeMap<String, Ty>,
        state: &RefCell<MetricState>,
        all_names: &[String],
    ) -> std::result::Result<(), RuleError> {
        for m in &raw.metrics {
            self.resolve(
                m.name.get_ref(),
                raw,
                parsed,
                defs,
                params,
                state,
                all_names,
            )?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve(
        &self,
        name: &str,
        raw: &RuleFile,
        parsed: &[sqlparser::ast::Expr],
        defs: &BTreeMap<String, usize>,
        params: &BTreeMap<String, Ty>,
        state: &RefCell<MetricState>,
        all_names: &[String],
    ) -> std::result::Result<Ty, RuleError> {
        if let Some((_, ty)) = state.borrow().typed.get(name) {
            return Ok(*ty);
        }
        let i = defs[name];
        if let Some(pos) = state.borrow().stack.iter().position(|n| n == name) {
            let cycle: Vec<String> = state.borrow().stack[pos..]
                .iter()
                .cloned()
                .chain([name.to_string()])
                .collect();
            return Err(self.span_error(
                raw.metrics[i].name.span(),
                format!("named metrics form a cycle: {}", cycle.join(" → ")),
            ));
        }
        state.borrow_mut().stack.push(name.to_string());
        let cycle_err: RefCell<Option<RuleError>> = RefCell::new(None);
        let pending = |dep: &str, span: Span| -> std::result::Result<Ty, CheckError> {
            if !defs.contains_key(dep) {
                return Err(unknown_name(dep, span, all_names));
            }
            match self.resolve(dep, raw, parsed, defs, params, state, all_names) {
                Ok(t) => Ok(t),
                Err(e) => {
                    *cycle_err.borrow_mut() = Some(e);
                    Err(CheckError {
                        span,
                        message: String::new(),
                        notes: vec![],
                        help: None,
                    })
                }
            }
        };
        let typed_snapshot: BTreeMap<String, Ty> = BTreeMap::new();
        let scope = Scope {
            catalogue: self.catalogue.get(),
            metrics: &typed_snapshot,
            pending: &pending,
            params,
        };
        let result = types::check(&parsed[i], &scope);
        if let Some(e) = cycle_err.into_inner() {
            return Err(e);
        }
        let (node, ty) = result.map_err(|e| self.expr_error(&raw.metrics[i].expr.span(), e))?;
        let mut st = state.borrow_mut();
        st.stack.pop();
        st.typed.insert(name.to_string(), (node, ty));
        st.done_order.push(name.to_string());
        Ok(ty)
    }
}

#[derive(Default)]
struct MetricState {
    typed: BTreeMap<String, (Node, Ty)>,
    stack: Vec<String>,
    done_order: Vec<String>,
}

fn unknown_name(name: &str, span: Span, all_names: &[String]) -> CheckError {
    let mut e = CheckError {
        span,
        message: format!("unknown name `{name}`: not a log field, a metric or a parameter"),
        notes: vec![],
        help: None,
    };
    if let Some(s) = types::nearest(name, all_names.iter().map(|s| s.as_str())) {
        e.help = Some(format!("did you mean `{s}`?"));
    }
    e
}

fn parse_location(msg: &str) -> Option<Location> {
    let rest = msg.split("Line: ").nth(1)?;
    let mut it = rest.split(", Column: ");
    let line = it.next()?.trim().parse().ok()?;
    let column = it
        .next()?
        .trim()
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()?;
    Some(Location { line, column })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Event;

    fn metric_types(metrics: &str) -> BTreeMap<String, Ty> {
        let src = format!("name = \"t\"\ndefault_class = \"normal\"\n{metrics}");
        RuleSet::parse(&src, "t.toml")
            .unwrap_or_else(|e| panic!("{e}"))
            .metrics
            .into_iter()
            .map(|m| (m.name, m.ty))
            .collect()
    }

    fn table(metrics: &str) -> RuleSet {
        let src = format!("name = \"t\"\ndefault_class = \"normal\"\n{metrics}");
        RuleSet::parse(&src, "t.toml").unwrap()
    }

    #[test]
    fn a_metric_is_uncomputable_exactly_when_null_propagation_leaves_it_no_value() {
        let rules = table(
            r#"
[[metrics]]
name = "gap"
expr = "first_text_delta_ms - first_response_ms"
label = "gap"
doc = "d"
[[metrics]]
name = "either"
expr = "coalesce(upstream_done_ms, total_handler_ms)"
label = "either"
doc = "d"
[[metrics]]
name = "built_on_gap"
expr = "gap * 2"
label = "built on gap"
doc = "d"
"#,
        );
        // Only first_response_ms and total_handler_ms are in any input.
        let present = |f: &str| matches!(f, "first_response_ms" | "total_handler_ms");
        assert_eq!(
            rules.uncomputable_metrics(&present),
            ["gap", "built_on_gap"],
            "a difference needs both sides; coalesce needs one; a metric on an uncomputable one is uncomputable"
        );
        let all = |_: &str| true;
        assert!(rules.uncomputable_metrics(&all).is_empty());
        let none = |_: &str| false;
        assert_eq!(
            rules.uncomputable_metrics(&none),
            ["gap", "either", "built_on_gap"]
        );
        assert_eq!(
            rules
                .fields_of("built_on_gap")
                .into_iter()
                .collect::<Vec<_>>(),
            ["first_response_ms", "first_text_delta_ms"]
        );
    }

    #[test]
    fn functions_follow_sql_null_propagation() {
        let n = |src: &str| {
            let rules = table(&format!(
                "[[metrics]]\nname = \"m\"\nexpr = \"{src}\"\nlabel = \"m\"\ndoc = \"d\"\n"
            ));
            rules
                .uncomputable_metrics(&|f: &str| f == "total_handler_ms")
                .is_empty()
        };
        assert!(n("total_handler_ms"));
        assert!(!n("upstream_done_ms"));
        assert!(!n("greatest(total_handler_ms, upstream_done_ms)"));
        assert!(n("coalesce(upstream_done_ms, total_handler_ms)"));
        assert!(!n("abs(auth_ms)"));
        // Conditions: IS NULL always has a value; FALSE AND NULL is FALSE.
        let absent = || Box::new(Node::Field("upstream_done_ms".into()));
        let field = |f: &str| f == "total_handler_ms";
        let metric = |_: &str| false;
        let is_null = Node::IsNull {
            expr: absent(),
            negated: false,
        };
        assert!(is_null.may_have_value(&field, &metric));
        let cmp = Node::Cmp(types::Cmp::Gt, absent(), Box::new(Node::Num(1.0)));
        assert!(!cmp.may_have_value(&field, &metric));
        assert!(
            Node::And(Box::new(cmp.clone()), Box::new(Node::Bool(false)))
                .may_have_value(&field, &metric)
        );
        assert!(!Node::Not(Box::new(cmp)).may_have_value(&field, &metric));
    }

    #[test]
    fn moving_a_t1_point_onto_t0_composes_origins() {
        let t = metric_types(
            r#"
[[metrics]]
name = "offset_ms"
expr = "coalesce(upstream_start_ms, auth_ms + distribution_ms + body_read_ms)"
doc = "x"
[[metrics]]
name = "t2_ms"
expr = "upstream_headers_ms + offset_ms"
doc = "x"
[[metrics]]
name = "prefill_ms"
expr = "first_response_ms - t2_ms"
doc = "x"
[[metrics]]
name = "share"
expr = "elapsed(upstream_headers_ms) / elapsed(total_handler_ms)"
doc = "x"
[[metrics]]
name = "tps"
expr = "output_tokens / (upstream_done_ms - first_text_delta_ms) * 1000"
doc = "x"
"#,
        );
        assert_eq!(
            t["offset_ms"],
            Ty::Point {
                origin: Event::T0,
                marks: Some(Event::T1)
            }
        );
        assert_eq!(
            t["t2_ms"],
            Ty::Point {
                origin: Event::T0,
                marks: Some(Event::T2)
            }
        );
        assert_eq!(t["prefill_ms"], Ty::Span);
        assert_eq!(t["share"], Ty::Number);
        assert_eq!(t["tps"], Ty::Rate);
    }

    #[test]
    fn a_scaled_duration_is_a_duration_and_shifts_a_point() {
        let t = metric_types(
            r#"
[[metrics]]
name = "gap_ms"
expr = "(first_text_delta_ms - first_response_ms) * 2 / 4"
doc = "x"
[[metrics]]
name = "earlier_ms"
expr = "first_text_delta_ms - 0.5 * gap_ms"
doc = "x"
[[metrics]]
name = "half_e2e_ms"
expr = "elapsed(total_handler_ms) / 2"
doc = "x"
[[metrics]]
name = "neg_ms"
expr = "-gap_ms"
doc = "x"
"#,
        );
        assert_eq!(t["gap_ms"], Ty::Span);
        assert_eq!(
            t["earlier_ms"],
            Ty::Point {
                origin: Event::T0,
                marks: None
            }
        );
        assert_eq!(t["half_e2e_ms"], Ty::Span);
        assert_eq!(t["neg_ms"], Ty::Span);
    }

    #[test]
    fn elapsed_is_the_point_itself_once_compiled() {
        let src = "name = \"t\"\ndefault_class = \"normal\"\n[[metrics]]\nname = \"e_ms\"\nexpr = \"elapsed(total_handler_ms)\"\ndoc = \"x\"\n";
        let r = RuleSet::parse(src, "t.toml").unwrap();
        assert_eq!(r.metrics[0].node, Node::Field("total_handler_ms".into()));
    }

    #[test]
    fn forward_references_resolve_and_file_order_is_kept_for_display() {
        let src = r#"
name = "t"
default_class = "normal"
[[metrics]]
name = "b_ms"
expr = "a_ms * 2"
label = "B"
doc = "x"
[[metrics]]
name = "a_ms"
expr = "first_response_ms - first_sse_event_ms"
label = "A"
doc = "x"
"#;
        let r = RuleSet::parse(src, "t.toml").unwrap();
        let eval: Vec<&str> = r.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(eval, ["a_ms", "b_ms"], "dependencies first");
        let shown: Vec<&str> = r
            .reported_metrics()
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(shown, ["b_ms", "a_ms"], "file order");
    }
}

#[cfg(test)]
mod azure_catalogue_tests {
    use super::*;

    fn check(body: &str) -> std::result::Result<RuleSet, String> {
        let src =
            format!("name = \"a\"\ncatalogue = \"azure\"\ndefault_class = \"normal\"\n{body}");
        RuleSet::parse(&src, "a.toml").map_err(|e| e.to_string())
    }

    const RULE: &str = "look_at = \"ttlt_avg_ms\"\nlayer = \"x\"\nnext_check = \"x\"\ndetects = \"x\"\nwhy = \"x\"\n";

    #[test]
    fn azure_fields_and_baselines_type_check() {
        let r = check(&format!(
            "[[params]]\nname = \"rise\"\nvalue = 1.2\nunit = \"ratio\"\ndoc = \"x\"\n\
             [[params]]\nname = \"busy\"\nvalue = 95\nunit = \"pct\"\ndoc = \"x\"\n\
             [[rules]]\nclass = \"up\"\norder = 1\nwhen = \"ttlt_avg_ms > rise * ttlt_avg_ms_baseline AND ptu_utilization_max_pct >= busy\"\n{RULE}"
        ))
        .unwrap();
        assert_eq!(r.catalogue, Catalogue::Azure);
    }

    #[test]
    fn a_latency_is_not_compared_with_a_token_count() {
        let e = check(&format!("[[rules]]\nclass = \"x\"\norder = 1\nwhen = \"ttlt_avg_ms > generated_tokens_total\"\n{RULE}")).unwrap_err();
        assert!(
            e.contains("unit mismatch: cannot compare `ttlt_avg_ms` and `generated_tokens_total`"),
            "{e}"
        );
    }

    #[test]
    fn a_percentage_is_not_compared_with_a_ratio() {
        let e = check(&format!(
            "[[params]]\nname = \"busy\"\nvalue = 0.95\nunit = \"ratio\"\ndoc = \"x\"\n\
             [[rules]]\nclass = \"x\"\norder = 1\nwhen = \"ptu_utilization_avg_pct >= busy\"\n{RULE}"
        ))
        .unwrap_err();
        assert!(e.contains("unit = \"pct\""), "{e}");
    }

    #[test]
    fn gateway_fields_are_unknown_in_the_azure_catalogue() {
        let e = check(&format!(
            "[[rules]]\nclass = \"x\"\norder = 1\nwhen = \"total_handler_ms > 5\"\n{RULE}"
        ))
        .unwrap_err();
        assert!(e.contains("unknown name `total_handler_ms`"), "{e}");
        let e = RuleSet::parse(
            "name = \"a\"\ncatalogue = \"azur\"\ndefault_class = \"normal\"\n",
            "a.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("unknown catalogue `azur`: expected gateway or azure"),
            "{e}"
        );
        assert!(e.contains("a.toml:2:13"), "{e}");
    }
}
