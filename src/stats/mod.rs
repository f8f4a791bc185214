//! Statistics: every percentile tracediag reports is computed here, with polars'
//! linear-interpolation quantile (type 7, the method AIPerf, GenAI-Perf, vLLM and LLMPerf
//! use), over every row that has a value — failures included.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use polars::prelude::*;

use crate::summary::Pct;

pub mod counts;
pub mod exact;
pub mod guess;
pub mod histogram;
mod kept;
pub mod ranked;
mod slots;
pub mod support;
pub mod tuples;

pub const QUANTILES: [f64; 3] = [0.50, 0.95, 0.99];

/// Type-7 quantile of already sorted values, for figures computed outside polars (the
/// same method as `percentiles`).
pub fn quantile7(sorted: &[f64], q: f64) -> Option<f64> {
    quantile7_at(sorted.len() as u64, q, |i| sorted[i as usize])
}

/// Type-7 quantile q of n sorted values, `at(i)` being the value of 0-based rank i: only
/// the two values it interpolates between are read.
pub fn quantile7_at(n: u64, q: f64, at: impl Fn(u64) -> f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    // As polars does: the lower rank by truncation, the upper by ceiling.
    let h = (n - 1) as f64 * q;
    let lower = (h as u64).min(n - 1);
    let upper = (h.ceil() as u64).min(n - 1);
    Some(interpolate(h, lower, at(lower), at(upper)))
}

/// polars' linear interpolation (`QuantileMethod::Linear`), step for step: between the
/// values at ranks ⌊h⌋ and ⌈h⌉, `lower` being ⌊h⌋.
pub fn interpolate(h: f64, lower: u64, low: f64, high: f64) -> f64 {
    if low == high {
        low
    } else {
        (h - lower as f64) * (high - low) + low
    }
}

