//! The shipped rule tables, one per clock a log can be timed on, and the choice of a table
//! for each input.
//!
//! A gateway that logs the full t0…t7 timeline is diagnosed by `rules/gateway.toml`; the
//! logs real relays, benchmark clients and inference servers write have fewer points, or
//! points on a clock of their own, and each such clock has a table of its own that says
//! what it can and cannot tell apart. The tables are merged into one set (`merge`) so that
//! every command takes one `RuleSet`; once the inputs are read, the plan keeps only the
//! tables some input is classified by (`RuleSet::choose`), and where two remain each rule
//! holds only on its own table's rows (`TABLE_COLUMN`).

use std::collections::BTreeSet;

use super::RuleSet;
use crate::error::{Error, Result};

/// One shipped table: its name, the path users see, and its text (compiled in, so that the
/// binary works from anywhere).
pub struct Shipped {
    pub name: &'static str,
    pub path: &'static str,
    pub toml: &'static str,
}

/// The shipped tables, in the order an input is matched against them: the finest clock
/// first, so that a log holding the full timeline is never judged on a coarser one.
pub const SHIPPED: &[Shipped] = &[
    Shipped {
        name: "gateway",
        path: "rules/gateway.toml",
        toml: include_str!("../../rules/gateway.toml"),
    },
    Shipped {
        name: "relay",
        path: "rules/relay.toml",
        toml: include_str!("../../rules/relay.toml"),
    },
    Shipped {
        name: "gateway_coarse",
        path: "rules/gateway_coarse.toml",
        toml: include_str!("../../rules/gateway_coarse.toml"),
    },
    Shipped {
        name: "upstream",
        path: "rules/upstream.toml",
        toml: include_str!("../../rules/upstream.toml"),
    },
    // An OpenTelemetry export maps both the server's and a client's fields; the server's
    // spans are the finer clock.
    Shipped {
        name: "engine",
        path: "rules/engine.toml",
        toml: include_str!("../../rules/engine.toml"),
    },
    Shipped {
        name: "client",
        path: "rules/client.toml",
        toml: include_str!("../../rules/client.toml"),
    },
];

/// Column holding, in a plan classified by more than one table, the table (its position
/// in `RuleSet::parts`) that classifies the row.
pub const TABLE_COLUMN: &str = "__table";

