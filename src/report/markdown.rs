//! The weekly latency report as Markdown, to paste into a wiki: the same sections as the
//! HTML report, with tables where the HTML has charts. Every cell is escaped; nothing
//! depends on the time of the run.

use super::{fmt_num, fmt_pct, fmt_q, fmt_share, plural};
use crate::summary::{LeftOut, Summary};
use crate::weekly::{PeriodRow, TrendRow, Weekly, NONE_KEY};

/// Section headings, shared with the HTML report (tests look for each of them).
pub const SECTIONS: [&str; 10] = [
    "What was analysed",
    "Diagnosis by class",
    "Class share over time",
    "p95 end-to-end over time per channel",
    "Median timeline per class",
    "Latency distributions",
    "Named metrics by model",
    "Named metrics by channel",
    "Data quality",
    "Rules and thresholds",
];

/// Quantiles of the distribution table (the HTML draws the whole CDF).
const QUANTILES: [(&str, f64); 8] = [
    ("p10", 0.10),
    ("p25", 0.25),
    ("p50", 0.50),
    ("p75", 0.75),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("max", 1.0),
];

/// Text for a Markdown table cell or line: punctuation that Markdown or HTML would
/// interpret is backslash-escaped, line breaks become spaces.
pub fn md(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        match c {
            // An underscore inside a word never starts emphasis (GFM): left as it is.
            '_' if word(i.checked_sub(1)) && word(Some(i + 1)) => out.push(c),
            // `<` starts HTML or an autolink only before a letter, `/`, `!` or `?`.
            '<' if !chars
                .get(i + 1)
                .is_some_and(|n| n.is_alphanumeric() || matches!(n, '/' | '!' | '?')) =>
            {
                out.push(c)
            }
            '\\' | '|' | '*' | '_' | '`' | '[' | ']' | '<' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// An identifier (class, check, parameter, file) as inline code.
pub(super) fn code(s: &str) -> String {
    if s.contains('`') || s.contains('\n') {
        return md(s);
    }
    format!("`{}`", s.replace('|', "\\|"))
}

pub(super) fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

pub(super) fn header(cells: &[&str], right: &[usize]) -> String {
    let mut out = row(&cells.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    let rule: Vec<String> = (0..cells.len())
        .map(|i| {
            if right.contains(&i) {
                "---:".to_string()
            } else {
                "---".to_string()
            }
        })
        .collect();
    out.push_str(&row(&rule));
    out
}

/// A change as `fmt_num` shows it, with its sign: `+12.5`, `-476`, `0.0`.
fn signed_num(x: Option<f64>) -> String {
    let Some(v) = x else {
        return fmt_num(None);
    };
    let shown = fmt_num(Some(v));
    // Compared as shown, so a tiny change never prints as "-0.0" or "+0.0".
    if shown.parse::<f64>().is_ok_and(|s| s == 0.0) {
        fmt_num(Some(0.0))
    } else if v > 0.0 {
        format!("+{shown}")
    } else {
        shown
    }
}

fn signed_pts(x: Option<f64>) -> String {
    match x {
        None => "—".into(),
        Some(v) => {
            // Rounded first, so a tiny change never prints as "-0.0".
            let r = (v * 10.0).round() / 10.0 + 0.0;
            if r > 0.0 {
                format!("+{r:.1} pp")
            } else {
                format!("{r:.1} pp")
            }
        }
    }
}

fn share_or_dash(x: Option<f64>) -> String {
    x.map(fmt_share).unwrap_or_else(|| "—".into())
}

/// The lines of "What was analysed", shared by both formats as (label, text) pairs of
/// plain (unescaped) text.
pub fn analysed(s: &Summary, w: &Weekly) -> Vec<(&'static str, String)> {
    let mut out = vec![];
    out.push((
        "Files",
        s.inputs
            .iter()
            .map(|i| format!("{} ({}, {})", i.path, i.format, i.mapped()))
            .collect::<Vec<_>>()
            .join("; "),
    ));
    if let Some(m) = crate::summary::MappedColumn::line(&s.mapped_columns) {
        out.push(("Columns", m));
    }
    if let Some(ids) = &s.client_ids {
        out.push(("Client ids", ids.describe()));
    }
    out.push(("Requests", s.rows.to_string()));
    out.push((
        "Time span",
        s.time_span
            .as_ref()
            .map(|t| format!("{} → {}", t.start, t.end))
            .unwrap_or_else(|| "unknown (no timestamps)".into()),
    ));
    out.push((
        "Time zone",
        "UTC: every time in this report is UTC; hours and days start at UTC midnight, weeks on Monday 00:00 UTC".into(),
    ));
    if let Some(win) = &s.window {
        out.push((
            "Window",
            format!(
                "{} ≤ received < {} (requests without a timestamp are left out)",
                win.since.as_deref().unwrap_or("−∞"),
                win.until.as_deref().unwrap_or("+∞")
            ),
        ));
    }
    out.push((
        "Periods",
        format!(
            "{} of one {}{}{}",
            plural(w.periods.len() as u64, "period"),
            w.period.name(),
            if w.period_from_span {
                " (chosen from the span: hours under 2 days, days under 8 weeks, weeks beyond)"
            } else {
                " (--period)"
            },
            if w.untimed > 0 {
                format!(
                    "; {} requests without a timestamp are in every figure except those over time",
                    w.untimed
                )
            } else {
                String::new()
            }
        ),
    ));
    let share = if s.rows == 0 {
        0.0
    } else {
        s.streaming.streaming as f64 / s.rows as f64
    };
    out.push((
        "Streaming",
        format!(
            "{} streamed ({}), {} not streamed, {} unknown",
            s.streaming.streaming,
            fmt_share(share),
            s.streaming.non_streaming,
            s.streaming.unknown
        ),
    ));
    let outcomes: Vec<String> = s
        .outcomes
        .iter()
        .map(|o| format!("{} {}", o.name, o.count))
        .collect();
    out.push((
        "Outcomes",
        format!(
            "{} ({} failed, cancelled or timed out: included in every figure and chart)",
            if outcomes.is_empty() {
                "none".to_string()
            } else {
                outcomes.join(", ")
            },
            s.failures
        ),
    ));
    out.push((
        "Percentiles",
        format!("{}; {}", s.percentile_method, s.percentile_rule),
    ));
    out.push((
        "Rules",
        format!(
            "table {} from {}, {} rules, {} parameters (listed at the end)",
            s.rules.name,
            s.rules.source,
            w.rules.len(),
            s.rules.params.len()
        ),
    ));
    out
}

/// How much of a partial period the data covers: `data from 2026-11-02T00:00:00.078Z`,
/// `data until …`, `data from … until …`; `None` for a whole period.
fn coverage(p: &PeriodRow) -> Option<String> {
    match (&p.data_from, &p.data_until) {
        (Some(f), Some(u)) => Some(format!("data from {f} until {u}")),
        (Some(f), None) => Some(format!("data from {f}")),
        (None, Some(u)) => Some(format!("data until {u}")),
        (None, None) => None,
    }
}

/// `2026-11-02 01:00 UTC, partial: data until 2026-11-02T01:39:58.947Z`: a period as the
/// verdict names it.
fn period_head(p: &PeriodRow) -> String {
    match coverage(p) {
        Some(c) => format!("{} UTC, partial: {c}", p.label),
        None => format!("{} UTC", p.label),
    }
}

/// `2026-11-02 01:00 UTC, partial: data until 2026-11-02T01:39:58.947Z, 1200 requests,
/// 1801 per hour`: a period as the trend sentence names it.
fn period_text(p: &PeriodRow) -> String {
    format!(
        "{}, {} requests, {} per hour",
        period_head(p),
        p.rows,
        fmt_num(p.per_hour)
    )
}

/// A period's label in the tables over time, partial ones marked.
pub fn period_label(p: &PeriodRow) -> String {
    if p.partial {
        format!("{} (partial)", p.label)
    } else {
        p.label.clone()
    }
}

/// Which periods the data covers only in part: `Partial periods (the data starts or
/// ends inside them): 2026-11-02 01:00 (data until 2026-11-02T01:39:58.947Z).`
pub fn partial_sentence(w: &Weekly) -> String {
    let partial: Vec<String> = w
        .periods
        .iter()
        .filter_map(|p| coverage(p).map(|c| format!("{} ({c})", p.label)))
        .collect();
    if partial.is_empty() {
        "The data covers every period whole.".into()
    } else {
        format!(
            "Partial periods (the data starts or ends inside them): {}.",
            partial.join(", ")
        )
    }
}

/// The one-line verdict at the top of the report, written from the figures only: the
/// largest class other than the default one in the last period and its share against the
/// previous period, then the largest change of any such class's share. Without two
/// periods, the shares over the whole run.
pub fn verdict(s: &Summary, w: &Weekly) -> String {
    let default = w.class_order.last().map(String::as_str).unwrap_or("normal");
    let p = w.period.name();
    let Some(t) = &w.trend else {
        let why = if w.periods.is_empty() {
            "no request has a timestamp, so there is no trend".to_string()
        } else {
            format!("the requests fall in one {p}, so there is no trend")
        };
        let top = s
            .classes
            .iter()
            .filter(|c| c.class != default && c.count > 0)
            .max_by(|a, b| a.count.cmp(&b.count).then(b.order.cmp(&a.order)));
        return match top {
            _ if s.rows == 0 => format!("No requests; {why}."),
            Some(c) => format!(
                "{} requests: {}, the largest class other than {default}, was {} of them; {why}.",
                s.rows,
                c.class,
                fmt_share(c.share)
            ),
            None => format!(
                "{} requests, none matched a rule (all {default}); {why}.",
                s.rows
            ),
        };
    };
    let head = format!("Last {p} ({})", period_head(&t.last));
    let rows: Vec<_> = t.rows.iter().filter(|r| r.class != default).collect();
    // Ties go to the earlier class in table order (`rows` is in table order).
    let top = rows
        .iter()
        .filter(|r| r.last_count > 0)
        .fold(None, |best: Option<&&TrendRow>, r| match best {
            Some(b) if b.last_count >= r.last_count => Some(b),
            _ => Some(r),
        });
    let Some(top) = top else {
        return format!("{head}: no request matched a rule (all {default}).");
    };
    let (before, now) = (
        share_or_dash(top.previous_share),
        share_or_dash(top.last_share),
    );
    let direction = match (top.previous_share, top.last_share) {
        _ if before == now => "the same as",
        (Some(a), Some(b)) if b > a => "up from",
        (Some(_), Some(_)) => "down from",
        _ => "against",
    };
    let mut out = format!(
        "{head}: {}, the largest class other than {default}, was {now} of requests, {direction} {before} in the previous {p}",
        top.class
    );
    let largest = rows
        .iter()
        .filter_map(|r| r.share_change_pts.map(|c| (r, c)))
        .fold(None, |best: Option<(&&TrendRow, f64)>, (r, c)| match best {
            Some((_, b)) if b.abs() >= c.abs() => best,
            _ => Some((r, c)),
        });
    match largest {
        Some((r, c)) if signed_pts(Some(c)) != signed_pts(Some(0.0)) => {
            if r.class == top.class {
                out.push_str(&format!(
                    ", the largest change of any class other than {default}"
                ));
            } else {
                out.push_str(&format!(
                    "; the largest change of any class other than {default}: {} {} → {} ({})",
                    r.class,
                    share_or_dash(r.previous_share),
                    share_or_dash(r.last_share),
                    signed_pts(Some(c))
                ));
            }
        }
        _ => out.push_str(&format!(
            "; no share of a class other than {default} changed by 0.1 pp or more"
        )),
    }
    out.push('.');
    out
}

/// The sentence above the class table about the trend columns.
pub fn trend_sentence(w: &Weekly) -> String {
    match &w.trend {
        Some(t) => format!(
            "Trend: the last {p} ({}) against the previous {p} ({}); requests are compared per hour of data, so a partial period compares with a whole one.",
            period_text(&t.last),
            period_text(&t.previous),
            p = w.period.name()
        ),
        None if w.periods.is_empty() => "No trend: no request has a timestamp.".to_string(),
        None => format!(
            "No trend: the requests fall in one {} (UTC).",
            w.period.name()
        ),
    }
}

/// The trend of a class, when the report has one: `(previous → last, change)` for the
/// requests per hour of data and for the share.
pub fn trend_cells(w: &Weekly, class: &str) -> Option<[(String, String); 2]> {
    let t = w.trend.as_ref()?;
    Some(match t.rows.iter().find(|r| r.class == class) {
        Some(r) => [
            (
                format!(
                    "{} → {}",
                    fmt_num(r.previous_per_hour),
                    fmt_num(r.last_per_hour)
                ),
                signed_num(r.per_hour_change),
            ),
            (
                format!(
                    "{} → {}",
                    share_or_dash(r.previous_share),
                    share_or_dash(r.last_share)
                ),
                signed_pts(r.share_change_pts),
            ),
        ],
        None => [("0 → 0".into(), "0".into()), ("—".into(), "—".into())],
    })
}

pub fn render(s: &Summary, w: &Weekly) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", md(&w.title)));
    out.push_str(&format!(
        "{} — rules: {} ({}). All times are UTC. Failed, cancelled and timed-out requests are included in every figure.\n\n",
        md(&s.tool),
        code(&s.rules.name),
        code(&s.rules.source)
    ));
    out.push_str(&format!("**Verdict:** {}\n\n", md(&verdict(s, w))));

    out.push_str(&format!("## {}\n\n", SECTIONS[0]));
    for (label, text) in analysed(s, w) {
        let text = if label == "Files" {
            s.inputs
                .iter()
                .map(|i| format!("{} ({}, {})", code(&i.path), md(&i.format), i.mapped()))
                .collect::<Vec<_>>()
                .join("; ")
        } else {
            md(&text)
        };
        out.push_str(&format!("- **{label}:** {text}\n"));
    }
    for n in &s.notes {
        out.push_str(&format!("- **Note:** {}\n", md(n)));
    }
    out.push('\n');

    // Class table.
    out.push_str(&format!("## {}\n\n", SECTIONS[1]));
    out.push_str(
        "The first matching rule gives each request its class (table order; `normal` when none matched).\n\n",
    );
    out.push_str(&md(&trend_sentence(w)));
    out.push_str("\n\n");
    let p = w.period.name();
    let requests_trend = format!("requests per hour, previous → last {p}");
    let share_trend = format!("share, previous → last {p}");
    let mut head = vec![
        "#",
        "class",
        "requests",
        "share",
        "failed",
        "e2e n",
        "e2e p50 ms",
        "e2e p95 ms",
        "e2e p99 ms",
    ];
    if w.trend.is_some() {
        head.push(&requests_trend);
        head.push(&share_trend);
    }
    head.extend(["layer", "next check"]);
    out.push_str(&header(&head, &[2, 3, 4, 5, 6, 7, 8]));
    for c in s.classes.iter().filter(|c| c.count > 0) {
        let [p50, p95, p99] = fmt_pct(&c.end_to_end_ms);
        let mut cells = vec![
            c.order.map(|o| o.to_string()).unwrap_or_else(|| "—".into()),
            code(&c.class),
            c.count.to_string(),
            fmt_share(c.share),
            c.failures.to_string(),
            c.end_to_end_ms.n.to_string(),
            p50,
            p95,
            p99,
        ];
        if let Some(t) = trend_cells(w, &c.class) {
            cells.extend(t.iter().map(|(a, b)| md(&format!("{a} ({b})"))));
        }
        cells.push(md(&c.layer));
        cells.push(md(&c.next_check));
        out.push_str(&row(&cells));
    }
    out.push('\n');

    // Class share over time.
    out.push_str(&format!("## {}\n\n", SECTIONS[2]));
    let seen: Vec<usize> = (0..w.class_order.len())
        .filter(|&i| w.periods.iter().any(|p| p.classes[i] > 0))
        .collect();
    if w.periods.is_empty() {
        out.push_str("No request has a timestamp.\n\n");
    } else {
        out.push_str(&format!(
            "Requests (share of the {}) per class and {} (UTC). {}\n\n",
            p,
            p,
            md(&partial_sentence(w))
        ));
        let period_head = format!("{p} (UTC)");
        let mut head: Vec<String> = vec![period_head, "requests".into(), "failed".into()];
        head.extend(seen.iter().map(|&i| code(&w.class_order[i])));
        let head_ref: Vec<&str> = head.iter().map(String::as_str).collect();
        out.push_str(&header(&head_ref, &(1..head.len()).collect::<Vec<_>>()));
        for per in &w.periods {
            let mut cells = vec![
                md(&period_label(per)),
                per.rows.to_string(),
                per.failures.to_string(),
            ];
            for &i in &seen {
                let n = per.classes[i];
                cells.push(if per.rows == 0 {
                    "—".into()
                } else {
                    format!("{} ({})", n, fmt_share(n as f64 / per.rows as f64))
                });
            }
            out.push_str(&row(&cells));
        }
        out.push('\n');
    }

    // p95 per channel over time.
    out.push_str(&format!("## {}\n\n", SECTIONS[3]));
    if w.periods.is_empty() {
        out.push_str("No request has a timestamp.\n\n");
    } else if !w
        .channel_p95
        .iter()
        .any(|s| s.points.iter().any(|p| p.1.is_some()))
    {
        out.push_str(&format!(
            "No request with a timestamp has an end-to-end time ({}).\n\n",
            code(&w.end_to_end)
        ));
    } else {
        out.push_str(&format!(
            "End-to-end ({}) p95 in ms per channel and {p} (UTC), with the number of requests that have an end-to-end time.\n\n",
            w.end_to_end_span()
                .map(str::to_string)
                .unwrap_or_else(|| code(&w.end_to_end))
        ));
        let mut head: Vec<String> = vec![format!("{p} (UTC)")];
        head.extend(w.channel_p95.iter().map(|c| {
            if c.channel == NONE_KEY {
                md(&c.channel)
            } else {
                code(&c.channel)
            }
        }));
        let head_ref: Vec<&str> = head.iter().map(String::as_str).collect();
        out.push_str(&header(&head_ref, &(1..head.len()).collect::<Vec<_>>()));
        for (k, per) in w.periods.iter().enumerate() {
            let mut cells = vec![md(&period_label(per))];
            for c in &w.channel_p95 {
                let (n, p95) = c.points[k];
                cells.push(match p95 {
                    Some(_) => format!("{} (n={n})", fmt_q(0.95, n, p95)),
                    None => "—".into(),
                });
            }
            out.push_str(&row(&cells));
        }
        out.push('\n');
    }

    // Median timeline.
    out.push_str(&format!("## {}\n\n", SECTIONS[4]));
    out.push_str("Median duration in ms of each phase of the timeline (t0…t7) per class, over the requests that have the phase; a phase no request of the class has is `—`, never 0. Medians of phases do not add up to the median end-to-end time.\n\n");
    let used: Vec<usize> = (0..w.phases.len())
        .filter(|&i| w.waterfall.iter().any(|r| r.phases[i].median.is_some()))
        .collect();
    let mut head: Vec<String> = vec!["class".into(), "requests".into()];
    head.extend(used.iter().map(|&i| md(&w.phases[i].label)));
    head.push("e2e p50".into());
    let head_ref: Vec<&str> = head.iter().map(String::as_str).collect();
    out.push_str(&header(&head_ref, &(1..head.len()).collect::<Vec<_>>()));
    for r in &w.waterfall {
        let mut cells = vec![code(&r.class), r.count.to_string()];
        for &i in &used {
            cells.push(fmt_num(r.phases[i].median));
        }
        cells.push(fmt_num(r.end_to_end_p50));
        out.push_str(&row(&cells));
    }
    if !used.is_empty() {
        out.push('\n');
        out.push_str("| phase | computed as |\n|---|---|\n");
        for &i in &used {
            out.push_str(&row(&[md(&w.phases[i].label), md(&w.phases[i].doc)]));
        }
    }
    let estimated: u64 = w
        .waterfall
        .iter()
        .flat_map(|r| r.phases.iter().map(|p| p.estimated))
        .sum();
    if estimated > 0 {
        out.push_str(&format!(
            "\n{estimated} durations are built on the estimated t1 offset (no `upstream_start_ms`).\n"
        ));
    }
    out.push('\n');

    // Distributions.
    out.push_str(&format!("## {}\n\n", SECTIONS[5]));
    out.push_str("Quantiles of every named metric over all requests that have it (the HTML report draws them as CDFs). `null`: requests without the figure; `estimated`: values built on the estimated t1 offset.\n\n");
    let mut head = vec!["metric", "unit", "n", "null", "estimated"];
    head.extend(QUANTILES.iter().map(|q| q.0));
    out.push_str(&header(&head, &(2..head.len()).collect::<Vec<_>>()));
    for c in &w.cdfs {
        let m = s.metrics.iter().find(|m| m.name == c.name);
        let mut cells = vec![
            md(&c.label),
            md(&c.unit),
            c.n.to_string(),
            m.map(|m| m.nulls.to_string()).unwrap_or_else(|| "—".into()),
            m.and_then(|m| m.estimated)
                .map(|e| e.to_string())
                .unwrap_or_else(|| "—".into()),
        ];
        cells.extend(QUANTILES.iter().map(|(_, q)| fmt_q(*q, c.n, c.at(*q))));
        out.push_str(&row(&cells));
    }
    out.push('\n');

    // Per model, per channel.
    for (section, what, groups) in [
        (SECTIONS[6], "model", &w.by_model),
        (SECTIONS[7], "channel", &w.by_channel),
    ] {
        out.push_str(&format!("## {section}\n\n"));
        out.push_str(&format!(
            "p50/p95/p99 of each named metric per {what}; n counts the requests that have the figure.\n\n"
        ));
        // Once, under the first of the two tables.
        let left_out = if what == "model" {
            LeftOut::lines(&s.metrics_left_out)
        } else {
            vec![]
        };
        for l in left_out {
            out.push_str(&format!("{}\n\n", md(&l)));
        }
        out.push_str(&header(
            &["metric", "unit", what, "requests", "n", "p50", "p95", "p99"],
            &[3, 4, 5, 6, 7],
        ));
        for (i, m) in w.metrics.iter().enumerate() {
            for g in groups.iter() {
                let pct = &g.pcts[i];
                let [p50, p95, p99] = fmt_pct(pct);
                let key = if g.key == NONE_KEY {
                    md(&g.key)
                } else {
                    code(&g.key)
                };
                out.push_str(&row(&[
                    md(&m.label),
                    md(&m.unit),
                    key,
                    g.rows.to_string(),
                    pct.n.to_string(),
                    p50,
                    p95,
                    p99,
                ]));
            }
        }
        out.push('\n');
    }

    // Data quality.
    out.push_str(&format!("## {}\n\n", SECTIONS[8]));
    out.push_str(
        "Flagged rows are kept and classified as they are; nothing is fixed silently.\n\n",
    );
    out.push_str(&header(
        &["check", "rows", "examples", "what it means"],
        &[1],
    ));
    for q in &s.quality {
        out.push_str(&row(&[
            code(&q.check),
            q.count.to_string(),
            q.examples
                .iter()
                .map(|e| md(e))
                .collect::<Vec<_>>()
                .join(", "),
            md(&q.doc),
        ]));
    }
    out.push('\n');
    if let Some(b) = &s.bad_rows {
        out.push_str(&format!("{}:\n\n", md(&b.sentence())));
        for e in &b.examples {
            out.push_str(&format!("- {}\n", md(e)));
        }
        out.push('\n');
    }

    // Rules and thresholds.
    out.push_str(&format!("## {}\n\n", SECTIONS[9]));
    out.push_str(&format!(
        "Rule table {} ({}), read top to bottom; the first rule that matches gives the class.\n\n",
        code(&s.rules.name),
        code(&s.rules.source)
    ));
    out.push_str(&header(&["#", "class", "when", "look at"], &[]));
    for r in &w.rules {
        out.push_str(&row(&[
            r.order.to_string(),
            code(&r.class),
            code(&r.when),
            code(&r.look_at),
        ]));
    }
    if let Some(d) = w.class_order.last() {
        out.push_str(&row(&[
            "—".into(),
            code(d),
            "no rule matched".into(),
            String::new(),
        ]));
    }
    out.push_str("\nThresholds used (after any `--set`):\n\n");
    out.push_str(&header(&["parameter", "value", "unit", "meaning"], &[1]));
    for p in &w.params {
        out.push_str(&row(&[
            code(&p.name),
            format!("{}", p.value),
            md(&p.unit),
            md(&p.doc),
        ]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped() {
        assert_eq!(md("a|b <x> *y*\nz"), "a\\|b \\<x> \\*y\\* z");
        assert_eq!(md("body_read_ms _x_"), "body_read_ms \\_x\\_");
        assert_eq!(md("a < b, <!-- c"), "a < b, \\<!-- c");
        assert_eq!(code("ch|1"), "`ch\\|1`");
    }
}