/// `f` of each item, in order, the items shared among the machine's threads (each takes
/// the next one left): the work between two passes is per value (a dozen or more,
/// independent), and one thread doing it all left the other idle.
pub fn par_map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.into_iter().map(f).collect();
    }
    let n = items.len();
    let queue = Mutex::new(items.into_iter().enumerate());
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = vec![];
                    loop {
                        let next = lock(&queue).next();
                        let Some((i, item)) = next else { break out };
                        out.push((i, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    debug_assert_eq!(done.len(), n);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Whether each value of `expr` is one of `values` (null where it is null), evaluated
/// morsel by morsel against one hash set built here.
///
/// Not polars' `is_in`: its streaming engine (0.55) turns an `is_in` over a literal set into
/// a semi-join on a branch of the stream that is zipped back to it, through a multiplexer
/// that buffers, without bound, what the slower branch has yet to take. Integers are
/// compared as `i64` (`u64` for a set of `u64`, such as hashes), anything else as text.
pub fn member_of(expr: Expr, values: &Series) -> Expr {
    enum Set {
        Int(PlHashSet<i64>),
        // A 64-bit hash does not fit an i64.
        Hash(PlHashSet<u64>),
        Text(PlHashSet<String>),
    }
    let build = || -> PolarsResult<Set> {
        Ok(if values.dtype() == &DataType::UInt64 {
            Set::Hash(values.u64()?.iter().flatten().collect())
        } else if values.dtype().is_integer() {
            let v = values.cast(&DataType::Int64)?;
            Set::Int(v.i64()?.iter().flatten().collect())
        } else {
            let v = values.cast(&DataType::String)?;
            Set::Text(v.str()?.iter().flatten().map(str::to_string).collect())
        })
    };
    // A set that cannot be built (values of no type a set holds) fails the query.
    let set = std::sync::Arc::new(build().map_err(|e| e.to_string()));
    expr.map(
        move |c: Column| {
            let name = c.name().clone();
            let set = set
                .as_ref()
                .as_ref()
                .map_err(|e| polars_err!(ComputeError: "{e}"))?;
            let found: BooleanChunked = match set {
                Set::Int(s) => c
                    .cast(&DataType::Int64)?
                    .i64()?
                    .apply_nonnull_values_generic(DataType::Boolean, |v| s.contains(&v)),
                Set::Hash(s) => c
                    .cast(&DataType::UInt64)?
                    .u64()?
                    .apply_nonnull_values_generic(DataType::Boolean, |v| s.contains(&v)),
                Set::Text(s) => c
                    .cast(&DataType::String)?
                    .str()?
                    .apply_nonnull_values_generic(DataType::Boolean, |v| s.contains(v)),
            };
            Ok(found.with_name(name).into_column())
        },
        |_, f| Ok(Field::new(f.name().clone(), DataType::Boolean)),
    )
}

/// Group key: one optional string per key column.
pub type Key = Vec<Option<String>>;

/// p50/p95/p99 of each of `values`, per group of `keys` (one group when `keys` is empty).
/// Groups come back sorted by key. Exact, in bounded memory (see `exact`).
pub fn percentiles(
    lf: LazyFrame,
    keys: &[String],
    values: &[String],
) -> PolarsResult<BTreeMap<Key, Vec<Pct>>> {
    let all: exact::Level = (0..keys.len()).collect();
    Ok(exact::percentiles_by_levels(lf, keys, &[all], values)?
        .pop()
        .unwrap_or_default())
}

/// Row counts per group.
pub fn counts(lf: LazyFrame, keys: &[String]) -> PolarsResult<BTreeMap<Key, u64>> {
    let df = grouped(lf, keys, vec![len().cast(DataType::UInt64).alias("__n")])?;
    by_key(&df, keys)
}

/// Sum of an integer expression per group.
pub fn sums(lf: LazyFrame, keys: &[String], e: Expr) -> PolarsResult<BTreeMap<Key, u64>> {
    let df = grouped(lf, keys, vec![e.cast(DataType::UInt64).sum().alias("__n")])?;
    by_key(&df, keys)
}

/// A grouped result's `__n` column by its key.
fn by_key(df: &DataFrame, keys: &[String]) -> PolarsResult<BTreeMap<Key, u64>> {
    let key_cols = key_columns(df, keys)?;
    let n = df.column("__n")?.u64()?;
    Ok(key_cols
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, n.get(i).unwrap_or(0)))
        .collect())
}

/// An aggregate: the rows where `flag` is true (null counts as false), named `name`.
pub fn true_count(flag: Expr, name: &str) -> Expr {
    flag.fill_null(lit(false))
        .cast(DataType::UInt64)
        .sum()
        .alias(name)
}

fn grouped(lf: LazyFrame, keys: &[String], aggs: Vec<Expr>) -> PolarsResult<DataFrame> {
    if keys.is_empty() {
        collect(lf.select(aggs))
    } else {
        let by: Vec<Expr> = keys.iter().map(|k| col(k.as_str())).collect();
        collect(lf.group_by(by).agg(aggs).with_columns(keys_as_text(keys)))
    }
}

/// The key columns of a grouped result as text, the form `Key` holds. Cast after the
/// group-by, on its few rows, not before it on every request.
pub fn keys_as_text(keys: &[String]) -> Vec<Expr> {
    keys.iter()
        .map(|k| col(k.as_str()).cast(DataType::String))
        .collect()
}

/// `c` at `height` rows: as it is, or its one value repeated (a literal's column in a
/// function of several columns may come as one value).
pub fn at_height(c: &Column, height: usize) -> Column {
    if c.len() == height {
        c.clone()
    } else {
        c.new_from_index(0, height)
    }
}

/// Run one query on polars' streaming engine.
pub fn collect(lf: LazyFrame) -> PolarsResult<DataFrame> {
    Ok(collect_all(vec![lf])?.pop().expect("one query, one frame"))
}

/// Run several queries as one on the streaming engine: a subplan they share (the scan,
/// the metrics, the classes) is computed once and fed to all of them.
pub fn collect_all(queries: Vec<LazyFrame>) -> PolarsResult<Vec<DataFrame>> {
    if queries.is_empty() {
        return Ok(vec![]);
    }
    let plans = queries.into_iter().map(|q| q.logical_plan).collect();
    LazyFrame::collect_all_with_engine(plans, Engine::Streaming, OptFlags::default())
}

/// A query of `lf` whose one function, `count`, receives each morsel's `inputs` and its
/// height, and whose only effect is what `count` adds, under a lock, to a pass's totals
/// (`histogram`, `kept`, `counts`, the data-quality examples): a streaming aggregate of
/// our own. Its frame (one row) is not needed.
///
/// No inputs (a histogram of no value by no key: the report's CDFs of a log none of whose
/// named metrics can be computed) have nothing to count: the query reads nothing, and
/// `count` is not called.
pub fn counting_query<F>(lf: &LazyFrame, mut inputs: Vec<Expr>, count: F) -> LazyFrame
where
    F: Fn(&[Column], usize) -> PolarsResult<()> + Send + Sync + 'static,
{
    if inputs.is_empty() {
        return DataFrame::empty().lazy();
    }
    let first = inputs.remove(0);
    let counted = first.map_many(
        move |cols: &mut [Column]| {
            let height = morsel_height(cols);
            count(cols, height)?;
            Ok(Column::new_scalar(
                "__counted".into(),
                Scalar::new(DataType::UInt64, AnyValue::UInt64(1)),
                height,
            ))
        },
        &inputs,
        |_, _| Ok(Field::new("__counted".into(), DataType::UInt64)),
    );
    lf.clone().select([counted.sum().alias("__counted")])
}

/// The rows of the morsel `cols` are of: those of its columns, a literal's (one value,
/// which `at_height` repeats) aside. An empty morsel has literals of one value beside
/// columns of none.
fn morsel_height(cols: &[Column]) -> usize {
    let longest = |scalar: bool| {
        cols.iter()
            .filter(|c| c.as_scalar_column().is_some() == scalar)
            .map(Column::len)
            .max()
    };
    longest(false).or(longest(true)).unwrap_or(0)
}

/// A pass's totals, locked: a morsel that failed leaves counts the pass's error discards
/// with them.
pub fn lock<T>(totals: &Mutex<T>) -> MutexGuard<'_, T> {
    totals.lock().unwrap_or_else(|e| e.into_inner())
}

