//! The keys of the counts `histogram`, `kept` and `counts` make over each morsel of the
//! stream: each key's value as a 64-bit code, a morsel's distinct key tuples numbered
//! once, the tuples of a whole pass numbered in the order met, and the tuples as text
//! again (as `keys_as_text` casts a key) for the frames.
//!
//! Each counts by one function over each morsel (`stats::counting_query`).

use std::sync::Arc;

use polars::prelude::*;

use super::at_height;

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

    /// A morsel's codes (`height` of them).
    fn encode(&self, c: &Column, height: usize) -> PolarsResult<Vec<Option<u64>>> {
        let c = at_height(c, height);
        Ok(match self {
            Coding::Text(dtype) => {
                let codes = c.cast(dtype)?.to_physical_repr();
                let codes = codes.as_materialized_series().u32()?.clone();
                codes.iter().map(|k| k.map(u64::from)).collect()
            }
            Coding::Flag => c.bool()?.iter().map(|b| b.map(u64::from)).collect(),
            Coding::Number(_) => {
                let values = c.to_physical_repr().strict_cast(&DataType::Int64)?;
                let values = values.as_materialized_series().i64()?.clone();
                values.iter().map(|v| v.map(|v| v as u64)).collect()
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

/// Each row's tuple with one key more (its code in `codes`): `tuple_of` moved to the
/// longer tuples' numbers, which are returned. Small codes (text codes, class indexes)
/// are looked up by position, others hashed.
fn longer_tuples(tuple_of: &mut [u32], tuples: &[Tuple], codes: Vec<Option<u64>>) -> Vec<Tuple> {
    let mut longer: Vec<Tuple> = vec![];
    let mut add = |shorter: u32, code: Option<u64>| {
        let mut tuple = tuples[shorter as usize].clone();
        tuple.push(code);
        longer.push(tuple);
        (longer.len() - 1) as u32
    };
    let high = codes.iter().flatten().max().copied().unwrap_or(0);
    // Cell 0 of a tuple is a null code, cell c + 1 code c.
    let width = high.saturating_add(2);
    match usize::try_from(width) {
        Ok(width) if tuples.len().saturating_mul(width) <= DENSE_CELLS => {
            let mut cells = vec![u32::MAX; tuples.len() * width];
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                let cell = *t as usize * width + code.map_or(0, |c| c as usize + 1);
                if cells[cell] == u32::MAX {
                    cells[cell] = add(*t, code);
                }
                *t = cells[cell];
            }
        }
        _ => {
            let mut numbers: PlHashMap<(u32, Option<u64>), u32> = PlHashMap::new();
            for (t, code) in tuple_of.iter_mut().zip(codes) {
                *t = *numbers.entry((*t, code)).or_insert_with(|| add(*t, code));
            }
        }
    }
    longer
}
