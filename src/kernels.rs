//! Functions of ours in the plan where polars' own expression costs much more per
//! request: comparisons of floats (the rule table's conditions, the data-quality checks)
//! and the first matching rule. Each means what the polars expression it replaces means;
//! the tests compare them with it.
//!
//! Comparisons: polars (without its SIMD kernels, which need a nightly compiler) builds
//! a comparison's boolean array one bit at a time through an iterator, and the plan
//! compares about 75 times per request. Here each word of 64 results is built in one loop
//! the compiler vectorises. The meaning is polars': null where either side is null, and
//! floats in polars' total order (every NaN equal to every other and above every number,
//! −0 equal to 0). Any other pair of types goes to polars' comparison of the two columns,
//! which the expression would have called.
//!
//! Tests (`holds`): a data-quality check is a test of many comparisons of the same few
//! timing columns (is any point after a later one, any timing negative, …). As polars
//! expressions, each comparison, `and`, `or` and `fill_null` built a column of every
//! request; here the whole test is evaluated a word of 64 requests at a time, each column
//! read once.
//!
//! The first match: polars evaluates `when(c0).then(0).when(c1).then(1)…` as one
//! `if_then_else` per rule, each building a column of every request; here the rules' bits
//! are read a word at a time and each request's index written once.

use polars::prelude::*;
use polars_arrow::array::BooleanArray;
use polars_arrow::bitmap::Bitmap;
use polars_arrow::compute::utils::combine_validities_and;

use crate::ruleset::types::Cmp;

/// `$pack($xs, $ys, f)`, `f` being `op` of two floats in polars' total order (`ge`, `eq`):
/// each operator its own closure, so each its own loop for the compiler to vectorise.
macro_rules! pairs {
    ($op:expr, $pack:ident, $xs:expr, $ys:expr) => {
        match $op {
            Cmp::Eq => $pack($xs, $ys, eq),
            Cmp::NotEq => $pack($xs, $ys, |x, y| !eq(x, y)),
            Cmp::Lt => $pack($xs, $ys, |x, y| !ge(x, y)),
            Cmp::LtEq => $pack($xs, $ys, |x, y| ge(y, x)),
            Cmp::Gt => $pack($xs, $ys, |x, y| !ge(y, x)),
            Cmp::GtEq => $pack($xs, $ys, ge),
        }
    };
}

/// `$pack($xs, f)`, `f(x)` being `x op y` (as `pairs!`).
macro_rules! value {
    ($op:expr, $pack:ident, $xs:expr, $y:expr) => {{
        let y: f64 = $y;
        match $op {
            Cmp::Eq => $pack($xs, |x| eq(x, y)),
            Cmp::NotEq => $pack($xs, |x| !eq(x, y)),
            Cmp::Lt => $pack($xs, |x| !ge(x, y)),
            Cmp::LtEq => $pack($xs, |x| ge(y, x)),
            Cmp::Gt => $pack($xs, |x| !ge(y, x)),
            Cmp::GtEq => $pack($xs, |x| ge(x, y)),
        }
    }};
}

/// The operator with its sides swapped: `a op b` is `b flipped(op) a`.
fn flipped(op: Cmp) -> Cmp {
    match op {
        Cmp::Eq | Cmp::NotEq => op,
        Cmp::Lt => Cmp::Gt,
        Cmp::LtEq => Cmp::GtEq,
        Cmp::Gt => Cmp::Lt,
        Cmp::GtEq => Cmp::LtEq,
    }
}

/// `a op b`, as polars' `a.gt(b)` (and the others) evaluates it, named as `a`.
pub fn compare(a: Expr, op: Cmp, b: Expr) -> Expr {
    a.map_many(
        move |cols: &mut [Column]| columns(&cols[0], op, &cols[1]),
        &[b],
        |_, fields| Ok(Field::new(fields[0].name().clone(), DataType::Boolean)),
    )
}

/// The position of the first of `conds` that is true in each row, `default` where none
/// is: `when(conds[0]).then(0).when(conds[1]).then(1)…otherwise(default)` as a `u32`
/// column. A null condition is no match, as in `when`.
pub fn first_match(conds: Vec<Expr>, default: u32) -> Expr {
    let Some((first, rest)) = conds.split_first() else {
        return lit(default).cast(DataType::UInt32);
    };
    first.clone().map_many(
        move |cols: &mut [Column]| first_of(cols, default),
        rest,
        |_, fields| Ok(Field::new(fields[0].name().clone(), DataType::UInt32)),
    )
}

