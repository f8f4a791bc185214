//! One request's timeline: its points placed on the t0 clock and the phases between them,
//! each taken from the rule table's metrics (`RuleSet::metric_between`), not from a copy
//! of the time-origin model here.

use super::evidence::sql;
use super::request::Row;
use super::result::*;
use crate::catalogue::{self, Event, Kind};
use crate::ruleset::timeline::GATEWAY_POINTS;
use crate::ruleset::types::Node;
use crate::ruleset::Metric;
use crate::ruleset::RuleSet;
use crate::summary::round3;

/// The catalogue field that records `event`, with its origin.
fn point_field(event: Event) -> Option<(&'static str, Event)> {
    catalogue::FIELDS.iter().find_map(|f| match f.kind {
        Kind::Point { origin, marks } if marks == event => Some((f.name, origin)),
        _ => None,
    })
}

/// A timeline point as the row has it.
#[derive(Debug, Clone)]
struct Point {
    event: Event,
    /// The field and its raw value (counted from `origin`); None for t0.
    field: Option<&'static str>,
    origin: Event,
    raw: Option<f64>,
    /// On the t0 clock, with whether that rests on an estimate.
    t0: Option<(f64, bool)>,
    /// How `t0` was obtained, or why the point could not be placed.
    t0_text: String,
}

/// A metric as `explain` names it: its name and its expression.
fn defined(m: &Metric) -> String {
    format!("{} = {}", m.name, sql(&m.node))
}

/// The row's timeline points. Placing a point on the t0 clock is the rule table's work:
/// its own field when that counts from t0, otherwise the table's metric from t0 to it
/// (`RuleSet::metric_between`, e.g. `headers_at_ms`), with that metric's estimate flag.
struct Clock<'r> {
    rules: &'r RuleSet,
    points: Vec<Point>,
    local: Vec<(&'static str, Option<f64>)>,
}

