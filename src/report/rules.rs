//! Text for `tracediag rules` (the ordered table, its parameters and metrics) and
//! `tracediag fields` (the field catalogue), as a person reads them in a terminal.

use super::{fit, render, table, Width};

use crate::catalogue::{Catalogue, BASELINE_SUFFIX, FIELDS};
use crate::ruleset::RuleSet;

/// Collapse the whitespace of a multi-line expression for one table cell.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn render_rules(rules: &RuleSet, width: Width) -> String {
    let mut out = format!(
        "rule table `{}` ({})\n{}\n\n",
        rules.name, rules.source, rules.description
    );
    let mut t = table(
        &["#", "class", "when", "look at", "layer", "next check"],
        [],
    );
    for r in &rules.rules {
        t.add_row(vec![
            r.order.to_string(),
            r.class.clone(),
            one_line(&r.when),
            r.look_at.clone(),
            r.layer.clone(),
            r.next_check.clone(),
        ]);
    }
    t.add_row(vec![
        "—".into(),
        rules.default_class.clone(),
        "no rule matched".into(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    out.push_str(&render(t, width));
    out.push_str("\n\nParameters (override with --set name=value)\n");
    let mut t = table(&["name", "value", "unit", "meaning"], []);
    for p in &rules.params {
        t.add_row(vec![
            p.name.clone(),
            format!("{}", p.value),
            p.unit.clone(),
            p.doc.clone(),
        ]);
    }
    out.push_str(&render(t, width));
    out.push_str("\n\nMetrics (in evaluation order)\n");
    let mut t = table(&["name", "definition", "type", "meaning"], []);
    for m in &rules.metrics {
        t.add_row(vec![
            m.name.clone(),
            one_line(&m.expr),
            m.ty.to_string(),
            one_line(&m.doc),
        ]);
    }
    out.push_str(&render(t, width));
    out.push('\n');
    fit(&out, width)
}

pub fn rules_json(rules: &RuleSet) -> String {
    use serde_json::json;
    let v = json!({
        "name": rules.name,
        "source": rules.source,
        "default_class": rules.default_class,
        "rules": rules.rules.iter().map(|r| json!({
            "order": r.order, "class": r.class, "when": one_line(&r.when), "look_at": r.look_at,
            "layer": r.layer, "next_check": r.next_check, "detects": one_line(&r.detects), "why": one_line(&r.why),
        })).collect::<Vec<_>>(),
        "params": rules.params.iter().map(|p| json!({"name": p.name, "value": p.value, "unit": p.unit, "doc": p.doc})).collect::<Vec<_>>(),
        "metrics": rules.metrics.iter().map(|m| json!({"name": m.name, "expr": one_line(&m.expr), "type": m.ty.to_string(), "label": m.label, "doc": one_line(&m.doc)})).collect::<Vec<_>>(),
    });
    super::json::render(&v)
}

/// The catalogue's header and rows, as `fields` shows them.
fn field_rows(catalogue: Catalogue) -> (Vec<&'static str>, Vec<Vec<String>>) {
    if catalogue == Catalogue::Azure {
        let rows = catalogue
            .fields()
            .iter()
            .map(|f| {
                let name = if f.baseline {
                    format!("`{0}` (and `{0}{BASELINE_SUFFIX}`)", f.name)
                } else {
                    format!("`{}`", f.name)
                };
                vec![name, f.kind.describe(), f.doc.to_string()]
            })
            .collect();
        return (vec!["field", "kind", "meaning"], rows);
    }
    let rows = FIELDS
        .iter()
        .map(|f| {
            let mut aliases: Vec<String> = f.aliases.iter().map(|a| format!("`{a}`")).collect();
            if f.kind.is_timing() {
                aliases.push(format!(
                    "`timing.{0}`, `other.timing.{0}`, nested `other.timing`",
                    f.name
                ));
            }
            vec![
                format!("`{}`", f.name),
                f.kind.describe(),
                if aliases.is_empty() {
                    "—".to_string()
                } else {
                    aliases.join(", ")
                },
                f.doc.to_string(),
            ]
        })
        .collect();
    (
        vec!["field", "kind and origin", "also accepted as", "meaning"],
        rows,
    )
}

/// The catalogue as a Markdown table (the README's input schema is this output).
pub fn render_fields(catalogue: Catalogue) -> String {
    let (header, rows) = field_rows(catalogue);
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out
}

/// `fields` on a terminal: the Markdown table, or at a terminal's width the same cells as
/// a table that fits it.
pub fn fields_terminal(catalogue: Catalogue, width: Width) -> String {
    if width == Width::Fixed {
        return render_fields(catalogue);
    }
    let (header, rows) = field_rows(catalogue);
    let mut t = table(&header, []);
    for r in rows {
        t.add_row(r);
    }
    let mut out = render(t, width);
    out.push('\n');
    fit(&out, width)
}