/// `first_match` of one morsel's conditions (a literal's is one value).
fn first_of(cols: &[Column], default: u32) -> PolarsResult<Column> {
    let height = cols.iter().map(Column::len).max().unwrap_or(0);
    let conds = cols
        .iter()
        .map(|c| Bits::of(c, height))
        .collect::<PolarsResult<Vec<_>>>()?;
    let mut index = vec![default; height];
    for (w, rows) in index.chunks_mut(64).enumerate() {
        let mut open = u64::MAX >> (64 - rows.len());
        for (i, c) in conds.iter().enumerate() {
            let mut hit = c.word(w) & open;
            open &= !hit;
            while hit != 0 {
                rows[hit.trailing_zeros() as usize] = i as u32;
                hit &= hit - 1;
            }
            if open == 0 {
                break;
            }
        }
    }
    let name = cols[0].name().clone();
    Ok(UInt32Chunked::from_vec(name, index).into_column())
}

/// A condition's rows that are true (and not null), a word of 64 rows at a time.
enum Bits {
    /// One value for every row (a literal).
    All(bool),
    Words(Vec<u64>),
}

impl Bits {
    fn of(c: &Column, height: usize) -> PolarsResult<Bits> {
        if let Some(s) = c.as_scalar_column() {
            let value = matches!(s.scalar().value(), AnyValue::Boolean(true));
            return Ok(Bits::All(value));
        }
        if c.len() != height {
            return Ok(Bits::All(c.bool()?.get(0).unwrap_or(false)));
        }
        let ca = c.bool()?.rechunk();
        let arr = ca.downcast_as_array();
        let true_rows = match arr.validity() {
            Some(valid) => arr.values() & valid,
            None => arr.values().clone(),
        };
        Ok(Bits::Words(words_of(&true_rows)))
    }

    fn word(&self, w: usize) -> u64 {
        match self {
            Bits::All(true) => u64::MAX,
            Bits::All(false) => 0,
            Bits::Words(words) => words[w],
        }
    }
}

/// One side of a `Test`'s comparison: a column or a value.
#[derive(Debug, Clone)]
pub enum Side {
    Column(String),
    Value(f64),
}

/// A test of a request's values that either holds or not, never unknown: a comparison
/// holds where both its sides are present and compare so (in polars' total order, as
/// `compare`); `All` where each of its tests holds, `Any` where one does. The tests are
/// monotone (no negation), so a test holds exactly where the polars expression built of
/// `compare`, `and` and `or` with its nulls read as false (`fill_null(false)`) is true.
#[derive(Debug, Clone)]
pub enum Test {
    Cmp(String, Cmp, Side),
    All(Vec<Test>),
    Any(Vec<Test>),
    /// Where a present value of one of the columns is above (`Gt`) a present value of a
    /// later one: `Any` of `Cmp(a, Gt, b)` over every pair of columns in order, found
    /// with one comparison per column (each value against the greatest before it, which
    /// the total order makes the same) rather than one per pair.
    Descends(Vec<String>),
}

/// `Test` with its columns as positions among the inputs of `holds`' function.
enum Indexed {
    Cmp(usize, Cmp, At),
    All(Vec<Indexed>),
    Any(Vec<Indexed>),
    Descends(Vec<usize>),
}

/// `Side` with its column as a position among the inputs.
enum At {
    Column(usize),
    Value(f64),
}

impl Test {
    fn indexed(&self, names: &mut Vec<String>) -> Indexed {
        let mut at = |name: &String| match names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                names.push(name.clone());
                names.len() - 1
            }
        };
        match self {
            Test::Cmp(a, op, Side::Column(b)) => Indexed::Cmp(at(a), *op, At::Column(at(b))),
            Test::Cmp(a, op, Side::Value(y)) => Indexed::Cmp(at(a), *op, At::Value(*y)),
            Test::All(tests) => Indexed::All(tests.iter().map(|t| t.indexed(names)).collect()),
            Test::Any(tests) => Indexed::Any(tests.iter().map(|t| t.indexed(names)).collect()),
            Test::Descends(cols) => Indexed::Descends(cols.iter().map(at).collect()),
        }
    }
}

