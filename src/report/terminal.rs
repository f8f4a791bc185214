//! The terminal report: what was read, the class table with where to look next, the
//! named-metric percentiles and the data-quality findings, as comfy-table tables, laid out
//! for the given width (`Width::Fixed` for files and pipes).

use comfy_table::{CellAlignment, Table};

use super::{fit, fmt_pct, fmt_share, plural, render, table, Renderer, Width};
use crate::peer::{pooled, Figures, PeerFigures};
use crate::summary::{LeftOut, MappedColumn, MetricRow, Summary};

/// The terminal report at a width.
pub struct Terminal(pub Width);

fn metrics_table(rows: &[MetricRow]) -> Table {
    let mut t = table(
        &[
            "metric (ms unless stated)",
            "n",
            "null",
            "p50",
            "p95",
            "p99",
            "estimated",
        ],
        1..7,
    );
    for m in rows {
        let [p50, p95, p99] = fmt_pct(&m.pct);
        t.add_row(vec![
            m.label.clone(),
            m.pct.n.to_string(),
            m.nulls.to_string(),
            p50,
            p95,
            p99,
            m.estimated
                .map(|e| e.to_string())
                .unwrap_or_else(|| "—".into()),
        ]);
    }
    t
}

/// The peer's figures as the peer prints them (two decimals, its CSV's precision); the
/// JSON holds them unrounded.
fn peer_tables(p: &PeerFigures, width: Width, line: &mut impl FnMut(String)) {
    for r in &p.runs {
        line(String::new());
        line(format!(
            "As {} computes it (--definitions {}): {} — {} records, {} errors and cancellations left out as {} leaves them out; std {}",
            p.tool, p.definitions, r.path, r.records, r.left_out, p.tool, p.std
        ));
        let mut t = table(
            &[
                "metric (ms unless stated)",
                "n",
                "avg",
                "std",
                "min",
                "p50",
                "p95",
                "p99",
                "max",
            ],
            1..9,
        );
        for m in &r.metrics {
            let f = |v: f64| format!("{v:.2}");
            let name = if m.unit == "ms" {
                m.header.to_string()
            } else {
                format!("{} ({})", m.header, m.unit)
            };
            t.add_row(vec![
                name,
                m.count.to_string(),
                f(m.avg),
                f(m.std),
                f(m.min),
                f(m.p50),
                f(m.p95),
                f(m.p99),
                f(m.max),
            ]);
        }
        line(render(t, width));
        let run: Vec<String> = r
            .aggregates
            .iter()
            .filter(|a| a.unit != "ns")
            .map(|a| format!("{} {:.2} {}", a.tag, a.value, a.unit))
            .collect();
        line(run.join(" · "));
    }
}

