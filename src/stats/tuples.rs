//! The keys of the counts `histogram`, `kept` and `counts` make over each morsel of the
//! stream: each key's value as a 64-bit code, a morsel's distinct key tuples numbered
//! once, the tuples of a whole pass numbered in the order met, and the tuples as text
//! again (as `keys_as_text` casts a key) for the frames.
//!
//! Each counts by one function over each morsel (`stats::counting_query`).

use std::sync::Arc;

use polars::prelude::*;

use polars_arrow::bitmap::Bitmap;

use super::at_height;
use super::histogram::zero_unset;
use crate::kernels::words_of;

/// A key tuple: one code per key (`Coding`), null for a null key.
pub(super) type Tuple = Vec<Option<u64>>;

/// The type a text key is coded as: polars' global categories. A key column already of
/// this type (`text_codes`) is coded without a cast.
pub fn text_codes() -> DataType {
    DataType::from_categories(Categories::global())
}

/// How a key's values become codes, and back.
#[derive(Clone)]
enum Coding {
    /// Text: its code in polars' global categories, which hold each distinct value once
    /// for the process (a log's models and channels: a handful).
    Text(DataType),
    Flag,
    /// An integer, or a type whose physical values are integers (a date, a time): its
    /// physical value as 64 bits, cast back to `DataType`.
    Number(DataType),
}

impl Coding {
    fn of(name: &str, dtype: &DataType) -> PolarsResult<Coding> {
        Ok(match dtype {
            DataType::String | DataType::Categorical(..) => Coding::Text(text_codes()),
            DataType::Boolean => Coding::Flag,
            d if d.to_physical().is_integer() && d.to_physical() != DataType::UInt64 => {
                Coding::Number(d.clone())
            }
            d => polars_bail!(ComputeError: "cannot count by `{name}` of type {d}"),
        })
    }

    /// A morsel's codes (`height` rows). A literal's column (the file's index, when the
    /// log is one file) is one code, not repeated per row; codes that fit a table indexed
    /// by position (text codes, flags, class indexes) are each row's code + 1 as 32 bits,
    /// written from the values a word of rows at a time, not one `Option` per row.
    fn encode(&self, c: &Column, height: usize) -> PolarsResult<Codes> {
        match c.as_scalar_column() {
            Some(s) => Ok(Codes::Same(
                self.encode_series(&s.as_single_value_series())?.first(),
            )),
            None => self.encode_series(at_height(c, height).as_materialized_series()),
        }
    }

    /// `encode` of a column's values.
    fn encode_series(&self, c: &Series) -> PolarsResult<Codes> {
        Ok(match self {
            Coding::Text(dtype) => {
                let codes = c.cast(dtype)?.to_physical_repr().into_owned();
                let codes = codes.u32()?.rechunk();
                let codes = codes.downcast_as_array();
                small(
                    codes.values().iter().map(|&k| u64::from(k)),
                    codes.validity(),
                )
                .unwrap_or_else(|| {
                    Codes::Wide(codes.iter().map(|k| k.map(|&k| u64::from(k))).collect())
                })
            }
            Coding::Flag => {
                let flags = c.bool()?.rechunk();
                let flags = flags.downcast_as_array();
                small(flags.values().iter().map(u64::from), flags.validity())
                    .expect("a flag's codes are 0 and 1")
            }
            Coding::Number(_) => {
                let values = c.to_physical_repr().strict_cast(&DataType::Int64)?;
                let values = values.i64()?.rechunk();
                let values = values.downcast_as_array();
                // A negative value's code is above any small one, as its `u64` is.
                small(values.values().iter().map(|&v| v as u64), values.validity()).unwrap_or_else(
                    || Codes::Wide(values.iter().map(|v| v.map(|&v| v as u64)).collect()),
                )
            }
        })
    }

    /// The keys of `codes` as text: as `keys_as_text` casts the key itself.
    fn decode(&self, name: &str, codes: Vec<Option<u64>>) -> PolarsResult<Column> {
        let name = PlSmallStr::from(name);
        let typed = match self {
            Coding::Text(dtype) => {
                let codes: UInt32Chunked = codes.into_iter().map(|k| k.map(|k| k as u32)).collect();
                Categorical32Chunked::from_cats_and_dtype(codes, dtype.clone()).into_series()
            }
            Coding::Flag => {
                let flags: BooleanChunked = codes.into_iter().map(|k| k.map(|k| k != 0)).collect();
                flags.into_series()
            }
            Coding::Number(dtype) => {
                let values: Int64Chunked = codes.into_iter().map(|k| k.map(|k| k as i64)).collect();
                values.into_series().strict_cast(dtype)?
            }
        };
        Ok(typed.cast(&DataType::String)?.with_name(name).into_column())
    }
}

/// The keys of a count and how each is coded.
#[derive(Clone)]
pub(super) struct Keys {
    names: Vec<String>,
    codings: Vec<Coding>,
}

