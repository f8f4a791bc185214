//! The weekly latency report as one self-contained HTML file: a small inline stylesheet,
//! tables, and inline SVG charts written by hand. No script, no network, no external font
//! or image. Every text from the data is escaped; nothing depends on the time of the run.
//!
//! Each chart is an `<svg data-chart="NAME">` whose marks (one `<path>` per line series,
//! one `<rect>` per bar segment) carry `data-series`, so a test or a browser check can see
//! that it is not empty.

use std::fmt::Write;

use super::markdown::{
    analysed, partial_sentence, period_label, trend_cells, trend_sentence, verdict, SECTIONS,
};
use super::{fmt_num, fmt_pct, fmt_q, fmt_share};
use crate::stats::support;
use crate::summary::{LeftOut, Summary};
use crate::weekly::{Cdf, GroupMetrics, Weekly, NONE_KEY};

const WATERFALL_CAPTION: &str = "Median duration of each phase per class, over the requests that have the phase, stacked in timeline order: local phases (auth, distribution, body read) up to t1, then t1→t2 … t6→t7. A phase no request of the class has is left out, never drawn as 0. Medians of phases do not add up to the median end-to-end time (black tick).";

/// Chart names (`data-chart`), in page order; a CDF chart is left out when no named metric
/// belongs to it.
pub const CHARTS: [&str; 7] = [
    "class-share",
    "p95-by-channel",
    "waterfall",
    "cdf-time-to",
    "cdf-phases",
    "cdf-rates",
    "cdf-other",
];

const WIDTH: f64 = 960.0;
/// Right margin of the plots: room for the last x tick label.
const RIGHT_PAD: f64 = 36.0;
const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#17becf", "#bcbd22", "#8c564b",
];
/// Colours of the timeline phases, in `weekly` phase order: each phase has the colour of
/// the class of the shipped table that blames it (auth → `auth_slow`, t1→t2 →
/// `upstream_headers_slow`, …), so the waterfall and the class chart read together.
const PHASE_COLORS: [&str; 10] = [
    PALETTE[5], PALETTE[6], PALETTE[7], "#bab0ac", PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3],
    PALETTE[4], PALETTE[9],
];

fn phase_color(i: usize) -> &'static str {
    PHASE_COLORS
        .get(i)
        .copied()
        .unwrap_or(PALETTE[i % PALETTE.len()])
}