/// Where `test` holds, as a boolean column without nulls: every column it reads is read
/// once per morsel, 64 rows at a time, each comparison a word of results and each `All`
/// and `Any` a word operation, where the polars expression builds a boolean column (and
/// its validity) per comparison and per `and`, `or` and `fill_null`. The columns are
/// floats (timings); another type is cast to one first.
pub fn holds(test: &Test) -> Expr {
    let mut names = vec![];
    let indexed = test.indexed(&mut names);
    let inputs: Vec<Expr> = names.iter().map(|n| col(n.as_str())).collect();
    let Some((first, rest)) = inputs.split_first() else {
        // A test of no columns: an `All` or `Any` of nothing.
        return lit(matches!(test, Test::All(_)));
    };
    first.clone().map_many(
        move |cols: &mut [Column]| held(cols, &indexed),
        rest,
        |_, fields| Ok(Field::new(fields[0].name().clone(), DataType::Boolean)),
    )
}

/// A column of `holds`' function: its values and the words of its validity (none: all
/// present).
struct Floats {
    values: Float64Chunked,
    valid: Option<Vec<u64>>,
}

impl Floats {
    fn of(c: &Column, height: usize) -> PolarsResult<Floats> {
        let c = crate::stats::at_height(c, height).cast(&DataType::Float64)?;
        let values = c.f64()?.rechunk().into_owned();
        let valid = match values.null_count() {
            0 => None,
            _ => values.downcast_as_array().validity().map(words_of),
        };
        Ok(Floats { values, valid })
    }

    fn slice(&self, w: usize) -> &[f64] {
        let v = self.values.downcast_as_array().values().as_slice();
        &v[w * 64..v.len().min(w * 64 + 64)]
    }

    fn valid(&self, w: usize) -> u64 {
        self.valid.as_ref().map_or(u64::MAX, |v| v[w])
    }
}

/// `holds`' function of one morsel's columns.
fn held(cols: &[Column], test: &Indexed) -> PolarsResult<Column> {
    let height = cols.iter().map(Column::len).max().unwrap_or(0);
    let floats = cols
        .iter()
        .map(|c| Floats::of(c, height))
        .collect::<PolarsResult<Vec<_>>>()?;
    let words = (0..height.div_ceil(64)).map(|w| word(test, &floats, w));
    let values = bitmap(words, height);
    let arr = BooleanArray::new(ArrowDataType::Boolean, values, None);
    Ok(BooleanChunked::with_chunk(cols[0].name().clone(), arr).into_column())
}

/// The rows of word `w` (64 rows) where `test` holds. `All` stops at a word where none
/// holds and `Any` at one where all do: the tests after them cannot change it.
fn word(test: &Indexed, floats: &[Floats], w: usize) -> u64 {
    match test {
        Indexed::Cmp(a, op, b) => {
            let (fa, xs) = (&floats[*a], floats[*a].slice(w));
            match b {
                At::Column(b) => {
                    let bits = pairs!(*op, pack2, xs, floats[*b].slice(w));
                    bits & fa.valid(w) & floats[*b].valid(w)
                }
                At::Value(y) => value!(*op, pack, xs, *y) & fa.valid(w),
            }
        }
        Indexed::All(tests) => {
            let mut all = u64::MAX;
            for t in tests {
                all &= word(t, floats, w);
                if all == 0 {
                    break;
                }
            }
            all
        }
        Indexed::Any(tests) => {
            let mut any = 0;
            for t in tests {
                any |= word(t, floats, w);
                if any == u64::MAX {
                    break;
                }
            }
            any
        }
        Indexed::Descends(cols) => {
            // Per row, the greatest present value so far (−∞, below which nothing is,
            // before the first): a value below it is below some earlier value.
            let mut high = [f64::NEG_INFINITY; 64];
            let mut below = 0;
            for &c in cols {
                let (xs, valid) = (floats[c].slice(w), floats[c].valid(w));
                let high = &mut high[..xs.len()];
                below |= pack2(xs, high, |x, h| !ge(x, h)) & valid;
                for (i, (&x, h)) in xs.iter().zip(high.iter_mut()).enumerate() {
                    if (valid >> i) & 1 == 1 && ge(x, *h) {
                        *h = x;
                    }
                }
            }
            below
        }
    }
}

