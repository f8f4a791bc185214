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
    let coarse: Vec<_> = rules
        .rules
        .iter()
        .filter(|r| !r.covers.is_empty())
        .collect();
    if !coarse.is_empty() {
        out.push_str("\n\nWhat the table cannot tell apart (the gateway table's finer classes)\n");
        let mut t = table(&["class", "covers", "to tell them apart"], []);
        for r in coarse {
            t.add_row(vec![
                r.class.clone(),
                r.covers.join(", "),
                one_line(&r.tell_apart),
            ]);
        }
        out.push_str(&render(t, width));
    }
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
    out.push_str("\n\nShipped tables: each input gets the first whose fields it has (--rules NAME picks one)\n");
    let mut t = table(&["name", "file", "for", "for inputs that map any of"], []);
    for s in crate::ruleset::tables::SHIPPED {
        let (description, applies_to) = crate::ruleset::RuleSet::parse(s.toml, s.path)
            .map(|t| (t.description, t.parts[0].applies_to.join(", ")))
            .unwrap_or_default();
        t.add_row(vec![
            s.name.to_string(),
            s.path.to_string(),
            description,
            applies_to,
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
            "covers": r.covers, "tell_apart": one_line(&r.tell_apart),
        })).collect::<Vec<_>>(),
        "applies_to": rules.parts.iter().flat_map(|p| p.applies_to.iter()).collect::<Vec<_>>(),
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

/// A table's section of rules/README.md (every table but the gateway's, whose section is
/// written by hand around its seed traces): what it reads, its classes, what they cannot
/// tell apart, what each means, and its thresholds. A test keeps the README equal to it.
pub fn markdown_section(rules: &RuleSet) -> String {
    let cell = |s: &str| one_line(s).replace('|', "\\|");
    let applies: Vec<String> = rules
        .parts
        .iter()
        .flat_map(|p| p.applies_to.iter().map(|f| format!("`{f}`")))
        .collect();
    let mut out = format!(
        "{}. An input is this table's when it maps {} (and no earlier table's field).\n\n",
        cell(&rules.description),
        applies.join(", ")
    );
    out.push_str("| order | class | look at | layer | next check |\n|---|---|---|---|---|\n");
    for r in &rules.rules {
        out.push_str(&format!(
            "| {} | `{}` | `{}` | {} | {} |\n",
            r.order,
            r.class,
            r.look_at,
            cell(&r.layer),
            cell(&r.next_check)
        ));
    }
    out.push_str(&format!("| — | `{}` | | | |\n", rules.default_class));
    let coarse: Vec<_> = rules
        .rules
        .iter()
        .filter(|r| !r.covers.is_empty())
        .collect();
    if !coarse.is_empty() {
        out.push_str("\nWhat it cannot tell apart with the points this log has:\n\n");
        out.push_str("| class | the gateway table's classes it covers | to tell them apart |\n|---|---|---|\n");
        for r in coarse {
            let covers: Vec<String> = r.covers.iter().map(|c| format!("`{c}`")).collect();
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                r.class,
                covers.join(", "),
                cell(&r.tell_apart)
            ));
        }
    }
    out.push_str("\nWhat each class means:\n\n");
    for r in &rules.rules {
        out.push_str(&format!(
            "- **`{}`** — {} {}\n",
            r.class,
            one_line(&r.detects),
            one_line(&r.why)
        ));
    }
    out.push_str("\n| parameter | value | unit | meaning |\n|---|---|---|---|\n");
    for p in &rules.params {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            p.name,
            p.value,
            p.unit,
            cell(&p.doc)
        ));
    }
    out
}