impl Renderer for Terminal {
    fn render(&self, s: &Summary) -> String {
        let mut out = String::new();
        let mut line = |l: String| {
            out.push_str(&l);
            out.push('\n');
        };
        line(format!(
            "{} — rules: {} ({})",
            s.tool, s.rules.name, s.rules.source
        ));
        for i in &s.inputs {
            line(format!("input: {} ({}, {})", i.path, i.format, i.mapped()));
        }
        if let Some(m) = MappedColumn::line(&s.mapped_columns) {
            line(m);
        }
        if let Some(ids) = &s.client_ids {
            line(format!("client ids: {}", ids.describe()));
        }
        let span = s
            .time_span
            .as_ref()
            .map(|t| format!("{} → {}", t.start, t.end))
            .unwrap_or_else(|| "unknown (no timestamps)".into());
        line(format!("requests: {}   time span: {span}", s.rows));
        if let Some(w) = &s.window {
            line(format!(
                "window: {} ≤ received < {} (requests without a timestamp are left out)",
                w.since.as_deref().unwrap_or("−∞"),
                w.until.as_deref().unwrap_or("+∞")
            ));
        }
        let share = if s.rows == 0 {
            0.0
        } else {
            s.streaming.streaming as f64 / s.rows as f64
        };
        line(format!(
            "streaming: {} streamed ({}), {} not streamed, {} unknown",
            s.streaming.streaming,
            fmt_share(share),
            s.streaming.non_streaming,
            s.streaming.unknown
        ));
        let outcomes: Vec<String> = s
            .outcomes
            .iter()
            .map(|o| format!("{} {}", o.name, o.count))
            .collect();
        line(format!(
            "outcomes: {}   ({} failed, cancelled or timed out: included in every figure below)",
            if outcomes.is_empty() {
                "none".to_string()
            } else {
                outcomes.join(", ")
            },
            s.failures
        ));
        line(format!("percentiles: {}", s.percentile_method));
        line(format!("percentile rule: {}", s.percentile_rule));
        line(String::new());

        line("Diagnosis — the first matching rule gives each request its class".into());
        let mut t = table(
            &[
                "#", "class", "requests", "share", "failed", "e2e n", "e2e p50", "e2e p95",
                "e2e p99",
            ],
            2..9,
        );
        for c in s.classes.iter().filter(|c| c.count > 0) {
            let [p50, p95, p99] = fmt_pct(&c.end_to_end_ms);
            t.add_row(vec![
                c.order.map(|o| o.to_string()).unwrap_or_else(|| "—".into()),
                with_table(c),
                c.count.to_string(),
                fmt_share(c.share),
                c.failures.to_string(),
                c.end_to_end_ms.n.to_string(),
                p50,
                p95,
                p99,
            ]);
        }
        line(render(t, self.0));
        for c in s
            .classes
            .iter()
            .filter(|c| c.count > 0 && !c.missing.is_empty())
        {
            let missing: Vec<String> = c
                .missing
                .iter()
                .map(|m| format!("no {} in {}", m.field, m.requests))
                .collect();
            line(format!(
                "What is missing for {} ({}): {}",
                with_table(c),
                plural(c.count, "request"),
                missing.join(", ")
            ));
        }
        let found: Vec<_> = s
            .classes
            .iter()
            .filter(|c| c.count > 0 && c.order.is_some())
            .collect();
        if !found.is_empty() {
            line(String::new());
            line("Where to look".into());
            let mut t = table(&["class", "look at", "layer", "next check"], 0..0);
            for c in found {
                t.add_row(vec![
                    with_table(c),
                    c.look_at.clone(),
                    c.layer.clone(),
                    c.next_check.clone(),
                ]);
            }
            line(render(t, self.0));
        }
        line(String::new());
        line("Named metrics — failures included; null where a request has no such point".into());
        line(render(metrics_table(&s.metrics), self.0));
        for l in LeftOut::lines(&s.metrics_left_out) {
            line(l);
        }
        match &s.peer_figures {
            Some(Figures::Runs(p)) => peer_tables(p, self.0, &mut line),
            Some(Figures::Pooled(p)) => {
                line(String::new());
                line(format!(
                    "As {} computes it (--definitions {}): {}",
                    p.tool, p.definitions, p.runs_apart
                ));
                line(format!(
                    "first token: {}; std: {}; left out: {}",
                    p.first_token_rule, p.std, p.left_out
                ));
                for r in &p.runs {
                    line(String::new());
                    for l in peer_lines(r) {
                        line(l);
                    }
                    line(render(peer_table(r), self.0));
                }
            }
            None => {}
        }
        line(String::new());
        line("Data quality — flagged rows are kept and classified as they are".into());
        let mut t = table(&["check", "rows", "examples", "what it means"], 1..2);
        for q in &s.quality {
            t.add_row(vec![
                q.check.clone(),
                q.count.to_string(),
                q.examples.join(", "),
                q.doc.clone(),
            ]);
        }
        line(render(t, self.0));
        if let Some(g) = &s.groups {
            line(String::new());
            line(format!("By {}", g.by.join(", ")));
            let mut header: Vec<&str> = g.by.iter().map(|s| s.as_str()).collect();
            header.extend([
                "requests", "failed", "classes", "e2e n", "e2e p50", "e2e p95", "e2e p99",
            ]);
            // Counts and percentiles right-aligned; the class list reads left to right.
            let n = g.by.len();
            let mut t = table(&header, n..n + 2);
            for c in n + 3..n + 7 {
                if let Some(col) = t.column_mut(c) {
                    col.set_cell_alignment(CellAlignment::Right);
                }
            }
            for row in &g.groups {
                let e2e = &row.end_to_end_ms;
                let mut cells: Vec<String> = row
                    .key
                    .iter()
                    .map(|k| k.clone().unwrap_or_else(|| "(none)".into()))
                    .collect();
                cells.push(row.rows.to_string());
                cells.push(row.failures.to_string());
                cells.push(
                    row.classes
                        .iter()
                        .map(|c| format!("{} {}", c.name, c.count))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
                cells.push(e2e.n.to_string());
                cells.extend(fmt_pct(e2e));
                t.add_row(cells);
            }
            line(render(t, self.0));
        }
        fit(&out, self.0)
    }
}

/// What a run's `--definitions` block says above its table: the file, which requests
/// count, the run's counts, what each metric is and what is not computed.
fn peer_lines(r: &pooled::Run) -> Vec<String> {
    let mut out = vec![format!(
        "{}: {} requests, {} counted",
        r.path, r.requests, r.counted
    )];
    if let Some(c) = &r.run {
        let codes: Vec<String> = r
            .error_codes
            .iter()
            .map(|c| format!("{} × {}", c.code, c.requests))
            .collect();
        out.push(format!(
            "num_requests_started {}, number_errors {}, error_rate {}, num_completed_requests {}{}",
            c.num_requests_started,
            c.number_errors,
            c.error_rate.map_or("—".to_string(), sig),
            c.num_completed_requests,
            if codes.is_empty() {
                String::new()
            } else {
                format!(" (error codes: {})", codes.join(", "))
            }
        ));
    }
    for m in &r.metrics {
        out.push(format!("{} ({}): {}", m.name, m.unit, m.definition));
    }
    for n in &r.not_computed {
        out.push(format!("not computed: {n}"));
    }
    for n in &r.notes {
        out.push(format!("note: {n}"));
    }
    out
}

/// One column per metric, one row per statistic (every metric of a peer has the same).
fn peer_table(p: &pooled::Run) -> Table {
    let mut header = vec!["statistic".to_string()];
    // The units are in the lines above, one per metric.
    header.extend(p.metrics.iter().map(|m| m.name.clone()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = table(&header, 1..header.len());
    let mut n = vec!["n".to_string()];
    n.extend(p.metrics.iter().map(|m| m.n.to_string()));
    t.add_row(n);
    let names: Vec<&str> = p
        .metrics
        .first()
        .map(|m| m.stats.0.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default();
    for name in names {
        let mut row = vec![name.to_string()];
        row.extend(
            p.metrics
                .iter()
                .map(|m| m.stats.get(name).map_or("—".to_string(), sig)),
        );
        t.add_row(row);
    }
    t
}

/// Four significant digits, without exponent (the JSON holds every digit).
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    format!("{v:.digits$}")
}

/// A class as the tables show it: `table: class` where several tables classified the run.
fn with_table(c: &crate::summary::ClassRow) -> String {
    match &c.table {
        Some(t) => format!("{t}: {}", c.class),
        None => c.class.clone(),
    }
}
