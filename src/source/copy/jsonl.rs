//! A JSON-lines log's copy made in its row check's reading: the check's parse of each line
//! hands over the values of the keys the mapping reads (`rowcheck::Gather`), gathered into
//! columns of the types polars would read them as, and each run of rows goes to the writer
//! as a frame shaped as polars' reader would make it (`other.timing` a struct column).
//!
//! Which keys are read, and as what types, depends on the whole file's rows, known only
//! once the check has read them all. The copy starts from its first lines
//! (`rowcheck::head_types`) and is used only if the whole file's mapping, made at the end
//! as for polars' reader, is the same (`finish`); its gathers also give up on a value
//! polars would read otherwise than they do (a number in a text column). A file whose rows
//! change type or key after its first lines is read through polars' reader as before.

use std::path::Path;
use std::sync::Arc;

use polars::prelude::*;

use super::Writer;
use crate::error::Result;
use crate::source::canonical::{self, Mapping, Origin};
use crate::source::rowcheck::{self, Gather, JsonRows, Place, Want, Wanted};
use crate::source::spool::Spooled;

/// The copy being made; see the module doc.
pub struct JsonlCopy {
    wanted: Arc<Wanted>,
    /// The part's columns, each from the gathered columns (in the order wanted).
    layout: Vec<Layout>,
    /// The mapping the copy is made with (from the file's first lines).
    mapping: Mapping,
    /// Rows handed over so far.
    rows: u64,
    /// A gather gave up: the copy will not be used.
    spoiled: bool,
    writer: Writer,
}

/// One column of a part: a gathered column, or a struct of them (`other.timing`,
/// `timing`); or the two columns of a number gathered as text, parsed
/// (`canonical::parsed_in_part`: its value, and whether its text was not blank).
enum Layout {
    Column(PlSmallStr, usize),
    Struct(PlSmallStr, Vec<Layout>),
    Number {
        key: PlSmallStr,
        field: String,
        column: usize,
    },
}

impl Layout {
    /// Its columns of a part of `rows` rows, from the `gathered` ones.
    fn build(&self, gathered: &[Series], rows: usize) -> PolarsResult<Vec<Column>> {
        Ok(match self {
            Layout::Column(name, i) => vec![gathered[*i].clone().with_name(name.clone()).into()],
            Layout::Struct(name, fields) => {
                let mut inner = vec![];
                for f in fields {
                    inner.extend(f.build(gathered, rows)?);
                }
                let series: Vec<Series> = inner
                    .into_iter()
                    .map(|c| c.take_materialized_series())
                    .collect();
                vec![
                    StructChunked::from_series(name.clone(), rows, series.iter())?
                        .into_series()
                        .into(),
                ]
            }
            Layout::Number { field, column, .. } => {
                let text = gathered[*column].str()?;
                let mut values = PrimitiveChunkedBuilder::<Float64Type>::new(
                    canonical::parsed(field).into(),
                    rows,
                );
                let mut present =
                    BooleanChunkedBuilder::new(canonical::present(field).into(), rows);
                for cell in text.iter() {
                    let (held, value) = cell.map_or((false, None), canonical::read_number);
                    values.append_option(value);
                    present.append_value(held);
                }
                vec![
                    values.finish().into_column(),
                    present.finish().into_column(),
                ]
            }
        })
    }

    /// Its columns' names and types, the gathered ones typed as `wants`.
    fn fields(&self, wants: &[DataType]) -> Vec<Field> {
        match self {
            Layout::Column(name, i) => vec![Field::new(name.clone(), wants[*i].clone())],
            Layout::Struct(name, fields) => vec![Field::new(
                name.clone(),
                DataType::Struct(fields.iter().flat_map(|f| f.fields(wants)).collect()),
            )],
            Layout::Number { field, .. } => vec![
                Field::new(canonical::parsed(field).into(), DataType::Float64),
                Field::new(canonical::present(field).into(), DataType::Boolean),
            ],
        }
    }

    /// The key it is read from.
    fn key(&self) -> &PlSmallStr {
        match self {
            Layout::Column(n, _) | Layout::Struct(n, _) | Layout::Number { key: n, .. } => n,
        }
    }
}

/// The column type a gathered key is read as, by the type polars reads its column as.
fn want(dtype: &DataType) -> Option<Want> {
    Some(match dtype {
        DataType::Int64 => Want::Int,
        DataType::Float64 => Want::Float,
        DataType::Boolean => Want::Bool,
        DataType::String => Want::Text,
        DataType::Null => Want::Null,
        _ => return None,
    })
}

