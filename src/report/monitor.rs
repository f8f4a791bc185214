//! The terminal and JSON reports of an Azure Monitor analysis: what was read, the class
//! table over all windows, each deployment's windows with the latency-formula fit, and the
//! metrics the service reported as failed.

use super::{fit, fmt_num, fmt_share, render, table, Width};
use crate::monitor::Summary;
use crate::source::azure::interval_ms;

/// What one window is, from the exports' intervals: `minute` for PT1M, `15 minutes`,
/// `hour`, `day`; `window of PT1M, PT1H` when the exports differ or give no length
/// (`FULL`), `window` when they say nothing.
fn window_name(s: &Summary) -> String {
    let mut given: Vec<&str> = s
        .inputs
        .iter()
        .flat_map(|i| i.intervals.iter().map(String::as_str))
        .collect();
    given.sort();
    given.dedup();
    let mut lengths: Vec<Option<i64>> = given.iter().map(|i| interval_ms(i)).collect();
    lengths.sort();
    lengths.dedup();
    match lengths.as_slice() {
        [Some(ms)] => length_name(*ms),
        [] => "window".into(),
        _ => format!("window of {}", given.join(", ")),
    }
}

/// `60000` → `minute`, `900000` → `15 minutes`, `3600000` → `hour`.
fn length_name(ms: i64) -> String {
    const UNITS: [(i64, &str); 5] = [
        (7 * 86_400_000, "week"),
        (86_400_000, "day"),
        (3_600_000, "hour"),
        (60_000, "minute"),
        (1_000, "second"),
    ];
    for (size, unit) in UNITS {
        if ms % size == 0 {
            return match ms / size {
                1 => unit.to_string(),
                n => format!("{n} {unit}s"),
            };
        }
    }
    format!("{ms} ms")
}

/// `2026-11-02T08:17:00.000Z` → `2026-11-02 08:17` (windows are minutes; the JSON keeps
/// the full timestamp).
fn minute(iso: &str) -> String {
    iso.get(..16)
        .map(|m| m.replacen('T', " ", 1))
        .unwrap_or_else(|| iso.to_string())
}

pub fn terminal(s: &Summary, width: Width) -> String {
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
        line(format!(
            "input: {} (Azure Monitor metrics, {} values; interval {}; {})",
            i.path,
            i.values,
            if i.intervals.is_empty() {
                "unknown".to_string()
            } else {
                i.intervals.join(", ")
            },
            i.metrics.join(", ")
        ));
    }
    let span = s
        .time_span
        .as_ref()
        .map(|t| format!("{} → {}", t.start, t.end))
        .unwrap_or_else(|| "none".into());
    let window = window_name(s);
    line(format!(
        "windows: {} (deployment × {window})   span: {span}",
        s.windows
    ));
    line(format!("baseline: {}", s.baseline));
    line(String::new());

    line("Diagnosis — the first matching rule gives each window its class".into());
    let mut t = table(
        &["#", "class", "windows", "share", "look at", "next check"],
        [2, 3],
    );
    for c in s.classes.iter().filter(|c| c.windows > 0) {
        t.add_row(vec![
            c.order.map(|o| o.to_string()).unwrap_or_else(|| "—".into()),
            c.class.clone(),
            c.windows.to_string(),
            fmt_share(c.share),
            c.look_at.clone(),
            c.next_check.clone(),
        ]);
    }
    line(render(t, width));
    line(String::new());

    line("Episodes — consecutive windows with one class (UTC), the figure to look at and its baseline (medians over the run)".into());
    let mut t = table(
        &[
            "deployment",
            "class",
            "from",
            "to",
            "windows",
            "look at",
            "value",
            "baseline",
        ],
        [4, 6, 7],
    );
    for e in &s.episodes {
        t.add_row(vec![
            e.deployment.clone(),
            e.class.clone(),
            minute(&e.first_window),
            minute(&e.last_window),
            e.windows.to_string(),
            e.look_at.clone(),
            fmt_num(e.value),
            fmt_num(e.baseline),
        ]);
    }
    line(render(t, width));
    line(String::new());

    line(format!(
        "Deployments — medians per deployment × {window}, except 429s total and PTU max %"
    ));
    line(
        "tokens/req: generated tokens per request; formula: OLS of TTLT on TTFT + TBT × tokens/req"
            .into(),
    );
    let mut t = table(
        &[
            "deployment",
            "windows",
            "TTLT",
            "TTFT",
            "TBT",
            "tokens/req",
            "requests",
            "429s total",
            "PTU max %",
            "formula slope",
            "R²",
        ],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    for d in &s.deployments {
        t.add_row(vec![
            d.deployment.clone(),
            d.windows.to_string(),
            fmt_num(d.median_ttlt_ms),
            fmt_num(d.median_time_to_response_ms),
            fmt_num(d.median_tbt_ms),
            fmt_num(d.median_generated_tokens_per_request),
            fmt_num(d.median_requests),
            fmt_num(d.requests_429),
            fmt_num(d.max_ptu_utilization_pct),
            d.formula
                .as_ref()
                .map(|f| format!("{:.2}", f.slope))
                .unwrap_or_else(|| "—".into()),
            d.formula
                .as_ref()
                .map(|f| format!("{:.2}", f.r_squared))
                .unwrap_or_else(|| "—".into()),
        ]);
    }
    line(render(t, width));
    if !s.metric_errors.is_empty() {
        line(String::new());
        line("Metrics the service reported as failed (HTTP 200 with an errorCode)".into());
        let mut t = table(&["resource", "metric", "code", "message"], []);
        for e in &s.metric_errors {
            t.add_row(vec![
                e.resource.clone(),
                e.metric.clone(),
                e.code.clone(),
                e.message.clone(),
            ]);
        }
        line(render(t, width));
    }
    fit(&out, width)
}

#[cfg(test)]
mod tests {
    use super::length_name;

    #[test]
    fn a_window_is_named_by_its_length() {
        assert_eq!(length_name(60_000), "minute");
        assert_eq!(length_name(15 * 60_000), "15 minutes");
        assert_eq!(length_name(3_600_000), "hour");
        assert_eq!(length_name(4 * 3_600_000), "4 hours");
        assert_eq!(length_name(86_400_000), "day");
        assert_eq!(length_name(90 * 60_000), "90 minutes");
        assert_eq!(length_name(500), "500 ms");
    }
}
