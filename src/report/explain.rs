//! `tracediag explain` as terminal text or JSON: one request's waterfall, rule evidence and
//! cohort, or the worst requests of a class. Computes nothing (see `crate::explain`).

use super::{fmt_num, fmt_pct, table};
use crate::explain::{
    exact, CheckResult, ClassExplanation, Explained, Explanation, Phase, PhaseKind,
    RequestExplanation, RuleEvidence, Timeline, Value,
};
use crate::summary::{ClientIds, RulesInfo, Window};

/// Width of the waterfall bar: the request's end-to-end time.
pub const BAR_WIDTH: usize = 50;
const EXACT_GLYPH: char = '█';
const ESTIMATED_GLYPH: char = '▒';

pub fn terminal(e: &Explanation) -> String {
    match e {
        Explanation::Request(r) => request(r),
        Explanation::Class(c) => class(c),
    }
}

pub fn json(e: &Explanation) -> String {
    let mut s = serde_json::to_string_pretty(e).expect("an explanation always serializes");
    s.push('\n');
    s
}

fn header(
    what: &str,
    rules: &RulesInfo,
    inputs: &[String],
    window: &Option<Window>,
    client_ids: &Option<ClientIds>,
) -> String {
    let mut out = format!(
        "{} — {what} — rules: {} ({})\ninput: {}\n",
        crate::summary::tool(),
        rules.name,
        rules.source,
        inputs.join(", ")
    );
    if let Some(ids) = client_ids {
        out.push_str(&format!("client ids: {}\n", ids.describe()));
    }
    if let Some(w) = window {
        out.push_str(&format!(
            "window: {} → {} (UTC; requests received in it)\n",
            w.since.as_deref().unwrap_or("start"),
            w.until.as_deref().unwrap_or("end")
        ));
    }
    out
}

fn value(v: &Value) -> String {
    match v {
        Value::Missing => "missing".into(),
        Value::Number(x) => exact(*x),
        Value::Integer(n) => n.to_string(),
        Value::Text(s) => s.clone(),
        Value::Flag(b) => b.to_string(),
    }
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "—"
    } else {
        s
    }
}

fn request(r: &RequestExplanation) -> String {
    let mut out = header(
        &format!("explain request `{}`", r.request_id),
        &r.rules,
        &r.inputs,
        &r.window,
        &r.client_ids,
    );
    if r.occurrences > 1 {
        out.push_str(&format!(
            "\nrequest `{}` appears {} times (a duplicate id): each row is explained below, in input order\n",
            r.request_id, r.occurrences
        ));
    }
    for e in &r.requests {
        out.push('\n');
        if r.occurrences > 1 {
            out.push_str(&format!(
                "══ {} of {} ══════════════════════════════════════\n",
                e.occurrence, r.occurrences
            ));
        }
        explained(&mut out, &r.request_id, e);
    }
    out
}

fn explained(out: &mut String, id: &str, e: &Explained) {
    let row = match (e.source_line, e.source_row) {
        (Some(l), _) => format!(", line {l}"),
        (None, Some(r)) => format!(", row {r}"),
        (None, None) => String::new(),
    };
    out.push_str(&format!(
        "Request {id} — {}{row}, received {}\n",
        e.source_file,
        e.timestamp.as_deref().unwrap_or("(no timestamp)")
    ));
    let present: Vec<String> = e
        .labels
        .iter()
        .filter(|l| l.value != Value::Missing)
        .map(|l| format!("{} {}", l.name, value(&l.value)))
        .collect();
    let absent: Vec<&str> = e
        .labels
        .iter()
        .filter(|l| l.value == Value::Missing)
        .map(|l| l.name.as_str())
        .collect();
    out.push_str(&format!(
        "  labels      {}\n",
        or_dash(&present.join(" · "))
    ));
    if !absent.is_empty() {
        out.push_str(&format!("  not logged  {}\n", absent.join(", ")));
    }
    out.push_str(&format!(
        "  quality     {}\n",
        if e.data_quality.is_empty() {
            "no data-quality flags".to_string()
        } else {
            format!("flagged: {}", e.data_quality.join(", "))
        }
    ));

    out.push_str(&format!(
        "\nClass: {}{} — tags: {}\n",
        e.class,
        e.class_rule
            .as_ref()
            .map(|c| format!(" (rule {})", c.order))
            .unwrap_or_else(|| " (no rule matched)".into()),
        e.tags.join(", ")
    ));
    match &e.class_rule {
        Some(c) => {
            out.push_str(&format!("  layer       {}\n", c.layer));
            out.push_str(&format!("  next check  {}\n", c.next_check));
            out.push_str(&format!(
                "  looked at   {} = {}{}\n",
                c.look_at,
                value(&c.look_at_value),
                if c.look_at_estimated {
                    " (estimated)"
                } else {
                    ""
                }
            ));
        }
        None => out.push_str("  layer       —\n  next check  —\n"),
    }

    out.push('\n');
    waterfall(out, &e.timeline);
    out.push('\n');
    rules(out, &e.rules);
    out.push('\n');
    cohort(out, e);
}

