//! Which percentiles a sample can support. A p99 of three values is the largest of them
//! stretched by interpolation, not a 99th percentile: a percentile above the median is
//! shown only when at least one value lies beyond its rank, that is when n ≥ 1/(1 − q)
//! (p95: 20 values, p99: 100). The value is still computed; every renderer asks here
//! whether to show it, and shows [`cell`] or JSON's null with [`withheld`] otherwise.
//! [`RULE`] is the sentence each output states once.

/// Values a p95 needs.
pub const P95_MIN_N: u64 = 20;
/// Values a p99 needs.
pub const P99_MIN_N: u64 = 100;

/// The rule as every output states it, once.
pub const RULE: &str = "p95 needs n ≥ 20, p99 n ≥ 100 (any percentile above the median: n ≥ 1/(1 − q)); with fewer values it is n too small, shown as \"n<20\", \"n<100\" (JSON: null, with the reason)";

/// The number of values the q-quantile needs: 1 up to the median, then 1/(1 − q) so that
/// one value lies beyond the rank (the maximum, q = 1, is a value itself).
pub fn min_n(q: f64) -> u64 {
    if q <= 0.5 || q >= 1.0 {
        1
    } else {
        // Rounded: 1/(1 − 0.95) is 19.999… in floating point.
        (1.0 / (1.0 - q)).round() as u64
    }
}

/// Whether the q-quantile of n values is shown.
pub fn supported(q: f64, n: u64) -> bool {
    n >= min_n(q)
}

/// The q-quantile `value` of n values as shown: null when the sample cannot support it.
pub fn shown(q: f64, n: u64, value: Option<f64>) -> Option<f64> {
    value.filter(|_| supported(q, n))
}

/// Why the q-quantile of n values is withheld (`n too small (n=3 < 100)`); `None` when it
/// is shown, or when there is no value at all (n = 0 says that by itself).
pub fn withheld(q: f64, n: u64) -> Option<String> {
    (n > 0 && !supported(q, n)).then(|| format!("n too small (n={n} < {})", min_n(q)))
}

/// A table cell for a withheld percentile (`n<100`), `None` when it is shown or n is 0
/// (the renderer shows its usual mark for a missing value).
pub fn cell(q: f64, n: u64) -> Option<String> {
    (n > 0 && !supported(q, n)).then(|| format!("n<{}", min_n(q)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_those_stated() {
        assert_eq!(min_n(0.95), P95_MIN_N);
        assert_eq!(min_n(0.99), P99_MIN_N);
        assert_eq!(min_n(0.5), 1);
        assert_eq!(min_n(0.1), 1);
        assert_eq!(min_n(0.9), 10);
        assert_eq!(min_n(1.0), 1);
        assert!(RULE.contains("p95 needs n ≥ 20") && RULE.contains("p99 n ≥ 100"));
        assert!(RULE.contains("n too small"));
    }

    #[test]
    fn p99_of_three_values_is_withheld_with_its_reason() {
        assert!(!supported(0.99, 3));
        assert!(supported(0.99, 100));
        assert!(!supported(0.95, 19));
        assert!(supported(0.95, 20));
        assert!(supported(0.5, 1));
        assert_eq!(shown(0.99, 3, Some(12.0)), None);
        assert_eq!(shown(0.99, 100, Some(12.0)), Some(12.0));
        assert_eq!(
            withheld(0.99, 3).as_deref(),
            Some("n too small (n=3 < 100)")
        );
        assert_eq!(withheld(0.99, 0), None);
        assert_eq!(withheld(0.5, 1), None);
        assert_eq!(cell(0.95, 7).as_deref(), Some("n<20"));
        assert_eq!(cell(0.95, 0), None);
    }
}
