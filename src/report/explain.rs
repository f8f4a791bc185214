//! `tracediag explain` as terminal text, Markdown or JSON: one request's waterfall, rule
//! evidence and cohort, or the worst requests of a class. Computes nothing (see
//! `crate::explain`).

use super::markdown::{self, code, md, row};
use super::{fit, fmt_num, fmt_pct, render, table, Width};
use crate::explain::{
    exact, CheckResult, ClassExplanation, Explained, Explanation, Phase, PhaseKind,
    RequestExplanation, RuleEvidence, Timeline, Value,
};
use crate::summary::{ClientIds, MappedColumn, RulesInfo, Window};

/// Width of the waterfall bar: the request's end-to-end time (narrower on a narrow terminal).
pub const BAR_WIDTH: usize = 50;
/// The narrowest bar a terminal gets.
const MIN_BAR: usize = 16;
/// A waterfall line before its bar: `  span   phase  ms  │`.
const BAR_AT: usize = 2 + 6 + 1 + 26 + 1 + 9 + 3;
/// Where a phase's note starts when it has a line of its own: under the phase name.
const NOTE_AT: usize = 2 + 6 + 1;
const EXACT_GLYPH: char = '█';
const ESTIMATED_GLYPH: char = '▒';

pub fn terminal(e: &Explanation, width: Width) -> String {
    let text = match e {
        Explanation::Request(r) => request(r, width),
        Explanation::Class(c) => class(c, width),
    };
    fit(&text, width)
}

/// What both explanations' headers say about the run.
struct Run<'a> {
    rules: &'a RulesInfo,
    inputs: &'a [String],
    mapped: &'a [MappedColumn],
    window: &'a Option<Window>,
    client_ids: &'a Option<ClientIds>,
}

impl Run<'_> {
    fn of_request(r: &RequestExplanation) -> Run<'_> {
        Run {
            rules: &r.rules,
            inputs: &r.inputs,
            mapped: &r.mapped_columns,
            window: &r.window,
            client_ids: &r.client_ids,
        }
    }

    fn of_class(c: &ClassExplanation) -> Run<'_> {
        Run {
            rules: &c.rules,
            inputs: &c.inputs,
            mapped: &c.mapped_columns,
            window: &c.window,
            client_ids: &c.client_ids,
        }
    }
}

fn header(what: &str, run: Run) -> String {
    let Run {
        rules,
        inputs,
        mapped,
        window,
        client_ids,
    } = run;
    let mut out = format!(
        "{} — {what} — rules: {} ({})\ninput: {}\n",
        crate::summary::tool(),
        rules.name,
        rules.source,
        inputs.join(", ")
    );
    if let Some(m) = MappedColumn::line(mapped) {
        out.push_str(&format!("{m}\n"));
    }
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

fn request(r: &RequestExplanation, width: Width) -> String {
    let mut out = header(
        &format!("explain request `{}`", r.request_id),
        Run::of_request(r),
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
        explained(&mut out, &r.request_id, e, width);
    }
    out
}

fn explained(out: &mut String, id: &str, e: &Explained, width: Width) {
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
            out.push_str(&stands_for(&c.covers, &c.tell_apart));
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
    waterfall(out, &e.timeline, width);
    out.push('\n');
    rules(out, &e.rules, width);
    out.push('\n');
    cohort(out, e, width);
}

fn waterfall(out: &mut String, t: &Timeline, width: Width) {
    // On a terminal the bar takes what the columns leave, and a note that does not fit
    // beside it goes on the line below.
    let (bar_width, columns) = match width {
        Width::Fixed => (BAR_WIDTH, None),
        Width::Fit(n) => {
            let n = n as usize;
            (
                n.saturating_sub(BAR_AT + 1).clamp(MIN_BAR, BAR_WIDTH),
                Some(n),
            )
        }
    };
    let scale = scale(t);
    if t.origin == "t0" {
        out.push_str(&format!(
            "Timeline — one line per phase; bar: {bar_width} chars = {scale}; {EXACT_GLYPH} exact, {ESTIMATED_GLYPH} estimated (rests on the estimated t1 offset)\n"
        ));
        let offset = t1_offset(t);
        out.push_str(&format!("t1 offset (t0→t1): {offset}\n"));
    } else {
        out.push_str(&format!(
            "Timeline on the {} clock (no gateway point is logged) — one line per phase; bar: {bar_width} chars = {scale}\n",
            t.origin
        ));
    }
    let ruler = match t.scale_ms {
        Some(v) => {
            let right = format!("{} ms", exact(v));
            format!(
                "0{}{right}",
                " ".repeat(bar_width.saturating_sub(1 + right.chars().count()))
            )
        }
        None => " ".repeat(bar_width),
    };
    let head = format!("  {:<6} {:<26} {:>9}   {ruler}", "span", "phase", "ms");
    match columns {
        // The notes go on their own lines: so does their heading.
        Some(n) if head.chars().count() + 2 + "computed from".len() > n => {
            out.push_str(&format!("{head}\n"))
        }
        _ => out.push_str(&format!("{head}  computed from\n")),
    }
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
        let row = format!(
            "  {:<6} {:<26} {:>9}  │{}│",
            p.span,
            name,
            ms,
            bar(p, t.scale_ms, bar_width)
        );
        match columns {
            Some(n) if row.chars().count() + 1 + note.chars().count() > n => {
                out.push_str(&format!("{row}\n{}{note}\n", " ".repeat(NOTE_AT)))
            }
            _ => out.push_str(&format!("{row} {note}\n")),
        }
    }
}