impl Keys {
    pub(super) fn new(lf: &LazyFrame, names: &[String]) -> PolarsResult<Keys> {
        let schema = if names.is_empty() {
            Arc::new(Schema::default())
        } else {
            lf.clone().collect_schema()?
        };
        let codings = names
            .iter()
            .map(|k| Coding::of(k, schema.try_get(k.as_str())?))
            .collect::<PolarsResult<_>>()?;
        Ok(Keys {
            names: names.to_vec(),
            codings,
        })
    }

    pub(super) fn len(&self) -> usize {
        self.names.len()
    }

    pub(super) fn exprs(&self) -> Vec<Expr> {
        self.names.iter().map(|k| col(k.as_str())).collect()
    }

    /// Each row's tuple number in the morsel, and the morsel's tuples by number, from its
    /// key columns (`height` rows): one pass per key over the rows, each row's tuple so
    /// far and its next code making its tuple with one key more.
    pub(super) fn number(
        &self,
        cols: &[Column],
        height: usize,
    ) -> PolarsResult<(Vec<u32>, Vec<Tuple>)> {
        let mut tuple_of = vec![0u32; height];
        let mut tuples: Vec<Tuple> = vec![vec![]];
        for (c, coding) in cols.iter().zip(&self.codings) {
            tuples = longer_tuples(&mut tuple_of, &tuples, coding.encode(c, height)?);
        }
        Ok((tuple_of, tuples))
    }

    /// The keys of `tuples`, in order, as text columns.
    pub(super) fn columns(&self, tuples: &[Tuple]) -> PolarsResult<Vec<Column>> {
        self.names
            .iter()
            .zip(&self.codings)
            .enumerate()
            .map(|(i, (name, coding))| coding.decode(name, tuples.iter().map(|t| t[i]).collect()))
            .collect()
    }
}

/// The tuples met in a pass, numbered in the order met.
#[derive(Default)]
pub(super) struct Numbered {
    tuples: Vec<Tuple>,
    numbers: PlHashMap<Tuple, u32>,
}

impl Numbered {
    pub(super) fn number(&mut self, tuple: Tuple) -> u32 {
        if let Some(&n) = self.numbers.get(&tuple) {
            return n;
        }
        let n = self.tuples.len() as u32;
        self.tuples.push(tuple.clone());
        self.numbers.insert(tuple, n);
        n
    }

    pub(super) fn tuples(&self) -> &[Tuple] {
        &self.tuples
    }
}

/// At most this many cells in a table indexed by position rather than hashed (1 MiB of
/// counts, about a morsel's rows).
pub(super) const DENSE_CELLS: usize = 1 << 18;

/// A morsel's codes of one key (`Coding::encode`).
enum Codes {
    /// Every row's: a literal's column.
    Same(Option<u64>),
    /// Each row's code + 1, 0 for a null; every code is below `width` − 1.
    Small { cells: Vec<u32>, width: usize },
    /// Each row's code, where some is too large for `Small`.
    Wide(Vec<Option<u64>>),
}

impl Codes {
    /// The first row's code (a one-row morsel's).
    fn first(&self) -> Option<u64> {
        match self {
            Codes::Same(code) => *code,
            Codes::Small { cells, .. } => {
                cells.first().and_then(|&c| c.checked_sub(1)).map(u64::from)
            }
            Codes::Wide(codes) => codes.first().copied().flatten(),
        }
    }
}

/// `Codes::Small` of `values` (a row each) under `validity`, if every value (a null's
/// too: polars leaves some value there) fits it: each value + 1, then the nulls' made 0
/// a word of rows at a time.
fn small(values: impl Iterator<Item = u64> + Clone, validity: Option<&Bitmap>) -> Option<Codes> {
    let high = values.clone().max().unwrap_or(0);
    // Cell 0 a null, cell c + 1 code c: `high` + 1 must fit, and the table of
    // `longer_tuples` be within reach.
    if high >= DENSE_CELLS as u64 {
        return None;
    }
    let mut cells: Vec<u32> = values.map(|v| v as u32 + 1).collect();
    if let Some(valid) = validity.filter(|v| v.unset_bits() > 0) {
        for (rows, word) in cells.chunks_mut(64).zip(words_of(valid)) {
            zero_unset(rows, word);
        }
    }
    Some(Codes::Small {
        cells,
        width: high as usize + 2,
    })
}