/// One shipped table by name, loaded on its own.
pub fn shipped_table(name: &str) -> Result<RuleSet> {
    match SHIPPED.iter().find(|s| s.name == name) {
        Some(s) => RuleSet::parse(s.toml, s.path),
        None => {
            let mut msg = format!("no shipped rule table is called `{name}`");
            let names = SHIPPED.iter().map(|s| s.name);
            if let Some(n) = super::types::nearest(name, names) {
                msg.push_str(&format!("; did you mean `{n}`?"));
            }
            msg.push_str(&format!(
                " (the tables: {})",
                SHIPPED
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            Err(Error::Usage(msg))
        }
    }
}

/// Every shipped table, merged in matching order.
pub fn shipped() -> Result<RuleSet> {
    let tables = SHIPPED
        .iter()
        .map(|s| RuleSet::parse(s.toml, s.path))
        .collect::<Result<Vec<_>>>()?;
    merge(tables)
}

/// One set of several tables: their rules one table after another, their metrics and
/// parameters side by side. Two tables may share a metric or parameter only where they
/// define it alike (it is then kept once): a set computes each name once for every row.
pub fn merge(tables: Vec<RuleSet>) -> Result<RuleSet> {
    let mut tables = tables.into_iter();
    let Some(mut out) = tables.next() else {
        return Err(Error::Usage("no rule table to merge".into()));
    };
    for t in tables {
        let conflict = |what: &str, name: &str| {
            Error::Usage(format!(
                "rule tables `{}` and `{}` both define the {what} `{name}`, differently",
                out.name, t.name
            ))
        };
        if t.catalogue != out.catalogue || t.default_class != out.default_class {
            return Err(Error::Usage(format!(
                "rule tables `{}` and `{}` differ in catalogue or default class: they cannot classify one log",
                out.name, t.name
            )));
        }
        let offset = out.parts.len();
        for mut p in t.params.clone() {
            match out.params.iter().find(|q| q.name == p.name) {
                Some(q) if q.value == p.value && q.unit == p.unit => {}
                Some(_) => return Err(conflict("parameter", &p.name)),
                None => {
                    p.part += offset;
                    out.params.push(p);
                }
            }
        }
        for m in t.metrics_in_file_order() {
            match out.metrics.iter().find(|q| q.name == m.name) {
                Some(q) if q.expr == m.expr => {}
                Some(_) => return Err(conflict("metric", &m.name)),
                None => {
                    let at = out.metric_file_order.len();
                    out.metric_file_order.insert(m.name.clone(), at);
                }
            }
        }
        // Dependency order within each table is kept by appending its metrics in its own
        // dependency order.
        for m in &t.metrics {
            if !out.metrics.iter().any(|q| q.name == m.name) {
                let mut m = m.clone();
                m.part += offset;
                out.metrics.push(m);
            }
        }
        out.rules.extend(t.rules.iter().cloned().map(|mut r| {
            r.part += offset;
            r
        }));
        out.parts.extend(t.parts.iter().cloned());
        out.name = format!("{}+{}", out.name, t.name);
        out.source = format!("{}, {}", out.source, t.source);
    }
    Ok(out)
}

impl RuleSet {
    /// The table each input is classified by, given the catalogue fields each maps: the
    /// first (in `parts` order) whose `applies_to` names one of them, or one that applies
    /// to any input; an input no table claims is the first table's, whose
    /// `insufficient_data` then names what is missing. Returns the set of the tables
    /// chosen (in their order) and, per input, its table's position in it.
    pub fn choose(&self, mapped: &[BTreeSet<String>]) -> (RuleSet, Vec<usize>) {
        let pick = |fields: &BTreeSet<String>| {
            self.parts
                .iter()
                .position(|p| {
                    p.applies_to.is_empty() || p.applies_to.iter().any(|f| fields.contains(f))
                })
                .unwrap_or(0)
        };
        let picked: Vec<usize> = mapped.iter().map(pick).collect();
        let kept: Vec<usize> = if picked.is_empty() {
            vec![0]
        } else {
            picked
                .iter()
                .copied()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        let new_index = |p: usize| kept.iter().position(|k| *k == p);
        let mut set = self.clone();
        set.parts = kept.iter().map(|&k| self.parts[k].clone()).collect();
        set.rules.retain(|r| new_index(r.part).is_some());
        // A metric or parameter two tables share was kept once, under the first: it stays
        // wherever a kept table defines it.
        let defined = |name: &str| set.parts.iter().any(|p| p.defines.contains(name));
        let params: Vec<_> = set
            .params
            .iter()
            .filter(|p| defined(&p.name))
            .cloned()
            .collect();
        let metrics: Vec<_> = set
            .metrics
            .iter()
            .filter(|m| defined(&m.name))
            .cloned()
            .collect();
        set.params = params;
        set.metrics = metrics;
        // Each under the first kept table that defines it.
        let owner = |parts: &[super::Part], name: &str| {
            parts
                .iter()
                .position(|p| p.defines.contains(name))
                .unwrap_or(0)
        };
        for p in &mut set.params {
            p.part = owner(&set.parts, &p.name);
        }
        for m in &mut set.metrics {
            m.part = owner(&set.parts, &m.name);
        }
        for r in &mut set.rules {
            r.part = new_index(r.part).unwrap_or(0);
        }
        let first = &set.parts[0];
        set.name = set
            .parts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        set.source = set
            .parts
            .iter()
            .map(|p| p.source.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if set.parts.len() == 1 {
            set.text = first.text.clone();
            set.description = first.description.clone();
        }
        let per_input = picked
            .into_iter()
            .map(|p| new_index(p).unwrap_or(0))
            .collect();
        (set, per_input)
    }

    /// The table of `part` alone, as loaded from its file.
    pub fn part_alone(&self, part: usize) -> Result<RuleSet> {
        let p = &self.parts[part];
        let mut alone = RuleSet::parse(&p.text, &p.source)?;
        for q in &self.params {
            if let Some(a) = alone.params.iter_mut().find(|a| a.name == q.name) {
                a.value = q.value;
            }
        }
        let has = |o: &&String| {
            let name = o.split('=').next().unwrap_or_default();
            alone.params.iter().any(|a| a.name == name)
        };
        alone.overrides = self.overrides.iter().filter(has).cloned().collect();
        Ok(alone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// The shipped tables merge (no two define one name differently), and each input goes
    /// to the finest table whose points it has.
    #[test]
    fn inputs_get_the_finest_table_they_have_points_for() {
        let set = shipped().unwrap();
        assert_eq!(set.parts.len(), SHIPPED.len());
        let (chosen, per_input) = set.choose(&[
            fields(&[
                "upstream_headers_ms",
                "total_handler_ms",
                "first_sse_event_ms",
            ]),
            fields(&["relay_first_response_ms", "relay_total_ms"]),
            fields(&["client_ttft_ms", "client_latency_ms"]),
            fields(&["model"]),
        ]);
        let names: Vec<&str> = chosen.parts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["gateway", "relay", "client"]);
        assert_eq!(per_input, [0, 1, 2, 0]);
        assert!(chosen.rules.iter().all(|r| r.part < 3));
        let (one, per) = set.choose(&[fields(&["first_sse_event_ms", "upstream_done_ms"])]);
        assert_eq!(one.name, "gateway_coarse");
        assert_eq!(one.parts.len(), 1);
        assert_eq!(per, [0]);
    }

    #[test]
    fn an_unknown_table_name_gets_a_suggestion() {
        let e = shipped_table("realy").unwrap_err().to_string();
        assert!(e.contains("did you mean `relay`?"), "{e}");
    }
}