/// A coarser clock's class: the gateway table's classes it stands for and what to log to
/// tell them apart, as a line of the terminal text (nothing for another class).
fn stands_for(covers: &[String], tell_apart: &str) -> String {
    match covers.is_empty() {
        true => String::new(),
        false => format!(
            "  stands for  {} (the gateway table's classes): {tell_apart}\n",
            covers.join(", ")
        ),
    }
}

/// `stands_for` as a Markdown list item.
fn stands_for_md(covers: &[String], tell_apart: &str) -> String {
    match covers.is_empty() {
        true => String::new(),
        false => format!(
            "- stands for: {} (the gateway table's classes): {}\n",
            covers
                .iter()
                .map(|c| code(c))
                .collect::<Vec<_>>()
                .join(", "),
            md(tell_apart)
        ),
    }
}

/// What the timeline's bar spans: the gateway's end-to-end time, or the last point of
/// another clock.
fn scale(t: &Timeline) -> String {
    match (t.end_to_end_ms, t.scale_ms) {
        (Some(v), _) if t.origin == "t0" => format!("{} ms end-to-end (t0→t7)", exact(v)),
        (Some(v), _) => format!("{} ms, to the last point logged", exact(v)),
        (None, Some(v)) => format!("{} ms, the latest point logged (t7 missing)", exact(v)),
        (None, None) => "nothing placed on the t0 clock".into(),
    }
}

/// The t1 offset (t0→t1) and how it was had, or why not.
fn t1_offset(t: &Timeline) -> String {
    match t.t1_offset_ms {
        Some(v) if t.t1_offset_estimated => {
            format!("{} ms, estimated: {}", exact(v), t.t1_offset_from)
        }
        Some(v) => format!("{} ms, exact ({})", exact(v), t.t1_offset_from),
        None => format!("unknown: {}", t.t1_offset_from),
    }
}