/// `f` of up to 64 values, as a word (value i at bit i): a whole word in a loop of fixed
/// length, which the compiler unrolls and vectorises.
#[inline(always)]
fn pack(xs: &[f64], f: impl Fn(f64) -> bool) -> u64 {
    let mut word = 0u64;
    match <&[f64; 64]>::try_from(xs) {
        Ok(xs) => {
            for (i, &x) in xs.iter().enumerate() {
                word |= u64::from(f(x)) << i;
            }
        }
        Err(_) => {
            for (i, &x) in xs.iter().enumerate() {
                word |= u64::from(f(x)) << i;
            }
        }
    }
    word
}

/// `f` of up to 64 pairs of values, as a word (`pack` of two slices of one length).
#[inline(always)]
fn pack2(xs: &[f64], ys: &[f64], f: impl Fn(f64, f64) -> bool) -> u64 {
    let mut word = 0u64;
    match (<&[f64; 64]>::try_from(xs), <&[f64; 64]>::try_from(ys)) {
        (Ok(xs), Ok(ys)) => {
            for i in 0..64 {
                word |= u64::from(f(xs[i], ys[i])) << i;
            }
        }
        _ => {
            for (i, (&x, &y)) in xs.iter().zip(ys).enumerate() {
                word |= u64::from(f(x, y)) << i;
            }
        }
    }
    word
}

/// A bitmap's words, 64 rows each (row i at bit i % 64 of word i / 64), the last one
/// partial: what a loop over rows 64 at a time indexes.
pub fn words_of(bits: &Bitmap) -> Vec<u64> {
    let mut iter = bits.fast_iter_u64();
    let mut words: Vec<u64> = iter.by_ref().collect();
    // The iterator stops with up to 127 rows left, as two words.
    let ([low, high], left) = iter.remainder();
    if left > 0 {
        words.push(low);
    }
    if left > 64 {
        words.push(high);
    }
    words
}

/// `a op b` of one morsel's columns (either may be a literal's one value).
fn columns(a: &Column, op: Cmp, b: &Column) -> PolarsResult<Column> {
    let name = a.name().clone();
    if a.dtype() != &DataType::Float64 || b.dtype() != &DataType::Float64 {
        let out = match op {
            Cmp::Eq => a.equal(b),
            Cmp::NotEq => a.not_equal(b),
            Cmp::Lt => a.lt(b),
            Cmp::LtEq => a.lt_eq(b),
            Cmp::Gt => a.gt(b),
            Cmp::GtEq => a.gt_eq(b),
        }?;
        return Ok(out.with_name(name).into_column());
    }
    let out = match (one_value(a), one_value(b)) {
        (None, Some(y)) => with_value(a.f64()?, op, y),
        (Some(x), None) => with_value(b.f64()?, flipped(op), x),
        // A value against a value, repeated to the longer side's rows.
        (Some(x), Some(y)) => {
            let one = with_value(
                &Float64Chunked::from_slice_options(name.clone(), &[x]),
                op,
                y,
            );
            let value = one.get(0).map_or(AnyValue::Null, AnyValue::Boolean);
            let scalar = Scalar::new(DataType::Boolean, value);
            return Ok(Column::new_scalar(name, scalar, a.len().max(b.len())));
        }
        (None, None) => pairwise(a.f64()?, op, b.f64()?)?,
    };
    Ok(out.with_name(name).into_column())
}

/// The one value of a literal's column (a scalar column, or a column of one row).
fn one_value(c: &Column) -> Option<Option<f64>> {
    if let Some(s) = c.as_scalar_column() {
        return Some(s.scalar().value().extract::<f64>());
    }
    (c.len() == 1).then(|| c.f64().ok().and_then(|ca| ca.get(0)))
}

/// `x op y` for every `x` of `xs`.
fn with_value(xs: &Float64Chunked, op: Cmp, y: Option<f64>) -> BooleanChunked {
    let Some(y) = y else {
        return BooleanChunked::full_null(xs.name().clone(), xs.len());
    };
    let chunks = xs.downcast_iter().map(|arr| {
        let v = arr.values().as_slice();
        let values = value!(op, words, v, y);
        BooleanArray::new(ArrowDataType::Boolean, values, arr.validity().cloned())
    });
    BooleanChunked::from_chunk_iter(xs.name().clone(), chunks)
}

