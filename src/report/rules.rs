//! Text for `tracediag rules` (the ordered table, its parameters and metrics) and
//! `tracediag fields` (the field catalogue), as a person reads them in a terminal.

use super::table;

use crate::catalogue::{Catalogue, BASELINE_SUFFIX, FIELDS};
use crate::ruleset::RuleSet;

/// Collapse the whitespace of a multi-line expression for one table cell.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn render_rules(rules: &RuleSet) -> String {
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
    out.push_str(&t.to_string());
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
    out.push_str(&t.to_string());
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
    out.push_str(&t.to_string());
    out.push('\n');
    out
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
    let mut s = serde_json::to_string_pretty(&v).expect("serializes");
    s.push('\n');
    s
}

/// The catalogue as a Markdown table (the README's input schema is this output).
pub fn render_fields(catalogue: Catalogue) -> String {
    if catalogue == Catalogue::Azure {
        let mut out = String::from("| field | kind | meaning |\n|---|---|---|\n");
        for f in catalogue.fields() {
            let name = if f.baseline {
                format!("`{0}` (and `{0}{BASELINE_SUFFIX}`)", f.name)
            } else {
                format!("`{}`", f.name)
            };
            out.push_str(&format!("| {name} | {} | {} |\n", f.kind.describe(), f.doc));
        }
        return out;
    }
    let mut out = String::from(
        "| field | kind and origin | also accepted as | meaning |\n|---|---|---|---|\n",
    );
    for f in FIELDS {
        let mut aliases: Vec<String> = f.aliases.iter().map(|a| format!("`{a}`")).collect();
        if f.kind.is_timing() {
            aliases.push(format!(
                "`timing.{0}`, `other.timing.{0}`, nested `other.timing`",
                f.name
            ));
        }
        let kind = f.kind.describe();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.name,
            kind,
            if aliases.is_empty() {
                "—".to_string()
            } else {
                aliases.join(", ")
            },
            f.doc
        ));
    }
    out
}