fn waterfall(out: &mut String, t: &Timeline) {
    let scale = match (t.end_to_end_ms, t.scale_ms) {
        (Some(v), _) => format!("{} ms end-to-end (t0→t7)", exact(v)),
        (None, Some(v)) => format!("{} ms, the latest point logged (t7 missing)", exact(v)),
        (None, None) => "nothing placed on the t0 clock".into(),
    };
    out.push_str(&format!(
        "Timeline — one line per phase; bar: {BAR_WIDTH} chars = {scale}; {EXACT_GLYPH} exact, {ESTIMATED_GLYPH} estimated (built on the t1 offset from the local phases)\n"
    ));
    let offset = match t.t1_offset_ms {
        Some(v) if t.t1_offset_estimated => format!(
            "{} ms, estimated: no upstream_start_ms, so the sum of the local phases",
            exact(v)
        ),
        Some(v) => format!("{} ms, exact (upstream_start_ms)", exact(v)),
        None => "unknown: no upstream_start_ms and the local phases are not all logged".into(),
    };
    out.push_str(&format!("t1 offset (t0→t1): {offset}\n"));
    let ruler = match t.scale_ms {
        Some(v) => {
            let right = format!("{} ms", exact(v));
            format!(
                "0{}{right}",
                " ".repeat(BAR_WIDTH.saturating_sub(1 + right.chars().count()))
            )
        }
        None => " ".repeat(BAR_WIDTH),
    };
    out.push_str(&format!(
        "  {:<6} {:<26} {:>9}   {ruler}  computed from\n",
        "span", "phase", "ms"
    ));
    for p in &t.phases {
        let ms = p.duration_ms.map(exact).unwrap_or_else(|| "missing".into());
        let note = match (&p.missing, p.duration_ms) {
            (Some(why), _) => why.clone(),
            (None, _) => {
                let mut n = p.from.clone();
                if p.estimated {
                    n.push_str(" · estimated");
                }
                if p.start_ms.is_none() {
                    n.push_str(" · not placed on the t0 clock");
                }
                if p.duration_ms.is_some_and(|d| d < 0.0) {
                    n.push_str(" · negative: points out of order");
                }
                n
            }
        };
        let name = match p.kind {
            PhaseKind::Bridge => format!("({})", p.name),
            _ => p.name.clone(),
        };
        out.push_str(&format!(
            "  {:<6} {:<26} {:>9}  │{}│ {note}\n",
            p.span,
            name,
            ms,
            bar(p, t.scale_ms)
        ));
    }
}

/// The phase's bar, positioned on the t0 clock; blank when it cannot be placed.
fn bar(p: &Phase, scale: Option<f64>) -> String {
    let mut cells = vec![' '; BAR_WIDTH];
    if let (Some(s), Some(e), Some(d), Some(total)) = (p.start_ms, p.end_ms, p.duration_ms, scale) {
        if d >= 0.0 && total > 0.0 {
            let col =
                |x: f64| ((x / total * BAR_WIDTH as f64).round().max(0.0) as usize).min(BAR_WIDTH);
            let (mut a, mut b) = (col(s), col(e));
            if b <= a && d > 0.0 {
                // Too short for a cell of its own: one cell, so it is not lost.
                a = a.min(BAR_WIDTH - 1);
                b = a + 1;
            }
            let glyph = if p.estimated {
                ESTIMATED_GLYPH
            } else {
                EXACT_GLYPH
            };
            for c in cells.iter_mut().take(b).skip(a) {
                *c = glyph;
            }
        }
    }
    cells.into_iter().collect()
}