/// `x op y` row by row.
fn pairwise(xs: &Float64Chunked, op: Cmp, ys: &Float64Chunked) -> PolarsResult<BooleanChunked> {
    polars_ensure!(
        xs.len() == ys.len(),
        ShapeMismatch: "comparing {} rows with {}", xs.len(), ys.len()
    );
    let (xs, ys) = (xs.rechunk(), ys.rechunk());
    let (a, b) = (xs.downcast_as_array(), ys.downcast_as_array());
    let (x, y) = (a.values().as_slice(), b.values().as_slice());
    let values = pairs!(op, words2, x, y);
    let validity = combine_validities_and(a.validity(), b.validity());
    let arr = BooleanArray::new(ArrowDataType::Boolean, values, validity);
    Ok(BooleanChunked::with_chunk(xs.name().clone(), arr))
}

/// `x ≥ y` in polars' total order of floats: a NaN is above every number.
#[inline(always)]
fn ge(x: f64, y: f64) -> bool {
    x.is_nan() | (x >= y)
}

/// `x = y` in polars' total order of floats: every NaN equals every other.
#[inline(always)]
fn eq(x: f64, y: f64) -> bool {
    (x == y) | (x.is_nan() & y.is_nan())
}

/// `f` of every value, as a bitmap: 64 results a word (`pack`).
fn words(xs: &[f64], f: impl Fn(f64) -> bool) -> Bitmap {
    bitmap(xs.chunks(64).map(|chunk| pack(chunk, &f)), xs.len())
}

/// `f` of every pair of values, as a bitmap (`words` of two slices of one length).
fn words2(xs: &[f64], ys: &[f64], f: impl Fn(f64, f64) -> bool) -> Bitmap {
    let pairs = xs.chunks(64).zip(ys.chunks(64));
    bitmap(pairs.map(|(a, b)| pack2(a, b, &f)), xs.len())
}