/// The phase's bar, positioned on the t0 clock; blank when it cannot be placed.
fn bar(p: &Phase, scale: Option<f64>, width: usize) -> String {
    let mut cells = vec![' '; width];
    if let (Some(s), Some(e), Some(d), Some(total)) = (p.start_ms, p.end_ms, p.duration_ms, scale) {
        if d >= 0.0 && total > 0.0 {
            let col = |x: f64| ((x / total * width as f64).round().max(0.0) as usize).min(width);
            let (mut a, mut b) = (col(s), col(e));
            if b <= a && d > 0.0 {
                // Too short for a cell of its own: one cell, so it is not lost.
                a = a.min(width - 1);
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

/// How many rules that did not match are shown in full: the nearest misses.
const NEAREST_MISSES: usize = 2;

/// The rules in the order a reader wants them: the one that gave the class, the other
/// matches (tags), then the nearest misses (most of their checks true; table order among
/// equals); the rest only by name, in table order. `insufficient_data` is no diagnosis a
/// request nearly had: unmatched, it is never a near miss. The class is still the first
/// match in table order.
fn shown(rules: &[RuleEvidence]) -> (Vec<&RuleEvidence>, Vec<&RuleEvidence>) {
    let true_share = |r: &RuleEvidence| {
        let held = r
            .checks
            .iter()
            .filter(|c| matches!(c.result, Value::Flag(true)))
            .count();
        (held * 1000) / r.checks.len().max(1)
    };
    let mut matched: Vec<&RuleEvidence> = rules.iter().filter(|r| r.matched).collect();
    matched.sort_by_key(|r| (!r.gives_class, r.order));
    let unjudged = |r: &&RuleEvidence| r.class == crate::ruleset::RuleSet::UNJUDGED;
    let mut misses: Vec<&RuleEvidence> = rules
        .iter()
        .filter(|r| !r.matched && !unjudged(r))
        .collect();
    misses.sort_by_key(|r| (std::cmp::Reverse(true_share(r)), r.order));
    let mut far = misses.split_off(NEAREST_MISSES.min(misses.len()));
    far.extend(rules.iter().filter(|r| !r.matched && unjudged(r)));
    far.sort_by_key(|r| r.order);
    matched.extend(misses);
    (matched, far)
}

/// The rules shown only by name, as one line.
fn far_line(far: &[&RuleEvidence]) -> String {
    let names: Vec<String> = far
        .iter()
        .map(|r| format!("{} {}", r.order, r.class))
        .collect();
    format!(
        "not matched, further from it: {} (--format json lists every rule's checks)",
        names.join(", ")
    )
}

fn rules(out: &mut String, rules: &[RuleEvidence], width: Width) {
    out.push_str(
        "Rules — the match first, then the nearest misses (the first match in table order gives the class, every match is a tag)\n",
    );
    let (shown, far) = shown(rules);
    for r in shown {
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
        let lines: Vec<(String, String)> = r
            .checks
            .iter()
            .map(|c| (c.expr.clone(), check(c)))
            .collect();
        let mut pad = lines
            .iter()
            .map(|(e, _)| e.chars().count())
            .max()
            .unwrap_or(0);
        // On a terminal too narrow for the aligned column, each check reads on as prose.
        if let Width::Fit(n) = width {
            if lines
                .iter()
                .any(|(_, c)| 7 + 11 + 1 + pad + 2 + c.chars().count() > n as usize)
            {
                pad = 0;
            }
        }
        for (k, (expr, result)) in lines.iter().enumerate() {
            out.push_str(&format!(
                "       {:<11} {:<pad$}  {}\n",
                if k == 0 { "checks" } else { "" },
                expr,
                result
            ));
        }
    }
    if !far.is_empty() {
        out.push_str(&format!("  {}\n", far_line(&far)));
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

/// Where a cohort was looked for, when not in the whole log: ` among rows a–b of FILE
/// (…)`, the file named by `file`.
fn cohort_rows(c: &crate::explain::Cohort, file: impl Fn(&str) -> String) -> String {
    match &c.around {
        None => String::new(),
        Some(a) => format!(
            " among rows {}–{} of {} (the rows around it: the log has {} rows, more than --cohort-rows)",
            a.first,
            a.last,
            file(&a.file),
            a.log_rows
        ),
    }
}

fn cohort(out: &mut String, e: &Explained, width: Width) {
    let c = &e.cohort;
    let name = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not logged)".into());
    out.push_str(&format!(
        "Cohort — same model and channel (model {}, channel {}){}: {} requests, this one included; percentiles type 7\n",
        name(&c.model),
        name(&c.channel),
        cohort_rows(c, str::to_string),
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
    out.push_str(&format!("{}\n", render(t, width)));
}

fn class(c: &ClassExplanation, width: Width) -> String {
    let mut out = header(&format!("explain class `{}`", c.class), Run::of_class(c));
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
    out.push_str(&stands_for(&c.covers, &c.tell_apart));
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
    out.push_str(&format!("{}\n", render(t, width)));
    if let Some(next) = &c.next_command {
        out.push_str(&format!("\nNext: {next}\n"));
    }
    out
}

/// The explanation as Markdown, to paste into a postmortem: the same sections and figures
/// as the terminal text, as headings and tables (the timeline as a table of phases).
pub fn markdown(e: &Explanation) -> String {
    match e {
        Explanation::Request(r) => request_md(r),
        Explanation::Class(c) => class_md(c),
    }
}

fn header_md(run: Run) -> String {
    let Run {
        rules,
        inputs,
        mapped,
        window,
        client_ids,
    } = run;
    let mut out = format!(
        "{} — rules: {} ({}). All times are UTC.\n\n- input: {}\n",
        md(&crate::summary::tool()),
        code(&rules.name),
        code(&rules.source),
        inputs
            .iter()
            .map(|i| code(i))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(m) = MappedColumn::line(mapped) {
        out.push_str(&format!("- {}\n", md(&m)));
    }
    if let Some(ids) = client_ids {
        out.push_str(&format!("- client ids: {}\n", md(&ids.describe())));
    }
    if let Some(w) = window {
        out.push_str(&format!(
            "- window: {} → {} (requests received in it)\n",
            md(w.since.as_deref().unwrap_or("start")),
            md(w.until.as_deref().unwrap_or("end"))
        ));
    }
    // Bad rows are diagnostics: on stderr, as for every format.
    out
}

fn request_md(r: &RequestExplanation) -> String {
    let mut out = format!("# Request {}\n\n", code(&r.request_id));
    out.push_str(&header_md(Run::of_request(r)));
    if r.occurrences > 1 {
        out.push_str(&format!(
            "\nRequest {} appears {} times (a duplicate id): each row is explained below, in input order.\n",
            code(&r.request_id),
            r.occurrences
        ));
    }
    for e in &r.requests {
        out.push('\n');
        if r.occurrences > 1 {
            out.push_str(&format!("## {} of {}\n\n", e.occurrence, r.occurrences));
        }
        explained_md(&mut out, e, if r.occurrences > 1 { "###" } else { "##" });
    }
    out
}

fn explained_md(out: &mut String, e: &Explained, h: &str) {
    let row_at = match (e.source_line, e.source_row) {
        (Some(l), _) => format!(", line {l}"),
        (None, Some(r)) => format!(", row {r}"),
        (None, None) => String::new(),
    };
    out.push_str(&format!(
        "- from: {}{row_at}, received {}\n",
        code(&e.source_file),
        md(e.timestamp.as_deref().unwrap_or("(no timestamp)"))
    ));
    let present: Vec<String> = e
        .labels
        .iter()
        .filter(|l| l.value != Value::Missing)
        .map(|l| format!("{} {}", md(&l.name), md(&value(&l.value))))
        .collect();
    let absent: Vec<String> = e
        .labels
        .iter()
        .filter(|l| l.value == Value::Missing)
        .map(|l| md(&l.name))
        .collect();
    out.push_str(&format!("- labels: {}\n", or_dash(&present.join(" · "))));
    if !absent.is_empty() {
        out.push_str(&format!("- not logged: {}\n", absent.join(", ")));
    }
    out.push_str(&format!(
        "- quality: {}\n",
        if e.data_quality.is_empty() {
            "no data-quality flags".to_string()
        } else {
            format!(
                "flagged: {}",
                e.data_quality
                    .iter()
                    .map(|q| code(q))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ));

    out.push_str(&format!(
        "\n{h} Class {}{}\n\n",
        code(&e.class),
        e.class_rule
            .as_ref()
            .map(|c| format!(" (rule {})", c.order))
            .unwrap_or_else(|| " (no rule matched)".into()),
    ));
    out.push_str(&format!(
        "- tags: {}\n",
        e.tags
            .iter()
            .map(|t| code(t))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    match &e.class_rule {
        Some(c) => {
            out.push_str(&format!("- layer: {}\n", md(&c.layer)));
            out.push_str(&format!("- next check: {}\n", md(&c.next_check)));
            out.push_str(&stands_for_md(&c.covers, &c.tell_apart));
            out.push_str(&format!(
                "- looked at: {} = {}{}\n",
                code(&c.look_at),
                md(&value(&c.look_at_value)),
                if c.look_at_estimated {
                    " (estimated)"
                } else {
                    ""
                }
            ));
        }
        None => out.push_str("- layer: —\n- next check: —\n"),
    }

    let t = &e.timeline;
    out.push_str(&format!("\n{h} Timeline\n\n"));
    let scale = scale(t);
    if t.origin == "t0" {
        let offset = t1_offset(t);
        out.push_str(&format!(
            "{}. t1 offset (t0→t1): {}.\n\n",
            md(&scale),
            md(&offset)
        ));
    } else {
        out.push_str(&format!(
            "On the {} clock (no gateway point is logged): {}.\n\n",
            t.origin,
            md(&scale)
        ));
    }
    out.push_str(&markdown::header(
        &[
            "span",
            "phase",
            "ms",
            "from (ms)",
            "to (ms)",
            "computed from",
        ],
        &[2, 3, 4],
    ));
    for p in &t.phases {
        let name = match p.kind {
            PhaseKind::Bridge => format!("({})", p.name),
            _ => p.name.clone(),
        };
        let note = match &p.missing {
            Some(why) => why.clone(),
            None => {
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
        let ms = |x: Option<f64>| x.map(exact).unwrap_or_else(|| "—".into());
        out.push_str(&row(&[
            md(&p.span),
            md(&name),
            p.duration_ms.map(exact).unwrap_or_else(|| "missing".into()),
            ms(p.start_ms),
            ms(p.end_ms),
            md(&note),
        ]));
    }

    out.push_str(&format!(
        "\n{h} Rules\n\nThe match first, then the nearest misses; the first match in table order gives the class, every match is a tag.\n\n"
    ));
    out.push_str(&markdown::header(
        &["#", "class", "verdict", "values", "thresholds", "checks"],
        &[0],
    ));
    let (shown, far) = shown(&e.rules);
    for r in shown {
        let verdict = match (r.matched, r.gives_class) {
            (true, true) => "**MATCH** — gives the class",
            (true, false) => "match — a tag",
            _ => "no match",
        };
        let values: Vec<String> = r
            .values
            .iter()
            .map(|v| {
                format!(
                    "{} = {}{}",
                    md(&v.name),
                    md(&value(&v.value)),
                    if v.estimated { " (estimated)" } else { "" }
                )
            })
            .collect();
        let thresholds: Vec<String> = r
            .thresholds
            .iter()
            .map(|t| md(&format!("{} = {} {}", t.name, exact(t.value), t.unit)))
            .collect();
        let checks: Vec<String> = r
            .checks
            .iter()
            .map(|c| format!("{}: {}", code(&c.expr), md(&check(c))))
            .collect();
        out.push_str(&row(&[
            r.order.to_string(),
            code(&r.class),
            verdict.to_string(),
            or_dash(&values.join(" · ")).to_string(),
            or_dash(&thresholds.join(" · ")).to_string(),
            or_dash(&checks.join("<br>")).to_string(),
        ]));
    }
    if !far.is_empty() {
        out.push_str(&format!("\n{}.\n", md(&far_line(&far))));
    }

    let c = &e.cohort;
    let name = |v: &Option<String>| md(v.as_deref().unwrap_or("(not logged)"));
    out.push_str(&format!(
        "\n{h} Cohort\n\nSame model and channel (model {}, channel {}){}: {} requests, this one included; percentiles type 7. Percentile rule: {}. Rank: share of the cohort's values at or below this request's value.\n\n",
        name(&c.model),
        name(&c.channel),
        cohort_rows(c, md),
        c.requests,
        md(c.percentile_rule)
    ));
    out.push_str(&markdown::header(
        &["metric", "this request", "n", "p50", "p95", "p99", "rank"],
        &[1, 2, 3, 4, 5, 6],
    ));
    for m in &c.metrics {
        let [p50, p95, p99] = fmt_pct(&m.cohort);
        out.push_str(&row(&[
            md(&m.label),
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
        ]));
    }
}

fn class_md(c: &ClassExplanation) -> String {
    let mut out = format!("# Class {}\n\n", code(&c.class));
    out.push_str(&header_md(Run::of_class(c)));
    out.push('\n');
    match (c.order, &c.when) {
        (Some(order), Some(when)) => out.push_str(&format!(
            "- rule {order}: {}\n",
            code(&when.split_whitespace().collect::<Vec<_>>().join(" "))
        )),
        _ => out.push_str("- the default class: no rule matched\n"),
    }
    out.push_str(&format!("- layer: {}\n", md(or_dash(&c.layer))));
    out.push_str(&format!("- next check: {}\n", md(or_dash(&c.next_check))));
    out.push_str(&stands_for_md(&c.covers, &c.tell_apart));
    out.push_str(&format!(
        "\n## The worst requests\n\n{} of {} requests have this class; the {} worst by {} ({} first; ties by request id).\n\n",
        c.requests_in_class,
        c.requests,
        c.worst.len(),
        code(&c.look_at),
        md(c.worst_is)
    ));
    let look_at = md(&c.look_at);
    out.push_str(&markdown::header(
        &[
            "#",
            "request id",
            "received (UTC)",
            "model",
            "channel",
            "outcome",
            look_at.as_str(),
            "e2e ms",
        ],
        &[0, 6, 7],
    ));
    let dash = |v: &Option<String>| md(v.as_deref().unwrap_or("—"));
    for w in &c.worst {
        out.push_str(&row(&[
            w.rank.to_string(),
            match &w.request_id {
                Some(id) => code(id),
                None => md(&match (w.source_line, w.source_row) {
                    (Some(l), _) => format!("{}:line {l}", w.source_file),
                    (None, Some(r)) => format!("{}:row {r}", w.source_file),
                    (None, None) => w.source_file.clone(),
                }),
            },
            dash(&w.timestamp),
            dash(&w.model),
            dash(&w.channel),
            dash(&w.outcome),
            match w.look_at_value {
                Some(v) if w.look_at_estimated => format!("{} (est.)", fmt_num(Some(v))),
                v => fmt_num(v),
            },
            fmt_num(w.end_to_end_ms),
        ]));
    }
    if let Some(next) = &c.next_command {
        out.push_str(&format!("\nNext: `{next}`\n"));
    }
    out
}