/// Each row's tuple with one key more (its code in `codes`): `tuple_of` moved to the
/// longer tuples' numbers, which are returned. Small codes (text codes, class indexes)
/// are looked up by position, others hashed; a code every row shares changes no number.
fn longer_tuples(tuple_of: &mut [u32], tuples: &[Tuple], codes: Codes) -> Vec<Tuple> {
    let mut longer: Vec<Tuple> = vec![];
    let mut add = |shorter: u32, code: Option<u64>| {
        let mut tuple = tuples[shorter as usize].clone();
        tuple.push(code);
        longer.push(tuple);
        (longer.len() - 1) as u32
    };
    match codes {
        Codes::Same(code) => {
            // Every tuple is some row's (but the no-key tuple of a morsel of no rows),
            // numbered in the order met: so are the longer.
            if !tuple_of.is_empty() {
                for t in 0..tuples.len() {
                    add(t as u32, code);
                }
            }
        }
        Codes::Small {
            cells: codes,
            width,
        } if tuples.len().saturating_mul(width) <= DENSE_CELLS => {
            let mut cells = vec![u32::MAX; tuples.len() * width];
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                let cell = *t as usize * width + code as usize;
                if cells[cell] == u32::MAX {
                    cells[cell] = add(*t, code.checked_sub(1).map(u64::from));
                }
                *t = cells[cell];
            }
        }
        Codes::Small { cells: codes, .. } => {
            let mut numbers: PlHashMap<(u32, u32), u32> = PlHashMap::new();
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                *t = *numbers
                    .entry((*t, code))
                    .or_insert_with(|| add(*t, code.checked_sub(1).map(u64::from)));
            }
        }
        Codes::Wide(codes) => {
            let mut numbers: PlHashMap<(u32, Option<u64>), u32> = PlHashMap::new();
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                *t = *numbers.entry((*t, code)).or_insert_with(|| add(*t, code));
            }
        }
    }
    longer
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's tuple is its keys' codes, the tuples numbered in the order first met and
    /// none without a row: text, flags and integers with nulls, integers too large or
    /// negative for a table by position, a literal's column, and a morsel of no rows.
    #[test]
    fn rows_are_numbered_by_their_keys_in_the_order_met() {
        let n = 300;
        let text: Vec<Option<&str>> = (0..n)
            .map(|i| [Some("ok"), None, Some("error"), Some("timeout")][i % 4])
            .collect();
        let flag: Vec<Option<bool>> = (0..n)
            .map(|i| [Some(true), None, Some(false)][i % 3])
            .collect();
        let small: Vec<Option<u32>> = (0..n)
            .map(|i| (i % 7 != 3).then_some((i % 5) as u32))
            .collect();
        let wide: Vec<Option<i64>> = (0..n)
            .map(|i| [Some(-2), Some(1 << 40), None, Some(3)][(i / 2) % 4])
            .collect();
        let df = df!("text" => text, "flag" => flag, "small" => small, "wide" => wide).unwrap();
        let literal = Column::new_scalar("file".into(), Scalar::from(4u32), n);
        let all: Vec<Column> = df.columns().iter().cloned().chain([literal]).collect();
        let names: Vec<String> = all.iter().map(|c| c.name().to_string()).collect();
        let schema_df = DataFrame::new(n, all.clone()).unwrap();
        let orders: [&[usize]; 5] = [&[0, 1, 2, 3, 4], &[4, 3, 2, 1, 0], &[2], &[4], &[3, 0]];
        for order in orders {
            let keys: Vec<String> = order.iter().map(|&i| names[i].clone()).collect();
            let cols: Vec<Column> = order.iter().map(|&i| all[i].clone()).collect();
            let k = Keys::new(&schema_df.clone().lazy(), &keys).unwrap();
            let (tuple_of, tuples) = k.number(&cols, n).unwrap();
            // The reference: each row's codes, one key at a time, numbered by a map.
            let codes: Vec<Vec<Option<u64>>> = cols
                .iter()
                .zip(&k.codings)
                .map(|(c, coding)| {
                    let c = c.as_materialized_series().clone();
                    match coding.encode_series(&c).unwrap() {
                        Codes::Small { cells, .. } => cells
                            .iter()
                            .map(|&c| c.checked_sub(1).map(u64::from))
                            .collect(),
                        Codes::Wide(w) => w,
                        Codes::Same(_) => unreachable!("a materialised column"),
                    }
                })
                .collect();
            let mut met: Vec<Tuple> = vec![];
            for (row, &t) in tuple_of.iter().enumerate() {
                let tuple: Tuple = codes.iter().map(|c| c[row]).collect();
                if !met.contains(&tuple) {
                    met.push(tuple.clone());
                }
                assert_eq!(tuples[t as usize], tuple, "{keys:?} row {row}");
            }
            assert_eq!(tuples, met, "{keys:?}");
            // The codes are the keys' own: back to text, as `keys_as_text` casts them.
            let back = k.columns(&tuples).unwrap();
            for (row, &t) in tuple_of.iter().enumerate().step_by(37) {
                for (i, &key) in order.iter().enumerate() {
                    let want = all[key].cast(&DataType::String).unwrap();
                    let want = want.str().unwrap().get(row).map(str::to_string);
                    let got = back[i].str().unwrap().get(t as usize).map(str::to_string);
                    assert_eq!(got, want, "{keys:?} row {row}");
                }
            }
            let (none, no_tuples) = k
                .number(&cols.iter().map(|c| c.slice(0, 0)).collect::<Vec<_>>(), 0)
                .unwrap();
            assert!(none.is_empty() && no_tuples.is_empty(), "{keys:?}");
        }
    }
}