fn rules(out: &mut String, rules: &[RuleEvidence]) {
    out.push_str("Rules — in table order: the first match gives the class, every match is a tag\n");
    for r in rules {
        let verdict = match (r.matched, r.gives_class) {
            (true, true) => "MATCH — gives the class",
            (true, false) => "match — a tag",
            _ => "no match",
        };
        out.push_str(&format!("  {:>2} {:<30} {verdict}\n", r.order, r.class));
        let values: Vec<String> = r
            .values
            .iter()
            .map(|v| {
                format!(
                    "{} = {}{}",
                    v.name,
                    value(&v.value),
                    if v.estimated { " (estimated)" } else { "" }
                )
            })
            .collect();
        out.push_str(&format!(
            "       values      {}\n",
            or_dash(&values.join(" · "))
        ));
        let thresholds: Vec<String> = r
            .thresholds
            .iter()
            .map(|t| format!("{} = {} {}", t.name, exact(t.value), t.unit))
            .collect();
        out.push_str(&format!(
            "       thresholds  {}\n",
            or_dash(&thresholds.join(" · "))
        ));
        let width = r
            .checks
            .iter()
            .map(|c| c.expr.chars().count())
            .max()
            .unwrap_or(0);
        for (k, c) in r.checks.iter().enumerate() {
            out.push_str(&format!(
                "       {:<11} {:<width$}  {}\n",
                if k == 0 { "checks" } else { "" },
                c.expr,
                check(c)
            ));
        }
    }
}

fn check(c: &CheckResult) -> String {
    let detail = match (&c.op, &c.right) {
        (Some(op), Some(right)) => format!("{} {op} {}", value(&c.left), value(right)),
        _ => format!("({})", value(&c.left)),
    };
    let result = match &c.result {
        Value::Flag(b) => b.to_string(),
        _ => "null (a value is missing: no match)".into(),
    };
    format!(
        "{detail} → {result}{}",
        if c.estimated { " (estimated)" } else { "" }
    )
}

fn cohort(out: &mut String, e: &Explained) {
    let c = &e.cohort;
    let name = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not logged)".into());
    out.push_str(&format!(
        "Cohort — same model and channel (model {}, channel {}): {} requests, this one included; percentiles type 7\n",
        name(&c.model),
        name(&c.channel),
        c.requests
    ));
    out.push_str(&format!("percentile rule: {}\n", c.percentile_rule));
    out.push_str("rank: share of the cohort's values at or below this request's value\n");
    let mut t = table(
        &["metric", "this request", "n", "p50", "p95", "p99", "rank"],
        1..7,
    );
    for m in &c.metrics {
        let [p50, p95, p99] = fmt_pct(&m.cohort);
        t.add_row(vec![
            m.label.clone(),
            match m.value {
                Some(v) if m.estimated => format!("{} (est.)", fmt_num(Some(v))),
                v => fmt_num(v),
            },
            m.cohort.n.to_string(),
            p50,
            p95,
            p99,
            m.rank_pct
                .map(|r| format!("{r:.1}%"))
                .unwrap_or_else(|| "—".into()),
        ]);
    }
    out.push_str(&format!("{t}\n"));
}

fn class(c: &ClassExplanation) -> String {
    let mut out = header(
        &format!("explain class `{}`", c.class),
        &c.rules,
        &c.inputs,
        &c.window,
        &c.client_ids,
    );
    out.push('\n');
    match (c.order, &c.when) {
        (Some(order), Some(when)) => out.push_str(&format!(
            "Class {} — rule {order}: {}\n",
            c.class,
            when.split_whitespace().collect::<Vec<_>>().join(" ")
        )),
        _ => out.push_str(&format!(
            "Class {} — the default class: no rule matched\n",
            c.class
        )),
    }
    out.push_str(&format!("  layer       {}\n", or_dash(&c.layer)));
    out.push_str(&format!("  next check  {}\n", or_dash(&c.next_check)));
    out.push_str(&format!(
        "\n{} of {} requests have this class; the {} worst by {} ({} first; ties by request id):\n",
        c.requests_in_class,
        c.requests,
        c.worst.len(),
        c.look_at,
        c.worst_is
    ));
    let mut t = table(
        &[
            "#",
            "request id",
            "received (UTC)",
            "model",
            "channel",
            "outcome",
            c.look_at.as_str(),
            "e2e ms",
        ],
        [0, 6, 7],
    );
    for w in &c.worst {
        t.add_row(vec![
            w.rank.to_string(),
            w.request_id
                .clone()
                .unwrap_or_else(|| match (w.source_line, w.source_row) {
                    (Some(l), _) => format!("{}:line {l}", w.source_file),
                    (None, Some(r)) => format!("{}:row {r}", w.source_file),
                    (None, None) => w.source_file.clone(),
                }),
            w.timestamp.clone().unwrap_or_else(|| "—".into()),
            w.model.clone().unwrap_or_else(|| "—".into()),
            w.channel.clone().unwrap_or_else(|| "—".into()),
            w.outcome.clone().unwrap_or_else(|| "—".into()),
            match w.look_at_value {
                Some(v) if w.look_at_estimated => format!("{} (est.)", fmt_num(Some(v))),
                v => fmt_num(v),
            },
            fmt_num(w.end_to_end_ms),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    out
}