impl<'r> Clock<'r> {
    fn of(rules: &'r RuleSet, row: &Row) -> Clock<'r> {
        let local: Vec<(&'static str, Option<f64>)> = catalogue::FIELDS
            .iter()
            .filter(|f| f.kind == Kind::Phase)
            .map(|f| (f.name, row.num(f.name)))
            .collect();
        let mut points: Vec<Point> = vec![Point {
            event: Event::T0,
            field: None,
            origin: Event::T0,
            raw: Some(0.0),
            t0: Some((0.0, false)),
            t0_text: "0".into(),
        }];
        for e in GATEWAY_POINTS.into_iter().skip(1) {
            let Some((field, origin)) = point_field(e) else {
                continue;
            };
            let raw = row.num(field);
            let metric = rules.metric_between(Event::T0, e);
            // The metric, unless it is no more than the field itself.
            let metric = metric.filter(|m| m.node != Node::Field(field.to_string()));
            let (t0, t0_text) = match (raw, metric) {
                (Some(v), _) if origin == Event::T0 => (Some((v, false)), field.to_string()),
                (_, Some(m)) => match row.num(&m.name) {
                    Some(v) => (Some((v, row.estimated(&m.name))), defined(m)),
                    None if raw.is_none() && origin == Event::T0 => (
                        None,
                        format!(
                            "{} not logged ({field}), and {} has no value",
                            e.short(),
                            defined(m)
                        ),
                    ),
                    None if raw.is_none() => (None, format!("{} not logged ({field})", e.short())),
                    None => (
                        None,
                        format!(
                            "{} not on the t0 clock: {} has no value",
                            e.short(),
                            defined(m)
                        ),
                    ),
                },
                (None, None) => (None, format!("{} not logged ({field})", e.short())),
                (Some(_), None) => (
                    None,
                    format!(
                        "{} not on the t0 clock: the rule table has no metric from t0 to it",
                        e.short()
                    ),
                ),
            };
            points.push(Point {
                event: e,
                field: Some(field),
                origin,
                raw,
                t0,
                t0_text,
            });
        }
        Clock {
            rules,
            points,
            local,
        }
    }

    fn point(&self, e: Event) -> Option<&Point> {
        self.points.iter().find(|p| p.event == e)
    }

    /// The span from `a` to `b`, which `metric` (the rule table's, if any) spans: (ms,
    /// estimated, computed from) or why it cannot be had.
    fn span(
        &self,
        row: &Row,
        metric: Option<&Metric>,
        a: &Point,
        b: &Point,
    ) -> std::result::Result<(f64, bool, String), String> {
        // The rule table's metric for this stretch, when the row has it.
        if let Some(m) = metric {
            if let Some(v) = row.num(&m.name) {
                return Ok((v, row.estimated(&m.name), defined(m)));
            }
        }
        // Counted from `a` itself (t1 → t2 from upstream_headers_ms): exact, whether or not
        // `a` can be placed on the t0 clock.
        if let (Some(rb), true) = (b.raw, b.origin == a.event) {
            let f = b.field.unwrap_or("?");
            return Ok((rb, false, format!("{f} (ms since {})", a.event.short())));
        }
        let missing: Vec<&str> = [a, b]
            .iter()
            .filter(|p| p.t0.is_none() && p.raw.is_none())
            .map(|p| p.t0_text.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(missing.join("; "));
        }
        // Counted from the same origin: an exact difference.
        if let (Some(ra), Some(rb), Some(fa), Some(fb)) = (a.raw, b.raw, a.field, b.field) {
            if a.origin == b.origin {
                return Ok((
                    rb - ra,
                    false,
                    format!("{fb} - {fa} (both ms since {})", a.origin.short()),
                ));
            }
        }
        // Otherwise on the t0 clock.
        match (a.t0, b.t0) {
            (Some((ta, ea)), Some((tb, eb))) => {
                let text = if a.event == Event::T0 {
                    b.t0_text.clone()
                } else {
                    format!("({}) - ({})", b.t0_text, a.t0_text)
                };
                Ok((tb - ta, ea || eb, text))
            }
            _ => Err([a, b]
                .iter()
                .filter(|p| p.t0.is_none())
                .map(|p| p.t0_text.as_str())
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }
}

/// The origin of the clock a row's points count from when it holds no point of the
/// gateway's clock (t0 … t7, local phases) but some of another: the first such point's.
fn own_origin(row: &Row) -> Option<Event> {
    let holds = |f: &catalogue::Field| row.num(f.name).is_some();
    let gateway = catalogue::FIELDS.iter().any(|f| {
        holds(f)
            && match f.kind {
                Kind::Point { origin, .. } => origin == Event::T0,
                Kind::Phase => true,
                _ => false,
            }
    });
    if gateway {
        return None;
    }
    catalogue::FIELDS.iter().find_map(|f| match f.kind {
        Kind::Point { origin, .. } if holds(f) => Some(origin),
        _ => None,
    })
}

/// A timeline on a clock other than the gateway's: the origin, then every point the row
/// holds that counts from it, each stretch the difference of two points of that origin.
fn own_timeline(rules: &RuleSet, row: &Row, origin: Event) -> Timeline {
    let mut points: Vec<(Event, &'static str, f64)> = catalogue::FIELDS
        .iter()
        .filter_map(|f| match f.kind {
            Kind::Point { origin: o, marks } if o == origin => {
                row.num(f.name).map(|v| (marks, f.name, v))
            }
            _ => None,
        })
        .collect();
    points.sort_by_key(|(marks, _, _)| *marks);
    let mut phases = vec![];
    let mut from = (origin, None::<&str>, 0.0);
    for (marks, field, v) in points {
        let span = format!("{}→{}", from.0.short(), marks.short());
        let name = rules
            .metric_between(from.0, marks)
            .map_or_else(|| span.clone(), |m| m.name.clone());
        let how = match from.1 {
            None => format!("{field} (ms since {})", origin.short()),
            Some(f) => format!("{field} - {f} (both ms since {})", origin.short()),
        };
        phases.push(Phase {
            name,
            kind: PhaseKind::Timeline,
            span,
            duration_ms: Some(round3(v - from.2)),
            start_ms: Some(round3(from.2)),
            end_ms: Some(round3(v)),
            from: how,
            estimated: false,
            missing: None,
        });
        from = (marks, Some(field), v);
    }
    let last = phases.last().and_then(|p| p.end_ms);
    Timeline {
        origin: origin.short().to_string(),
        end_to_end_ms: last,
        scale_ms: last,
        t1_offset_ms: None,
        t1_offset_estimated: false,
        t1_offset_from: String::new(),
        phases,
    }
}

pub(super) fn timeline(rules: &RuleSet, row: &Row) -> Timeline {
    if let Some(origin) = own_origin(row) {
        return own_timeline(rules, row, origin);
    }
    let clock = Clock::of(rules, row);
    let mut phases = vec![];

    // The local phases, in sequence from t0.
    let mut at = Some(0.0);
    for (name, v) in &clock.local {
        let (start, end) = match (at, v) {
            (Some(s), Some(d)) => (Some(s), Some(s + d)),
            _ => (None, None),
        };
        at = end;
        phases.push(Phase {
            name: name.trim_end_matches("_ms").to_string(),
            kind: PhaseKind::Local,
            span: "local".into(),
            duration_ms: v.map(round3),
            start_ms: start.map(round3),
            end_ms: end.map(round3),
            from: format!("{name} (local phase)"),
            estimated: false,
            missing: v.is_none().then(|| format!("{name} not logged")),
        });
    }

    // Consecutive points; after each run of two or more phases that are missing or cannot
    // be placed on the t0 clock, a bridge across it, when its ends can be subtracted.
    let pts = &clock.points;
    let mut run_start: Option<usize> = None;
    let bridge = |phases: &mut Vec<Phase>, s: usize, end: usize| {
        if end > s + 1 {
            let b = timeline_phase(&clock, row, &pts[s], &pts[end], PhaseKind::Bridge);
            if b.start_ms.is_some() {
                phases.push(b);
            }
        }
    };
    for k in 0..pts.len().saturating_sub(1) {
        let phase = timeline_phase(&clock, row, &pts[k], &pts[k + 1], PhaseKind::Timeline);
        if phase.start_ms.is_none() {
            run_start.get_or_insert(k);
        } else if let Some(s) = run_start.take() {
            bridge(&mut phases, s, k);
        }
        phases.push(phase);
    }
    if let Some(s) = run_start {
        bridge(&mut phases, s, pts.len() - 1);
    }

    let t7 = clock.point(Event::T7).and_then(|p| p.t0);
    let t1 = clock.point(Event::T1);
    let latest = phases
        .iter()
        .filter_map(|p| p.end_ms)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    Timeline {
        origin: Event::T0.short().to_string(),
        end_to_end_ms: t7.map(|(v, _)| round3(v)),
        scale_ms: t7.map(|(v, _)| round3(v)).or(latest),
        t1_offset_ms: t1.and_then(|p| p.t0).map(|(v, _)| round3(v)),
        t1_offset_estimated: t1.and_then(|p| p.t0).is_some_and(|(_, e)| e),
        t1_offset_from: t1.map(|p| p.t0_text.clone()).unwrap_or_default(),
        phases,
    }
}

fn timeline_phase(clock: &Clock, row: &Row, a: &Point, b: &Point, kind: PhaseKind) -> Phase {
    let span = format!("{}→{}", a.event.short(), b.event.short());
    // The rule table's metric for the stretch, when it has one: its name and its value.
    let metric = clock.rules.metric_between(a.event, b.event);
    let name = match kind {
        PhaseKind::Bridge => {
            let inside: Vec<&str> = clock
                .points
                .iter()
                .filter(|p| p.event > a.event && p.event < b.event)
                .map(|p| p.event.short())
                .collect();
            format!("across {}", inside.join(", "))
        }
        _ => metric.map_or_else(|| span.clone(), |m| m.name.clone()),
    };
    let placed = match (a.t0, b.t0) {
        (Some((s, _)), Some((e, _))) => (Some(round3(s)), Some(round3(e))),
        _ => (None, None),
    };
    match clock.span(row, metric, a, b) {
        Ok((ms, estimated, from)) => Phase {
            name,
            kind,
            span,
            duration_ms: Some(round3(ms)),
            start_ms: placed.0,
            end_ms: placed.1,
            from,
            estimated,
            missing: None,
        },
        Err(why) => Phase {
            name,
            kind,
            span,
            duration_ms: None,
            start_ms: None,
            end_ms: None,
            from: String::new(),
            estimated: false,
            missing: Some(why),
        },
    }
}