impl JsonlCopy {
    /// Start a copy of the JSON-lines file at `path` (named `name` in messages). `None`
    /// where its first lines say it is not one this copy serves: a bad line among them, no
    /// timing field mapped, a value of a type the gather does not read.
    pub fn start(path: &Path, name: &Path) -> Option<JsonlCopy> {
        let types = rowcheck::head_types(path)?;
        let raw = crate::source::json::scan_lines(path, None, &types).ok()?;
        let schema = types.schema();
        let mapping = crate::source::map_columns(&raw, &schema, path).ok()?;
        // Numbers in text columns, parsed as the projection of a part expects them.
        let parsed = canonical::parsed_in_part(&mapping);
        let mut wanted = Wanted::default();
        let mut dtypes: Vec<DataType> = vec![];
        // Top-level columns, then the struct columns' fields, each key once.
        let mut top: Vec<Layout> = vec![];
        let mut nested: [Vec<Layout>; 2] = [vec![], vec![]];
        let mut timing = false;
        for (field, origin, dtype) in &mapping.fields {
            timing |= *origin != Origin::Absent
                && crate::catalogue::field(field).is_some_and(|f| f.kind.is_timing());
            let (place, key, dtype) = match origin {
                Origin::Absent => continue,
                Origin::Column(c) => (Place::Top, c.as_str(), dtype.clone()),
                // `other` read as a JSON string column: its text.
                Origin::JsonString(_) => (Place::Top, "other", DataType::String),
                Origin::Nested(path) => {
                    match path.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                        ["other", "timing", k] => (Place::OtherTiming, k, dtype.clone()),
                        ["timing", k] => (Place::Timing, k, dtype.clone()),
                        _ => return None,
                    }
                }
                // The user's columns (`--map`) are not copied here.
                Origin::JsonPath { .. } => return None,
            };
            let layouts = match place {
                Place::Top => &mut top,
                Place::OtherTiming => &mut nested[0],
                Place::Timing => &mut nested[1],
            };
            if layouts.iter().any(|l| l.key() == key) {
                continue;
            }
            let column = wanted.add(place, key, want(&dtype)?);
            dtypes.push(dtype);
            // (`parsed_in_part` names top-level columns only.)
            let number = parsed
                .iter()
                .find(|(_, c)| place == Place::Top && *c == key);
            layouts.push(match number {
                Some((field, _)) => Layout::Number {
                    key: key.into(),
                    field: field.to_string(),
                    column,
                },
                None => Layout::Column(key.into(), column),
            });
        }
        if !timing {
            return None;
        }
        let [other_timing, timing] = nested;
        if !other_timing.is_empty() {
            top.push(Layout::Struct(
                "other".into(),
                vec![Layout::Struct("timing".into(), other_timing)],
            ));
        }
        if !timing.is_empty() {
            top.push(Layout::Struct("timing".into(), timing));
        }
        let empty = DataFrame::new(
            0,
            top.iter()
                .flat_map(|l| l.fields(&dtypes))
                .map(|f| Column::new_empty(f.name, &f.dtype))
                .collect(),
        )
        .ok()?;
        let forms = canonical::timestamp_forms(&raw, &mapping);
        let writer = Writer::start(name, empty, mapping.clone(), forms)?;
        Some(JsonlCopy {
            wanted: Arc::new(wanted),
            layout: top,
            mapping,
            rows: 0,
            spoiled: false,
            writer,
        })
    }

    /// The copy, once the check has handed over every row, if the whole file maps as its
    /// first lines did (`mapping`, made from the whole file's types) and no gather gave
    /// up: read back as the canonical rows, with the temporary file that holds them.
    pub fn finish(self, mapping: &Mapping) -> Result<Option<(LazyFrame, Arc<Spooled>)>> {
        let same = self.mapping.fields == mapping.fields
            && self.mapping.shadowed == mapping.shadowed
            && self.mapping.unix_time == mapping.unix_time;
        if self.spoiled || !same {
            return Ok(None);
        }
        self.writer.finish().map(Some)
    }
}

impl JsonRows for JsonlCopy {
    fn wanted(&self) -> Option<Arc<Wanted>> {
        (!self.spoiled).then(|| self.wanted.clone())
    }

    fn rows(&mut self, gather: Gather) -> Result<()> {
        if self.spoiled || gather.spoiled() {
            self.spoiled = true;
            return Ok(());
        }
        let rows = gather.rows();
        if rows == 0 {
            return Ok(());
        }
        let gathered = gather.finish();
        let part = self
            .layout
            .iter()
            .map(|l| l.build(&gathered, rows))
            .collect::<PolarsResult<Vec<_>>>()
            .and_then(|columns| DataFrame::new(rows, columns.into_iter().flatten().collect()))
            .map_err(|e| self.writer.error(&e))?;
        let first = self.rows + 1;
        self.rows += rows as u64;
        self.writer.send(first, part)
    }
}