/// The default class (`normal`) is grey, so the classes that need attention stand out.
const DEFAULT_CLASS_COLOR: &str = "#c9ced6";
/// Approximate width of one character of the 12 px chart font.
const CHAR_W: f64 = 6.8;

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1d232b;margin:24px auto;max-width:1180px;padding:0 20px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:19px;margin:36px 0 8px;border-bottom:1px solid #d8dde3;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 4px}
p.lead{color:#4a5360;margin:0 0 16px}
table{border-collapse:collapse;margin:8px 0 18px;font-size:13px}
th,td{border:1px solid #d8dde3;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f7;font-weight:600;overflow-wrap:anywhere}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th.n{text-align:right}
th.grp,td.grp{border-left:2px solid #aab2bd}
.cls{white-space:nowrap}
tr.first td{border-top:2px solid #aab2bd}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
dl.analysed{display:grid;grid-template-columns:max-content 1fr;gap:3px 18px;margin:8px 0 16px}
dl.analysed dt{font-weight:600}
dl.analysed dd{margin:0}
figure{margin:14px 0 28px}
figcaption{color:#4a5360;font-size:13px;max-width:960px}
svg{display:block;max-width:100%;height:auto;font-family:inherit}
svg text{font-size:12px;fill:#1d232b}
svg text.title{font-size:15px;font-weight:600}
svg text.tick{fill:#4a5360;font-size:11px}
svg .axis{stroke:#5b6470;stroke-width:1}
svg .grid{stroke:#e6e9ed;stroke-width:1}
.note{color:#4a5360;font-size:13px}
";

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate, one decimal, never `-0.0`.
fn c(x: f64) -> String {
    format!("{:.1}", x + 0.0)
}

fn code(s: &str) -> String {
    format!("<code>{}</code>", esc(s))
}

fn key_html(k: &str) -> String {
    if k == NONE_KEY {
        esc(k)
    } else {
        code(k)
    }
}

fn class_color(w: &Weekly, class: &str) -> &'static str {
    match w.class_order.iter().position(|c| c == class) {
        Some(i) if i + 1 == w.class_order.len() => DEFAULT_CLASS_COLOR,
        Some(i) => PALETTE[i % PALETTE.len()],
        None => DEFAULT_CLASS_COLOR,
    }
}

/// A number for an axis tick: no decimals from 10 up (with thin spaces between
/// thousands), otherwise as few decimals as it needs.
fn tick(v: f64) -> String {
    if v.abs() >= 10.0 || v == v.round() {
        let n = v.round() as i64;
        let digits = n.abs().to_string();
        let mut out = String::new();
        for (i, ch) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 && digits.len() > 4 {
                out.push('\u{2009}');
            }
            out.push(ch);
        }
        if n < 0 {
            format!("−{out}")
        } else {
            out
        }
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A round upper bound and step for a linear axis from 0.
fn nice(max: f64) -> (f64, f64) {
    if max.is_nan() || max <= 0.0 {
        return (1.0, 0.2);
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| s * 5.0 >= max)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

#[derive(Clone, Copy)]
enum Mark {
    Swatch,
    Line,
    Tick,
}

/// A legend in rows under a chart; returns the SVG and its height.
fn legend(items: &[(String, String, Mark)], x0: f64, y0: f64, width: f64) -> (String, f64) {
    let mut out = String::new();
    let (mut x, mut y) = (x0, y0);
    for (color, label, mark) in items {
        let w = 26.0 + label.chars().count() as f64 * CHAR_W + 18.0;
        if x > x0 && x + w > x0 + width {
            x = x0;
            y += 20.0;
        }
        let color = esc(color);
        match mark {
            Mark::Swatch => {
                let _ = write!(
                    out,
                    r#"<rect data-legend="" x="{}" y="{}" width="16" height="11" fill="{color}"/>"#,
                    c(x),
                    c(y - 9.0)
                );
            }
            Mark::Line => {
                let _ = write!(
                    out,
                    r#"<line data-legend="" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="2.5"/>"#,
                    c(x),
                    c(y - 4.0),
                    c(x + 18.0),
                    c(y - 4.0)
                );
            }
            Mark::Tick => {
                let _ = write!(
                    out,
                    r#"<line data-legend="" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="2.5"/>"#,
                    c(x + 8.0),
                    c(y - 12.0),
                    c(x + 8.0),
                    c(y + 3.0)
                );
            }
        }
        let _ = write!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            c(x + 24.0),
            c(y),
            esc(label)
        );
        x += w;
    }
    (out, y - y0 + 20.0)
}

fn svg_open(name: &str, title: &str, height: f64) -> String {
    format!(
        r#"<svg data-chart="{}" role="img" aria-label="{t}" width="{w}" height="{h}" viewBox="0 0 {w} {h}"><title>{t}</title><text class="title" x="0" y="18">{t}</text>"#,
        esc(name),
        t = esc(title),
        w = WIDTH,
        h = c(height)
    )
}

/// A y-axis label, rotated, centred on the plot.
fn y_label(text: &str, x: f64, top: f64, bottom: f64) -> String {
    let y = (top + bottom) / 2.0;
    format!(
        r#"<text x="{}" y="{}" text-anchor="middle" transform="rotate(-90 {} {})">{}</text>"#,
        c(x),
        c(y),
        c(x),
        c(y),
        esc(text)
    )
}

fn x_label(text: &str, left: f64, right: f64, y: f64) -> String {
    format!(
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        c((left + right) / 2.0),
        c(y),
        esc(text)
    )
}

fn figure(svg: String, caption: &str) -> String {
    format!(
        "<figure>{svg}</svg><figcaption>{}</figcaption></figure>\n",
        esc(caption)
    )
}

/// A CDF chart of several metrics of one unit; log x for milliseconds.
fn cdf_chart(name: &str, title: &str, cdfs: &[&Cdf], unit: &str, log: bool) -> String {
    let (left, right, top) = (70.0, WIDTH - RIGHT_PAD, 38.0);
    let bottom = top + 280.0;
    // Each metric's quantiles: the x axis spans from the least to the largest of them.
    let values = || cdfs.iter().flat_map(|c| c.quantiles.iter().copied());
    let max = values().fold(f64::NEG_INFINITY, f64::max);
    let min_pos = values().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    // The x scale: (domain low, domain high, ticks).
    let (lo, hi, ticks): (f64, f64, Vec<f64>) = if log {
        let (a, b) = if min_pos.is_finite() && max > 0.0 {
            (min_pos.log10().floor() as i32, max.log10().ceil() as i32)
        } else {
            (0, 1)
        };
        let b = if b <= a { a + 1 } else { b };
        let mut t = vec![];
        for d in a..=b {
            let base = 10f64.powi(d);
            t.push(base);
            if b - a <= 3 && d < b {
                t.push(2.0 * base);
                t.push(5.0 * base);
            }
        }
        (10f64.powi(a), 10f64.powi(b), t)
    } else {
        let (top_v, step) = nice(if max.is_finite() { max } else { 1.0 });
        let n = (top_v / step).round() as usize;
        (0.0, top_v, (0..=n).map(|i| i as f64 * step).collect())
    };
    let x = |v: f64| -> f64 {
        let f = if log {
            if v <= lo {
                0.0
            } else {
                (v.log10() - lo.log10()) / (hi.log10() - lo.log10())
            }
        } else {
            (v - lo) / (hi - lo)
        };
        left + f.clamp(0.0, 1.0) * (right - left)
    };
    let y = |q: f64| bottom - q * (bottom - top);

    let mut body = String::new();
    // Grid and axes.
    percent_grid(&mut body, left, right, &y);
    for t in &ticks {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{0}" y1="{1}" x2="{0}" y2="{2}"/><text class="tick" x="{0}" y="{3}" text-anchor="middle">{4}</text>"#,
            c(x(*t)),
            c(top),
            c(bottom),
            c(bottom + 16.0),
            tick(*t)
        );
    }
    let _ = write!(
        body,
        r#"<line class="axis" x1="{l}" y1="{b}" x2="{r}" y2="{b}"/><line class="axis" x1="{l}" y1="{t}" x2="{l}" y2="{b}"/>"#,
        l = c(left),
        r = c(right),
        t = c(top),
        b = c(bottom)
    );
    body.push_str(&x_label(
        &if log {
            format!("{unit} (log scale)")
        } else {
            unit.to_string()
        },
        left,
        right,
        bottom + 36.0,
    ));
    body.push_str(&y_label("requests with a value ≤ x (%)", 18.0, top, bottom));
    // One path per metric.
    let mut items = vec![];
    for (i, cdf) in cdfs.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let Some(&min) = cdf.quantiles.first() else {
            items.push((
                color.to_string(),
                format!("{} (no data)", cdf.label),
                Mark::Line,
            ));
            continue;
        };
        // From no value below the least, through the exact points.
        let mut d = format!("M{} {}", c(x(min)), c(y(0.0)));
        for (v, f) in &cdf.points {
            let _ = write!(d, " L{} {}", c(x(*v)), c(y(*f)));
        }
        let _ = write!(
            body,
            r#"<path data-series="{}" d="{d}" fill="none" stroke="{color}" stroke-width="2"><title>{}: n={}, p50 {}, p95 {}, p99 {} {}</title></path>"#,
            esc(&cdf.name),
            esc(&cdf.label),
            cdf.n,
            q_html(0.5, cdf.n, cdf.at(0.5)),
            q_html(0.95, cdf.n, cdf.at(0.95)),
            q_html(0.99, cdf.n, cdf.at(0.99)),
            esc(unit)
        );
        items.push((
            color.to_string(),
            format!("{} (n={})", cdf.label, cdf.n),
            Mark::Line,
        ));
    }
    let (leg, leg_h) = legend(&items, left, bottom + 62.0, right - left);
    let height = bottom + 62.0 + leg_h;
    let mut out = svg_open(name, title, height);
    out.push_str(&body);
    out.push_str(&leg);
    out
}

/// One CDF chart: (name, title, metrics, unit, log x, caption).
type CdfGroup<'a> = (&'a str, &'a str, Vec<&'a Cdf>, &'a str, bool, &'a str);

/// X positions of period slots, shared by the bar and line charts over time.
struct Slots {
    left: f64,
    width: f64,
    n: usize,
}

impl Slots {
    fn slot(&self) -> f64 {
        self.width / self.n.max(1) as f64
    }
    fn center(&self, i: usize) -> f64 {
        self.left + (i as f64 + 0.5) * self.slot()
    }
    /// Tick labels under the slots, thinned so they do not overlap.
    fn labels(&self, w: &Weekly, y: f64) -> String {
        let longest = w
            .periods
            .iter()
            .map(|p| p.short_label.chars().count())
            .max()
            .unwrap_or(1) as f64;
        let every = ((longest * 6.2 + 12.0) / self.slot()).ceil().max(1.0) as usize;
        let mut out = String::new();
        for (i, p) in w.periods.iter().enumerate() {
            if i % every == 0 {
                let _ = write!(
                    out,
                    r#"<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>"#,
                    c(self.center(i)),
                    c(y),
                    esc(&p.short_label)
                );
            }
        }
        out
    }
}

fn class_share_chart(w: &Weekly) -> String {
    let (left, right, top) = (70.0, WIDTH - RIGHT_PAD, 52.0);
    let bottom = top + 260.0;
    let slots = Slots {
        left,
        width: right - left,
        n: w.periods.len(),
    };
    let y = |q: f64| bottom - q * (bottom - top);
    let mut body = String::new();
    percent_grid(&mut body, left, right, &y);
    let bar = (slots.slot() * 0.7).min(72.0);
    for (i, per) in w.periods.iter().enumerate() {
        if per.rows == 0 {
            continue;
        }
        let x0 = slots.center(i) - bar / 2.0;
        let mut acc = 0u64;
        for (k, class) in w.class_order.iter().enumerate() {
            let n = per.classes[k];
            if n == 0 {
                continue;
            }
            let q0 = acc as f64 / per.rows as f64;
            acc += n;
            let q1 = acc as f64 / per.rows as f64;
            let _ = write!(
                body,
                r#"<rect data-series="{}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} UTC · {}: {} of {} ({})</title></rect>"#,
                esc(class),
                c(x0),
                c(y(q1)),
                c(bar),
                c(y(q0) - y(q1)),
                class_color(w, class),
                esc(&period_label(per)),
                esc(class),
                n,
                per.rows,
                fmt_share(n as f64 / per.rows as f64)
            );
        }
        if slots.slot() >= 44.0 {
            let _ = write!(
                body,
                r#"<text class="tick" x="{}" y="{}" text-anchor="middle">n={}</text>"#,
                c(slots.center(i)),
                c(top - 6.0),
                per.rows
            );
        }
    }
    let _ = write!(
        body,
        r#"<line class="axis" x1="{l}" y1="{b}" x2="{r}" y2="{b}"/><line class="axis" x1="{l}" y1="{t}" x2="{l}" y2="{b}"/>"#,
        l = c(left),
        r = c(right),
        t = c(top),
        b = c(bottom)
    );
    body.push_str(&slots.labels(w, bottom + 16.0));
    body.push_str(&x_label(
        &format!("{} (start, UTC)", w.period.name()),
        left,
        right,
        bottom + 36.0,
    ));
    body.push_str(&y_label(
        "share of the period's requests (%)",
        18.0,
        top,
        bottom,
    ));
    let items: Vec<(String, String, Mark)> = w
        .class_order
        .iter()
        .enumerate()
        .filter(|(k, _)| w.periods.iter().any(|p| p.classes[*k] > 0))
        .map(|(_, class)| {
            (
                class_color(w, class).to_string(),
                class.clone(),
                Mark::Swatch,
            )
        })
        .collect();
    let (leg, leg_h) = legend(&items, left, bottom + 62.0, right - left);
    let title = format!("Class share per {} (stacked, UTC)", w.period.name());
    let mut out = svg_open("class-share", &title, bottom + 62.0 + leg_h);
    out.push_str(&body);
    out.push_str(&leg);
    out
}

fn p95_chart(w: &Weekly) -> String {
    let (left, right, top) = (70.0, WIDTH - RIGHT_PAD, 38.0);
    let bottom = top + 260.0;
    let slots = Slots {
        left,
        width: right - left,
        n: w.periods.len(),
    };
    let max = w
        .channel_p95
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .filter_map(|&(n, v)| support::shown(0.95, n, v))
        })
        .fold(0.0, f64::max);
    let (top_v, step) = nice(max);
    let y = |v: f64| bottom - (v / top_v).clamp(0.0, 1.0) * (bottom - top);
    let mut body = String::new();
    let n = (top_v / step).round() as usize;
    for i in 0..=n {
        let v = i as f64 * step;
        let _ = write!(
            body,
            r#"<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/><text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            c(left),
            c(y(v)),
            c(right),
            c(y(v)),
            c(left - 6.0),
            c(y(v) + 4.0),
            tick(v)
        );
    }
    let _ = write!(
        body,
        r#"<line class="axis" x1="{l}" y1="{b}" x2="{r}" y2="{b}"/><line class="axis" x1="{l}" y1="{t}" x2="{l}" y2="{b}"/>"#,
        l = c(left),
        r = c(right),
        t = c(top),
        b = c(bottom)
    );
    let mut items = vec![];
    for (k, s) in w.channel_p95.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let mut d = String::new();
        let mut dots = String::new();
        let mut pen = false;
        for (i, (count, p95)) in s.points.iter().enumerate() {
            // A p95 the period's sample cannot support is left out, as a gap.
            match support::shown(0.95, *count, *p95) {
                Some(v) => {
                    let _ = write!(
                        d,
                        "{}{} {}",
                        if d.is_empty() {
                            "M"
                        } else if pen {
                            " L"
                        } else {
                            " M"
                        },
                        c(slots.center(i)),
                        c(y(v))
                    );
                    let _ = write!(
                        dots,
                        r#"<circle data-point="" cx="{}" cy="{}" r="3.5" fill="{color}"><title>{} · {} UTC: p95 {} ms (n={count})</title></circle>"#,
                        c(slots.center(i)),
                        c(y(v)),
                        esc(&s.channel),
                        esc(&period_label(&w.periods[i])),
                        fmt_num(Some(v))
                    );
                    pen = true;
                }
                None => pen = false,
            }
        }
        if d.is_empty() {
            continue;
        }
        let _ = write!(
            body,
            r#"<path data-series="{}" d="{d}" fill="none" stroke="{color}" stroke-width="2.5"/>{dots}"#,
            esc(&s.channel)
        );
        items.push((color.to_string(), s.channel.clone(), Mark::Line));
    }
    body.push_str(&slots.labels(w, bottom + 16.0));
    body.push_str(&x_label(
        &format!("{} (start, UTC)", w.period.name()),
        left,
        right,
        bottom + 36.0,
    ));
    body.push_str(&y_label("p95 end-to-end, t0→t7 (ms)", 18.0, top, bottom));
    let (leg, leg_h) = legend(&items, left, bottom + 62.0, right - left);
    let title = format!(
        "p95 end-to-end latency per channel and {} (UTC)",
        w.period.name()
    );
    let mut out = svg_open("p95-by-channel", &title, bottom + 62.0 + leg_h);
    out.push_str(&body);
    out.push_str(&leg);
    out
}

fn waterfall_chart(w: &Weekly) -> String {
    let longest = w
        .waterfall
        .iter()
        .map(|r| r.class.chars().count() + r.count.to_string().len() + 3)
        .max()
        .unwrap_or(10) as f64;
    let left = (longest * CHAR_W + 16.0).max(120.0);
    let (right, top) = (WIDTH - RIGHT_PAD, 38.0);
    let row_h = 22.0;
    let gap = 10.0;
    let bottom = top + w.waterfall.len() as f64 * (row_h + gap) + gap;
    let max = w
        .waterfall
        .iter()
        .map(|r| {
            let sum: f64 = r
                .phases
                .iter()
                .filter_map(|p| p.median)
                .filter(|v| *v > 0.0)
                .sum();
            sum.max(r.end_to_end_p50.unwrap_or(0.0))
        })
        .fold(0.0, f64::max);
    let (top_v, step) = nice(max);
    let x = |v: f64| left + (v / top_v).clamp(0.0, 1.0) * (right - left);
    let mut body = String::new();
    let n = (top_v / step).round() as usize;
    for i in 0..=n {
        let v = i as f64 * step;
        let _ = write!(
            body,
            r#"<line class="grid" x1="{0}" y1="{1}" x2="{0}" y2="{2}"/><text class="tick" x="{0}" y="{3}" text-anchor="middle">{4}</text>"#,
            c(x(v)),
            c(top),
            c(bottom),
            c(bottom + 16.0),
            tick(v)
        );
    }
    for (r_i, r) in w.waterfall.iter().enumerate() {
        let y0 = top + gap + r_i as f64 * (row_h + gap);
        let _ = write!(
            body,
            r#"<text x="{}" y="{}" text-anchor="end">{} ({})</text>"#,
            c(left - 8.0),
            c(y0 + row_h / 2.0 + 4.0),
            esc(&r.class),
            r.count
        );
        let mut cursor = 0.0;
        for (i, (phase, m)) in w.phases.iter().zip(&r.phases).enumerate() {
            // A phase no request of the class has is skipped, never drawn as 0.
            let Some(v) = m.median else { continue };
            if v <= 0.0 {
                continue;
            }
            let _ = write!(
                body,
                r#"<rect data-series="{}" data-class="{}" x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} · {}: median {} ms (n={}{})</title></rect>"#,
                esc(&phase.name),
                esc(&r.class),
                c(x(cursor)),
                c(y0),
                c(x(cursor + v) - x(cursor)),
                c(row_h),
                phase_color(i),
                esc(&r.class),
                esc(&phase.label),
                fmt_num(Some(v)),
                m.n,
                if m.estimated > 0 {
                    format!(", {} estimated", m.estimated)
                } else {
                    String::new()
                }
            );
            cursor += v;
        }
        if let Some(e) = r.end_to_end_p50 {
            let _ = write!(
                body,
                r##"<path data-series="end_to_end_p50" data-class="{}" d="M{} {} L{} {}" stroke="#1d232b" stroke-width="2.5"><title>{}: median end-to-end {} ms</title></path>"##,
                esc(&r.class),
                c(x(e)),
                c(y0 - 3.0),
                c(x(e)),
                c(y0 + row_h + 3.0),
                esc(&r.class),
                fmt_num(Some(e))
            );
        }
    }
    let _ = write!(
        body,
        r#"<line class="axis" x1="{l}" y1="{b}" x2="{r}" y2="{b}"/><line class="axis" x1="{l}" y1="{t}" x2="{l}" y2="{b}"/>"#,
        l = c(left),
        r = c(right),
        t = c(top),
        b = c(bottom)
    );
    body.push_str(&x_label(
        "median duration (ms), phases stacked in timeline order",
        left,
        right,
        bottom + 36.0,
    ));
    // The classes are the categories of the y axis: its label heads the column of names.
    let _ = write!(
        body,
        r#"<text class="tick" x="{}" y="{}" text-anchor="end">class (requests)</text>"#,
        c(left - 8.0),
        c(top - 4.0)
    );
    let mut items: Vec<(String, String, Mark)> = w
        .phases
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            w.waterfall
                .iter()
                .any(|r| r.phases[*i].median.is_some_and(|v| v > 0.0))
        })
        .map(|(i, p)| (phase_color(i).to_string(), p.label.clone(), Mark::Swatch))
        .collect();
    if w.waterfall.iter().any(|r| r.end_to_end_p50.is_some()) {
        items.push((
            "#1d232b".to_string(),
            "median end-to-end".to_string(),
            Mark::Tick,
        ));
    }
    let (leg, leg_h) = legend(&items, 70.0, bottom + 62.0, right - 70.0);
    let mut out = svg_open(
        "waterfall",
        "Median timeline per class (t0…t7)",
        bottom + 62.0 + leg_h,
    );
    out.push_str(&body);
    out.push_str(&leg);
    out
}

fn th(cells: &[&str], right: &[usize]) -> String {
    let mut out = String::from("<tr>");
    for (i, h) in cells.iter().enumerate() {
        if right.contains(&i) {
            let _ = write!(out, r#"<th class="n">{}</th>"#, esc(h));
        } else {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
    }
    out.push_str("</tr>\n");
    out
}

/// A table row; cells are HTML already; cells in `right` are numeric.
fn tr(cells: &[String], right: &[usize], class: Option<&str>) -> String {
    let mut out = match class {
        Some(k) => format!(r#"<tr class="{k}">"#),
        None => String::from("<tr>"),
    };
    for (i, cell) in cells.iter().enumerate() {
        if right.contains(&i) {
            let _ = write!(out, r#"<td class="n">{cell}</td>"#);
        } else {
            let _ = write!(out, "<td>{cell}</td>");
        }
    }
    out.push_str("</tr>\n");
    out
}

/// `fmt_pct` escaped for HTML (a withheld percentile reads `n<100`).
fn pct_html(p: &crate::summary::Pct) -> [String; 3] {
    fmt_pct(p).map(|t| esc(&t))
}

/// `fmt_q` escaped for HTML.
fn q_html(q: f64, n: u64, x: Option<f64>) -> String {
    esc(&fmt_q(q, n, x))
}

/// Up to this many models or channels side by side; more get one row per group.
const WIDE_GROUPS: usize = 4;

/// One row per metric, p50/p95/p99 of each group side by side.
fn wide_group_table(w: &Weekly, what: &str, groups: &[GroupMetrics]) -> String {
    let mut out =
        String::from("<table>\n<tr><th rowspan=\"2\">metric</th><th rowspan=\"2\">unit</th>");
    for g in groups {
        let _ = write!(
            out,
            r#"<th colspan="3" class="grp">{} {} <span class="note">({} requests)</span></th>"#,
            esc(what),
            key_html(&g.key),
            g.rows
        );
    }
    out.push_str("</tr>\n<tr>");
    for _ in groups {
        out.push_str(r#"<th class="n grp">p50</th><th class="n">p95</th><th class="n">p99</th>"#);
    }
    out.push_str("</tr>\n");
    for (k, m) in w.metrics.iter().enumerate() {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td>",
            esc(&m.label),
            esc(&m.unit)
        );
        for g in groups {
            let p = &g.pcts[k];
            for (j, v) in pct_html(p).into_iter().enumerate() {
                let _ = write!(
                    out,
                    r#"<td class="n{}" title="{} {}: n={}">{}</td>"#,
                    if j == 0 { " grp" } else { "" },
                    esc(what),
                    esc(&g.key),
                    p.n,
                    v
                );
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// One row per metric and group.
fn long_group_table(w: &Weekly, what: &str, groups: &[GroupMetrics]) -> String {
    let mut out = String::from("<table>\n");
    let right = [3, 4, 5, 6, 7];
    out.push_str(&th(
        &["metric", "unit", what, "requests", "n", "p50", "p95", "p99"],
        &right,
    ));
    for (k, m) in w.metrics.iter().enumerate() {
        for (j, g) in groups.iter().enumerate() {
            let pct = &g.pcts[k];
            let [p50, p95, p99] = pct_html(pct);
            let (name, unit) = if j == 0 {
                (esc(&m.label), esc(&m.unit))
            } else {
                (String::new(), String::new())
            };
            out.push_str(&tr(
                &[
                    name,
                    unit,
                    key_html(&g.key),
                    g.rows.to_string(),
                    pct.n.to_string(),
                    p50,
                    p95,
                    p99,
                ],
                &right,
                (j == 0).then_some("first"),
            ));
        }
    }
    out.push_str("</table>\n");
    out
}

fn h2(out: &mut String, i: usize) {
    let _ = writeln!(out, r#"<h2 id="s{}">{}</h2>"#, i + 1, esc(SECTIONS[i]));
}

pub fn render(s: &Summary, w: &Weekly) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<meta name=\"generator\" content=\"{}\">",
        esc(&s.tool)
    );
    let _ = writeln!(out, "<title>{} — tracediag</title>\n<style>", esc(&w.title));
    out.push_str(STYLE);
    let _ = writeln!(out, "</style>\n</head>\n<body>\n<h1>{}</h1>", esc(&w.title));
    let span = s
        .time_span
        .as_ref()
        .map(|t| format!("{} → {}", t.start, t.end))
        .unwrap_or_else(|| "no timestamps".into());
    let _ = writeln!(
        out,
        r#"<p class="lead">{} — {} requests, {} (UTC). Rules: {} ({}). Failed, cancelled and timed-out requests are included in every figure.</p>"#,
        esc(&s.tool),
        s.rows,
        esc(&span),
        code(&s.rules.name),
        code(&s.rules.source)
    );
    let _ = writeln!(
        out,
        r#"<p class="verdict"><strong>Verdict:</strong> {}</p>"#,
        esc(&verdict(s, w))
    );

    // What was analysed.
    h2(&mut out, 0);
    out.push_str("<dl class=\"analysed\">\n");
    for (label, text) in analysed(s, w) {
        let html = if label == "Files" {
            s.inputs
                .iter()
                .map(|i| format!("{} ({}, {})", code(&i.path), esc(&i.format), i.mapped()))
                .collect::<Vec<_>>()
                .join("<br>")
        } else {
            esc(&text)
        };
        let _ = writeln!(out, "<dt>{}</dt><dd>{html}</dd>", esc(label));
    }
    for n in &s.notes {
        let _ = writeln!(out, "<dt>Note</dt><dd>{}</dd>", esc(n));
    }
    out.push_str("</dl>\n");

    // Class table.
    h2(&mut out, 1);
    let _ = writeln!(
        out,
        "<p>The first matching rule gives each request its class (table order; <code>{}</code> when none matched). {}</p>",
        esc(w.class_order.last().map(String::as_str).unwrap_or("normal")),
        esc(&trend_sentence(w))
    );
    out.push_str("<table>\n");
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
    let mut right = vec![0, 2, 3, 4, 5, 6, 7, 8];
    if w.trend.is_some() {
        head.push(&requests_trend);
        head.push(&share_trend);
        right.extend([9, 10]);
    }
    out.push_str(&th(&head, &right));
    for cl in s.classes.iter().filter(|c| c.count > 0) {
        let [p50, p95, p99] = pct_html(&cl.end_to_end_ms);
        let mut cells = vec![
            cl.order
                .map(|o| o.to_string())
                .unwrap_or_else(|| "—".into()),
            format!(
                r#"<span class="cls"><span style="display:inline-block;width:10px;height:10px;margin-right:6px;background:{}"></span>{}</span>"#,
                class_color(w, &cl.class),
                code(&cl.class)
            ),
            cl.count.to_string(),
            fmt_share(cl.share),
            cl.failures.to_string(),
            cl.end_to_end_ms.n.to_string(),
            p50,
            p95,
            p99,
        ];
        if let Some(t) = trend_cells(w, &cl.class) {
            cells.extend(t.iter().map(|(a, b)| format!("{}<br>{}", esc(a), esc(b))));
        }
        out.push_str(&tr(&cells, &right, None));
    }
    out.push_str("</table>\n");
    // Where to look, a table of its own: beside the figures the text would not fit a
    // screen.
    let found: Vec<_> = s
        .classes
        .iter()
        .filter(|c| c.count > 0 && c.order.is_some())
        .collect();
    if !found.is_empty() {
        out.push_str("<h3>Where to look</h3>\n<table>\n");
        out.push_str(&th(&["class", "look at", "layer", "next check"], &[]));
        for cl in found {
            let cells = vec![
                format!(r#"<span class="cls">{}</span>"#, code(&cl.class)),
                code(&cl.look_at),
                esc(&cl.layer),
                esc(&cl.next_check),
            ];
            out.push_str(&tr(&cells, &[], None));
        }
        out.push_str("</table>\n");
    }

    // Class share over time.
    h2(&mut out, 2);
    if w.periods.is_empty() {
        out.push_str("<p class=\"note\">No request has a timestamp.</p>\n");
    } else {
        out.push_str(&figure(
            class_share_chart(w),
            &format!(
                "Each bar is one {p} (UTC); segments are classes in table order from the bottom, normal on top; n is the period's requests. {}",
                partial_sentence(w)
            ),
        ));
    }

    // p95 per channel.
    h2(&mut out, 3);
    if w.periods.is_empty() {
        out.push_str("<p class=\"note\">No request has a timestamp.</p>\n");
    } else if !w
        .channel_p95
        .iter()
        .any(|s| s.points.iter().any(|p| p.1.is_some()))
    {
        out.push_str(&format!(
            "<p class=\"note\">No request with a timestamp has an end-to-end time ({}).</p>\n",
            esc(&w.end_to_end)
        ));
    } else if !w.channel_p95.iter().any(|s| {
        s.points
            .iter()
            .any(|&(n, v)| support::shown(0.95, n, v).is_some())
    }) {
        let _ = writeln!(
            out,
            "<p class=\"note\">No channel has {} requests with an end-to-end time in any {p}: n too small for a p95.</p>",
            support::P95_MIN_N
        );
    } else {
        out.push_str(&figure(
            p95_chart(w),
            &format!(
                "p95 of {} ({}failures included) per channel and {p}; a gap means fewer than {} requests of the channel had an end-to-end time in that {p} (none, or n too small for a p95).",
                w.end_to_end,
                w.end_to_end_span().map(|s| format!("{s}, ")).unwrap_or_default(),
                support::P95_MIN_N
            ),
        ));
    }

    // Median timeline.
    h2(&mut out, 4);
    let drawable = w.waterfall.iter().any(|r| {
        r.end_to_end_p50.is_some() || r.phases.iter().any(|p| p.median.is_some_and(|v| v > 0.0))
    });
    if w.waterfall.is_empty() {
        out.push_str("<p class=\"note\">No requests.</p>\n");
    } else {
        if drawable {
            out.push_str(&figure(waterfall_chart(w), WATERFALL_CAPTION));
        } else {
            out.push_str(
                "<p class=\"note\">No request has a timeline phase or an end-to-end time.</p>\n",
            );
        }
        let used: Vec<usize> = (0..w.phases.len())
            .filter(|&i| w.waterfall.iter().any(|r| r.phases[i].median.is_some()))
            .collect();
        out.push_str("<table>\n");
        let mut head: Vec<&str> = vec!["class", "requests"];
        head.extend(used.iter().map(|&i| w.phases[i].label.as_str()));
        head.push("e2e p50");
        let right: Vec<usize> = (1..head.len()).collect();
        out.push_str(&th(&head, &right));
        for r in &w.waterfall {
            let mut cells = vec![code(&r.class), r.count.to_string()];
            for &i in &used {
                cells.push(fmt_num(r.phases[i].median));
            }
            cells.push(fmt_num(r.end_to_end_p50));
            out.push_str(&tr(&cells, &right, None));
        }
        out.push_str("</table>\n");
        if !used.is_empty() {
            out.push_str("<table>\n");
            out.push_str(&th(&["phase", "computed as"], &[]));
            for &i in &used {
                out.push_str(&tr(
                    &[esc(&w.phases[i].label), esc(&w.phases[i].doc)],
                    &[],
                    None,
                ));
            }
            out.push_str("</table>\n");
        }
    }

    // Distributions.
    h2(&mut out, 5);
    out.push_str("<p>Every named metric over all requests that have it; <em>null</em> counts the requests without the figure (never read as 0), <em>estimated</em> the values built on the estimated t1 offset.</p>\n<table>\n");
    let right = [2, 3, 4, 5, 6, 7];
    out.push_str(&th(
        &[
            "metric",
            "unit",
            "n",
            "null",
            "estimated",
            "p50",
            "p95",
            "p99",
        ],
        &right,
    ));
    for cdf in &w.cdfs {
        let m = s.metrics.iter().find(|m| m.name == cdf.name);
        out.push_str(&tr(
            &[
                esc(&cdf.label),
                esc(&cdf.unit),
                cdf.n.to_string(),
                m.map(|m| m.nulls.to_string()).unwrap_or_else(|| "—".into()),
                m.and_then(|m| m.estimated)
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "—".into()),
                q_html(0.5, cdf.n, m.and_then(|m| m.pct.p50).or(cdf.at(0.5))),
                q_html(0.95, cdf.n, m.and_then(|m| m.pct.p95).or(cdf.at(0.95))),
                q_html(0.99, cdf.n, m.and_then(|m| m.pct.p99).or(cdf.at(0.99))),
            ],
            &right,
            None,
        ));
    }
    out.push_str("</table>\n");
    let milestone = |l: &str| l.starts_with("Time to") || l.starts_with("End-to-End");
    let groups: [CdfGroup; 4] = [
        (
            CHARTS[3],
            "CDF: time to headers, first event, first effective response, first visible text, end-to-end",
            w.cdfs.iter().filter(|c| c.unit == "ms" && milestone(&c.label)).collect(),
            "ms",
            true,
            "Share of requests that reached each point within x milliseconds (log scale). Time to Headers counts from upstream start (t1); the others from gateway receive (t0).",
        ),
        (
            CHARTS[4],
            "CDF: phase durations and inter-token latency",
            w.cdfs.iter().filter(|c| c.unit == "ms" && !milestone(&c.label)).collect(),
            "ms",
            true,
            "Same-origin deltas between timeline points (log scale); values at or below 0 (out-of-order data) sit at the left edge.",
        ),
        (
            CHARTS[5],
            "CDF: visible output rate",
            w.cdfs.iter().filter(|c| c.unit == "tokens/s").collect(),
            "tokens/s",
            false,
            "Output tokens over the visible generation window (t5→t6), recomputed from the recorded token count.",
        ),
        (
            CHARTS[6],
            "CDF: other named metrics",
            w.cdfs.iter().filter(|c| c.unit != "ms" && c.unit != "tokens/s").collect(),
            "value",
            false,
            "Named metrics of the rule table that are neither durations nor rates.",
        ),
    ];
    for (name, title, cdfs, unit, log, caption) in groups {
        if cdfs.is_empty() {
            continue;
        }
        if cdfs.iter().all(|c| c.n == 0) {
            let _ = writeln!(
                out,
                "<p class=\"note\">{}: no request has any of these figures.</p>",
                esc(title)
            );
            continue;
        }
        out.push_str(&figure(cdf_chart(name, title, &cdfs, unit, log), caption));
    }

    // Per model and channel.
    for (i, what, groups) in [(6, "model", &w.by_model), (7, "channel", &w.by_channel)] {
        h2(&mut out, i);
        let _ = writeln!(
            out,
            "<p>p50/p95/p99 of each named metric per {what}, failures included; n (in the tooltips) counts the requests that have the figure.</p>"
        );
        // Once, under the first of the two tables.
        let left_out = if what == "model" {
            LeftOut::lines(&s.metrics_left_out)
        } else {
            vec![]
        };
        for l in left_out {
            let _ = writeln!(out, "<p>{}</p>", esc(&l));
        }
        if groups.len() <= WIDE_GROUPS {
            out.push_str(&wide_group_table(w, what, groups));
        } else {
            out.push_str(&long_group_table(w, what, groups));
        }
    }

    // Data quality.
    h2(&mut out, 8);
    out.push_str("<p>Flagged rows are kept and classified as they are; nothing is fixed silently.</p>\n<table>\n");
    out.push_str(&th(&["check", "rows", "examples", "what it means"], &[1]));
    for q in &s.quality {
        out.push_str(&tr(
            &[
                code(&q.check),
                q.count.to_string(),
                esc(&q.examples.join(", ")),
                esc(&q.doc),
            ],
            &[1],
            None,
        ));
    }
    out.push_str("</table>\n");
    if let Some(b) = &s.bad_rows {
        let _ = writeln!(out, "<p>{}:</p>\n<ul>", esc(&b.sentence()));
        for e in &b.examples {
            let _ = writeln!(out, "<li>{}</li>", esc(e));
        }
        out.push_str("</ul>\n");
    }

    // Rules and thresholds.
    h2(&mut out, 9);
    let _ = writeln!(
        out,
        "<p>Rule table {} ({}), read top to bottom; the first rule that matches gives the class.</p>",
        code(&s.rules.name),
        code(&s.rules.source)
    );
    out.push_str("<table>\n");
    out.push_str(&th(&["#", "class", "when", "look at"], &[0]));
    for r in &w.rules {
        out.push_str(&tr(
            &[
                r.order.to_string(),
                code(&r.class),
                code(&r.when),
                code(&r.look_at),
            ],
            &[0],
            None,
        ));
    }
    if let Some(d) = w.class_order.last() {
        out.push_str(&tr(
            &["—".into(), code(d), "no rule matched".into(), String::new()],
            &[0],
            None,
        ));
    }
    out.push_str("</table>\n<p>Thresholds used (after any <code>--set</code>):</p>\n<table>\n");
    out.push_str(&th(&["parameter", "value", "unit", "meaning"], &[1]));
    for p in &w.params {
        out.push_str(&tr(
            &[
                code(&p.name),
                format!("{}", p.value),
                esc(&p.unit),
                esc(&p.doc),
            ],
            &[1],
            None,
        ));
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}

/// Horizontal grid lines and labels at 0, 25, 50, 75 and 100 % of a share axis.
fn percent_grid(body: &mut String, left: f64, right: f64, y: &dyn Fn(f64) -> f64) {
    for p in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            body,
            r#"<line class="grid" x1="{}" y1="{}" x2="{}" y2="{}"/><text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            c(left),
            c(y(p)),
            c(right),
            c(y(p)),
            c(left - 6.0),
            c(y(p) + 4.0),
            (p * 100.0) as i64
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_text() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn nice_axes() {
        assert_eq!(nice(37_379.0), (40_000.0, 10_000.0));
        assert_eq!(nice(9.0), (10.0, 2.0));
        assert_eq!(tick(100_000.0), "100\u{2009}000");
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(tick(0.5), "0.5");
    }
}