/// At most this many queries share one scan in `collect_in_scans`. Each query on a shared
/// scan is a consumer of the stream, which buffers what the slowest has yet to take: 50 on
/// one scan of 10M requests peaked at 5.2 GB, 16 at 2.7 GB for 10 % more time (the
/// report's passes, 2026-12-02).
pub const QUERIES_PER_SCAN: usize = 16;

/// `collect_all` in groups of `QUERIES_PER_SCAN` queries, one scan each: the frames in the
/// queries' order.
pub fn collect_in_scans(queries: Vec<LazyFrame>) -> PolarsResult<Vec<DataFrame>> {
    let mut out = Vec::with_capacity(queries.len());
    let mut queries = queries.into_iter().peekable();
    while queries.peek().is_some() {
        out.extend(collect_all(
            queries.by_ref().take(QUERIES_PER_SCAN).collect(),
        )?);
    }
    Ok(out)
}

pub fn key_columns(df: &DataFrame, keys: &[String]) -> PolarsResult<Vec<Key>> {
    let cols: Vec<&StringChunked> = keys
        .iter()
        .map(|k| df.column(k.as_str()).and_then(|c| c.str()))
        .collect::<PolarsResult<_>>()?;
    Ok((0..df.height())
        .map(|i| cols.iter().map(|c| c.get(i).map(str::to_string)).collect())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item mapped once, the results in the items' order, however the threads took
    /// them (items of uneven cost), and none or one item as well.
    #[test]
    fn par_map_keeps_the_order() {
        let items: Vec<u64> = (0..200).collect();
        let out = par_map(items, |i| {
            // The first items take longest, so that the threads finish out of order.
            std::thread::sleep(std::time::Duration::from_micros((200 - i) * 5));
            i * 2
        });
        assert_eq!(out, (0..200).map(|i| i * 2).collect::<Vec<u64>>());
        assert_eq!(par_map(Vec::<u8>::new(), |i| i), Vec::<u8>::new());
        assert_eq!(par_map(vec![3], |i| i * 2), vec![6]);
    }

    /// NumPy: np.percentile([1, 2, 3, 4, 10], [50, 95, 99]) == [3.0, 8.8, 9.76].
    #[test]
    fn percentiles_are_type_7() {
        let df = df!("x" => [4.0f64, 1.0, 10.0, 3.0, 2.0]).unwrap();
        let p = percentiles(df.lazy(), &[], &["x".to_string()]).unwrap();
        let got = &p[&vec![]][0];
        assert_eq!(
            got,
            &Pct {
                n: 5,
                p50: Some(3.0),
                p95: Some(8.8),
                p99: Some(9.76)
            }
        );
    }

    #[test]
    fn nulls_are_not_zeros() {
        let df = df!("x" => [Some(100.0f64), None, None, Some(300.0)]).unwrap();
        let p = percentiles(df.lazy(), &[], &["x".to_string()]).unwrap();
        let got = &p[&vec![]][0];
        assert_eq!(got.n, 2);
        assert_eq!(got.p50, Some(200.0));
    }
}
