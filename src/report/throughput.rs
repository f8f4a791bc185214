//! The `throughput` report: per deployment or group, min / mean / p95 / max of input and
//! output tokens per minute and requests per minute.

use super::{fit, fmt_num, fmt_q, render, table, Width};
use crate::throughput::{Stat, Throughput};

fn cells(s: &Stat) -> [String; 4] {
    [
        fmt_num(s.min),
        fmt_num(s.mean),
        fmt_q(0.95, s.n, s.p95),
        fmt_num(s.max),
    ]
}

pub fn terminal(t: &Throughput, width: Width) -> String {
    let mut out = format!(
        "{} — throughput from {}, per minute, {} → {}\npercentile rule: {}\n\n",
        t.tool,
        t.source,
        t.first_minute.as_deref().unwrap_or("?"),
        t.last_minute.as_deref().unwrap_or("?"),
        t.percentile_rule
    );
    if let Some(m) = crate::summary::MappedColumn::line(&t.mapped_columns) {
        // Under the first line, before the blank one.
        out.insert_str(out.len() - 1, &format!("{m}\n"));
    }
    let mut header: Vec<String> = t.by.clone();
    header.extend(["minutes", "per minute", "min", "mean", "p95", "max"].map(String::from));
    let n = t.by.len();
    let mut table = table(&header, [n].into_iter().chain(n + 2..header.len()));
    for r in &t.rows {
        let mut measures = vec![
            ("input tokens", &r.input_tpm),
            ("output tokens", &r.output_tpm),
            ("requests", &r.rpm),
        ];
        if let Some(c) = &r.cached_tpm {
            measures.push(("cached input tokens", c));
        }
        for (k, (name, stat)) in measures.into_iter().enumerate() {
            // Name the group once, on its first line.
            let mut row: Vec<String> = if k == 0 {
                r.key
                    .iter()
                    .map(|v| v.clone().unwrap_or_else(|| "(none)".into()))
                    .collect()
            } else {
                vec![String::new(); n]
            };
            row.push(if k == 0 {
                r.minutes.to_string()
            } else {
                String::new()
            });
            row.push(name.to_string());
            row.extend(cells(stat));
            table.add_row(row);
        }
    }
    out.push_str(&render(table, width));
    out.push('\n');
    fit(&out, width)
}