/// The bitmap of `len` rows whose words (64 rows each, row i at bit i % 64) are `words`.
fn bitmap(words: impl Iterator<Item = u64>, len: usize) -> Bitmap {
    let mut bytes = Vec::with_capacity(len.div_ceil(64) * 8);
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    bytes.truncate(len.div_ceil(8));
    Bitmap::from_u8_vec(bytes, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPS: [Cmp; 6] = [Cmp::Eq, Cmp::NotEq, Cmp::Lt, Cmp::LtEq, Cmp::Gt, Cmp::GtEq];

    fn polars_op(a: Expr, op: Cmp, b: Expr) -> Expr {
        match op {
            Cmp::Eq => a.eq(b),
            Cmp::NotEq => a.neq(b),
            Cmp::Lt => a.lt(b),
            Cmp::LtEq => a.lt_eq(b),
            Cmp::Gt => a.gt(b),
            Cmp::GtEq => a.gt_eq(b),
        }
    }

    /// Every case of the order: null, NaN, ±0, ±inf, near and far values.
    const CASES: [Option<f64>; 10] = [
        Some(1.0),
        None,
        Some(f64::NAN),
        Some(-0.0),
        Some(0.0),
        Some(f64::INFINITY),
        Some(f64::NEG_INFINITY),
        Some(3000.0),
        Some(2999.999),
        Some(-1.5),
    ];

    /// Values with every case of the order, equal and unequal, in columns of more than
    /// one word (and a partial last word).
    fn frame() -> DataFrame {
        let base = CASES;
        let n = 151;
        let x: Vec<Option<f64>> = (0..n).map(|i| base[i % base.len()]).collect();
        let y: Vec<Option<f64>> = (0..n).map(|i| base[(i * 7 + 3) % base.len()]).collect();
        let k: Vec<Option<i64>> = (0..n).map(|i| Some(i as i64 % 5)).collect();
        df!("x" => x, "y" => y, "k" => k).unwrap()
    }

    /// Every operator, against a column, a literal on either side, a null literal and an
    /// integer column, gives what polars' own comparison gives, row by row.
    #[test]
    fn comparisons_are_polars_comparisons() {
        let df = frame();
        let sides: Vec<(Expr, Expr)> = vec![
            (col("x"), col("y")),
            (col("x"), lit(0.0)),
            (col("x"), lit(3000.0)),
            (col("x"), lit(f64::NAN)),
            (lit(-0.0), col("y")),
            (col("x"), lit(NULL).cast(DataType::Float64)),
            (col("k"), lit(2)),
            (col("k").cast(DataType::Float64), col("x")),
            (col("x"), col("k")),
            (lit(1.0), lit(2.0)),
            (lit(f64::NAN), lit(f64::NAN)),
            (col("x").first(), lit(1.0)),
            (col("x").max(), col("y")),
        ];
        for (a, b) in sides {
            for op in OPS {
                let rows = |e: Expr| -> Vec<Option<bool>> {
                    let out = df.clone().lazy().select([e.alias("c")]).collect().unwrap();
                    out.column("c").unwrap().bool().unwrap().iter().collect()
                };
                assert_eq!(
                    rows(compare(a.clone(), op, b.clone())),
                    rows(polars_op(a.clone(), op, b.clone())),
                    "{a:?} {op:?} {b:?}"
                );
            }
        }
    }

    /// The first match is the `when/then` chain's index, with nulls, literals and rows
    /// no rule matches, over more than one word of rows.
    #[test]
    fn the_first_match_is_the_when_chain() {
        let n = 200;
        let pattern = |k: usize| -> Vec<Option<bool>> {
            (0..n)
                .map(|i| match (i * k + i / 7) % 5 {
                    0 => None,
                    1 | 2 => Some(true),
                    _ => Some(false),
                })
                .collect()
        };
        let df = df!("a" => pattern(3), "b" => pattern(7), "c" => pattern(11)).unwrap();
        let sets: Vec<Vec<Expr>> = vec![
            vec![col("a"), col("b"), col("c")],
            vec![col("c"), lit(false), col("a")],
            vec![col("b"), lit(true), col("a")],
            vec![lit(NULL).cast(DataType::Boolean), col("a")],
            vec![col("a")],
        ];
        for conds in sets {
            let default = conds.len() as u32;
            let ours = df
                .clone()
                .lazy()
                .select([first_match(conds.clone(), default).alias("i")])
                .collect()
                .unwrap();
            let index_lit = |i: u32| lit(i).cast(DataType::UInt32);
            let chain = crate::ruleset::compile::chain(
                conds
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.clone(), index_lit(i as u32))),
                index_lit(default),
            );
            let theirs = df
                .clone()
                .lazy()
                .select([chain.alias("i")])
                .collect()
                .unwrap();
            let rows = |df: &DataFrame| -> Vec<Option<u32>> {
                let c = df.column("i").unwrap();
                crate::stats::at_height(c, n)
                    .u32()
                    .unwrap()
                    .iter()
                    .collect()
            };
            assert_eq!(rows(&ours), rows(&theirs), "{conds:?}");
        }
        // No rule: every row is the default.
        let out = df
            .lazy()
            .select([col("a"), first_match(vec![], 4).alias("i")])
            .collect()
            .unwrap();
        let i = crate::stats::at_height(out.column("i").unwrap(), n);
        assert!(i.u32().unwrap().iter().all(|v| v == Some(4)));
    }

    /// The polars expression a `Test` stands for: `compare`, `and`, `or`, nulls read as
    /// false.
    fn polars_test(t: &Test) -> Expr {
        match t {
            Test::Cmp(a, op, side) => {
                let b = match side {
                    Side::Column(b) => col(b.as_str()),
                    Side::Value(y) => lit(*y),
                };
                compare(col(a.as_str()), *op, b).fill_null(lit(false))
            }
            Test::All(ts) => ts.iter().map(polars_test).fold(lit(true), |a, b| a.and(b)),
            Test::Any(ts) => ts.iter().map(polars_test).fold(lit(false), |a, b| a.or(b)),
            Test::Descends(cols) => {
                let mut pairs = vec![];
                for (i, a) in cols.iter().enumerate() {
                    for b in &cols[i + 1..] {
                        pairs.push(Test::Cmp(a.clone(), Cmp::Gt, Side::Column(b.clone())));
                    }
                }
                polars_test(&Test::Any(pairs))
            }
        }
    }

    /// `Descends` holds exactly where some pair of its columns in order compares `Gt` (its
    /// polars expression), row by row: every combination of three columns' values (NaN,
    /// ±0, ±∞, nulls) in several orders, with an integer column, one column and none.
    #[test]
    fn descends_holds_where_a_pair_is_out_of_order() {
        let base = CASES;
        let n = base.len().pow(3);
        let digit = |i: usize, d: u32| base[(i / base.len().pow(d)) % base.len()];
        let a: Vec<Option<f64>> = (0..n).map(|i| digit(i, 0)).collect();
        let b: Vec<Option<f64>> = (0..n).map(|i| digit(i, 1)).collect();
        let c: Vec<Option<f64>> = (0..n).map(|i| digit(i, 2)).collect();
        let k: Vec<Option<i64>> = (0..n).map(|i| Some(i as i64 % 3 - 1)).collect();
        let df = df!("a" => a, "b" => b, "c" => c, "k" => k).unwrap();
        let orders: [&[&str]; 6] = [
            &["a", "b", "c"],
            &["c", "b", "a"],
            &["b", "k", "a", "c"],
            &["k", "a"],
            &["a"],
            &[],
        ];
        for order in orders {
            let t = Test::Descends(order.iter().map(|c| c.to_string()).collect());
            let rows = |e: Expr| -> Vec<Option<bool>> {
                let out = df.clone().lazy().select([e.alias("t")]).collect().unwrap();
                let t = crate::stats::at_height(out.column("t").unwrap(), df.height());
                t.bool().unwrap().iter().collect()
            };
            let ours = rows(holds(&t));
            assert!(ours.contains(&Some(true)) || order.len() < 2, "{order:?}");
            assert_eq!(ours, rows(polars_test(&t)), "{order:?}");
        }
    }

    /// Tests of every operator against columns and values, nested `All` and `Any` (empty
    /// ones too) and an integer column, hold exactly where their polars expressions are
    /// true, row by row.
    #[test]
    fn tests_hold_where_their_polars_expressions_are_true() {
        let df = frame();
        let c = |a: &str, op: Cmp, b: &str| Test::Cmp(a.into(), op, Side::Column(b.into()));
        let v = |a: &str, op: Cmp, y: f64| Test::Cmp(a.into(), op, Side::Value(y));
        let mut tests = vec![];
        for op in OPS {
            tests.push(c("x", op, "y"));
            tests.push(v("x", op, 0.0));
            tests.push(v("y", op, -0.0));
            tests.push(v("x", op, 3000.0));
            tests.push(v("x", op, f64::NAN));
            tests.push(v("k", op, 2.0));
            tests.push(c("k", op, "x"));
        }
        tests.push(Test::Any(vec![
            v("x", Cmp::Lt, 0.0),
            v("y", Cmp::Lt, 0.0),
            c("x", Cmp::Gt, "y"),
        ]));
        tests.push(Test::Any(vec![
            Test::All(vec![
                v("x", Cmp::Eq, 0.0),
                Test::Any(vec![v("y", Cmp::Gt, 0.0)]),
            ]),
            Test::All(vec![v("y", Cmp::Eq, 0.0), Test::Any(vec![])]),
            Test::All(vec![v("k", Cmp::GtEq, 3.0), c("y", Cmp::NotEq, "x")]),
        ]));
        tests.push(Test::All(vec![]));
        tests.push(Test::Any(vec![]));
        tests.push(Test::All(vec![v("x", Cmp::Gt, 1.0), Test::All(vec![])]));
        for t in tests {
            let rows = |e: Expr| -> Vec<Option<bool>> {
                let out = df.clone().lazy().select([e.alias("c")]).collect().unwrap();
                let c = crate::stats::at_height(out.column("c").unwrap(), df.height());
                c.bool().unwrap().iter().collect()
            };
            let ours = rows(holds(&t));
            assert!(ours.iter().all(Option::is_some), "{t:?}: never null");
            assert_eq!(ours, rows(polars_test(&t)), "{t:?}");
        }
    }

    /// The result keeps the left side's name, as polars' comparison does.
    #[test]
    fn the_result_is_named_as_the_left_side() {
        let df = frame();
        let out = df
            .lazy()
            .select([compare(col("x"), Cmp::Gt, lit(1.0))])
            .collect()
            .unwrap();
        assert_eq!(out.get_column_names(), ["x"]);
    }
}
