//! The request timeline as a rule table describes it: which of its metrics runs between
//! which two points. The report's waterfall and `explain`'s timeline are drawn from this
//! and the catalogue's points, so that how a figure moves from one origin to another (the
//! t1 offset, exact or estimated) is written once, in the rule file.
//!
//! A metric runs from `a` to `b` when the checker typed it as a time point counted from
//! `a` that marks `b` (it composes `upstream_headers_ms + t1_offset_ms` into t0→t2), or
//! when it is the difference of two such points of one origin (t0→t4 − t0→t3 runs t3→t4).
//! Anything else (a coalesce of two different stretches, a sum of durations) is no one
//! stretch of the timeline.

use super::types::Arith;
use super::{Metric, Node, RuleSet, Ty};
use crate::catalogue::{Event, Kind};

/// The gateway clock's points, in timeline order.
pub const GATEWAY_POINTS: [Event; 8] = [
    Event::T0,
    Event::T1,
    Event::T2,
    Event::T3,
    Event::T4,
    Event::T5,
    Event::T6,
    Event::T7,
];

impl RuleSet {
    /// The two points `node`'s value runs between (from, to), when it is one stretch of
    /// the timeline.
    pub fn interval(&self, node: &Node) -> Option<(Event, Event)> {
        match node {
            Node::Field(name) => match self.catalogue.field(name)?.kind {
                Kind::Point { origin, marks } => Some((origin, marks)),
                _ => None,
            },
            Node::Metric(name) => {
                let m = self.metrics.iter().find(|m| &m.name == name)?;
                match m.ty {
                    Ty::Point {
                        origin,
                        marks: Some(marks),
                    } => Some((origin, marks)),
                    Ty::Span => self.interval(&m.node),
                    _ => None,
                }
            }
            Node::Arith(Arith::Sub, a, b) => {
                let ((from_a, to), (from_b, from)) = (self.interval(a)?, self.interval(b)?);
                (from_a == from_b && from < to).then_some((from, to))
            }
            _ => None,
        }
    }

    /// The metric that runs from `a` to `b`: the first such in the file, so that a table
    /// can put the exact figure before a fallback of the same stretch.
    pub fn metric_between(&self, a: Event, b: Event) -> Option<&Metric> {
        self.metrics_in_file_order()
            .into_iter()
            .find(|m| self.interval(&Node::Metric(m.name.clone())) == Some((a, b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped table names a metric for every stretch between consecutive gateway
    /// points and for every point on the t0 clock.
    #[test]
    fn the_gateway_table_spans_the_timeline() {
        let rules = RuleSet::gateway().unwrap();
        let between = |a, b| rules.metric_between(a, b).map(|m| m.name.as_str());
        let consecutive: Vec<_> = GATEWAY_POINTS
            .windows(2)
            .map(|w| between(w[0], w[1]))
            .collect();
        assert_eq!(
            consecutive,
            [
                Some("t1_offset_ms"),
                Some("time_to_headers_ms"),
                Some("headers_to_first_event_ms"),
                Some("events_to_effective_ms"),
                Some("action_text_gap_ms"),
                Some("generation_window_ms"),
                Some("post_upstream_ms"),
            ]
        );
        let from_t0: Vec<_> = GATEWAY_POINTS[1..]
            .iter()
            .map(|e| between(Event::T0, *e))
            .collect();
        assert_eq!(
            from_t0,
            [
                Some("t1_offset_ms"),
                Some("headers_at_ms"),
                Some("time_to_first_event_ms"),
                Some("time_to_first_effective_ms"),
                Some("time_to_first_visible_text_ms"),
                Some("time_to_upstream_done_ms"),
                Some("end_to_end_ms"),
            ]
        );
        assert_eq!(between(Event::T2, Event::T4), Some("prefill_ms"));
        // Two stretches coalesced, or a point moved by a duration, are none.
        for name in [
            "decode_span_ms",
            "upstream_span_ms",
            "inter_token_latency_ms",
        ] {
            assert_eq!(rules.interval(&Node::Metric(name.into())), None, "{name}");
        }
    }

    #[test]
    fn a_difference_of_two_origins_or_backwards_is_no_stretch() {
        let rules = RuleSet::parse(
            r#"
name = "t"
description = "t"
default_class = "normal"

[[metrics]]
name = "backwards_ms"
expr = "first_response_ms - first_text_delta_ms"
doc = "x"

[[metrics]]
name = "gap_ms"
expr = "first_text_delta_ms - first_response_ms"
doc = "x"
"#,
            "t.toml",
        )
        .unwrap();
        let of = |n: &str| rules.interval(&Node::Metric(n.into()));
        assert_eq!(of("backwards_ms"), None);
        assert_eq!(of("gap_ms"), Some((Event::T4, Event::T5)));
    }
}
