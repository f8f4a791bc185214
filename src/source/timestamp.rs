//! Request timestamps written as text or as numbers, read as UTC milliseconds.
//!
//! Text is ISO 8601 with `T` or a space between date and time, with or without a
//! fraction, ending in `Z`, in an offset (`+08:00`, `-0500`, `+00`: converted to UTC) or in
//! nothing (taken as UTC). A number, or text holding one, is Unix time; its unit is told
//! by its size (seconds, milliseconds, microseconds or nanoseconds since 1970 differ by
//! a factor of 1000 and no log spans that much).
//!
//! Speed matters here: the timestamp is parsed on every pass over the log. polars' fast
//! parser takes fixed widths only (`.%3f`, not `%.f`) and hands a value it cannot read
//! to chrono, which is several times slower. So each common form (UTC, a fraction of 0,
//! 3, 6 or 9 digits) gets its own fast format, applied only to the rows of its width,
//! and only the rest is trimmed, cut at its offset and given to chrono. Those steps run
//! per morsel, and only in a morsel holding a value the fast formats did not read: in
//! the usual log they never run.

use polars::prelude::*;

/// Helper columns, dropped by the projection that follows (nothing selects them). Each
/// step is its own column so that it runs once, however often the next step uses it.
const FAST_PARSED: &str = "__ts_fast";
const TEXT: &str = "__ts_text";
const OFFSET_LEN: &str = "__ts_offset_len";
const LOCAL: &str = "__ts_local";
const OFFSET_MS: &str = "__ts_offset_ms";
const ISO: &str = "__ts_iso";
/// The parsed timestamp (UTC, milliseconds), for the projection to pick up.
pub const PARSED: &str = "__ts_parsed";

/// Columns a file must not have, since the parse adds them.
pub const INTERNAL: [&str; 7] = [FAST_PARSED, TEXT, OFFSET_LEN, LOCAL, OFFSET_MS, ISO, PARSED];

/// The common forms' widths without zone and the fast format reading each; 19 is
/// `2026-11-02T10:00:00`.
const FAST: [(u32, &str); 4] = [(19, ""), (23, ".%3f"), (26, ".%6f"), (29, ".%9f")];

/// How many of a column's first values choose its fast formats.
const SAMPLE: u32 = 100;

/// A fast format: separator, width without zone, fraction, zone.
pub type Form = (&'static str, u32, &'static str, &'static str);

/// The fast forms of the first values of the text column `c` (usually one: a log writes
/// its timestamps one way). A form first seen later in the file is still read, by chrono.
pub fn forms(raw: &LazyFrame, c: &str) -> Vec<Form> {
    // A file that cannot be read here fails later with its own error; until then no fast
    // form is known, which only costs time.
    let Some(values) = first_values(raw, c, SAMPLE) else {
        return vec![];
    };
    let mut found: Vec<Form> = vec![];
    for v in values.iter().flatten() {
        for s in ["T", " "] {
            for (w, fraction) in FAST {
                for zone in ["", "Z"] {
                    let form = (s, w, fraction, zone);
                    let fits = v.len() == (w as usize + zone.len())
                        && v.get(10..11) == Some(s)
                        && v.ends_with(zone);
                    if fits && !found.contains(&form) {
                        found.push(form);
                    }
                }
            }
        }
    }
    found
}

/// The first `n` values of the column `c` that are not null, as text; `None` when the
/// file cannot be read. The first rows are looked at first, with the slice pushed into
/// the reader (a Parquet file's first row group, not its whole column); only a file
/// whose first rows hold too few values is read further.
fn first_values(raw: &LazyFrame, c: &str, n: u32) -> Option<StringChunked> {
    let look = |lf: LazyFrame| -> Option<StringChunked> {
        let first = lf
            .select([col(c).cast(DataType::String)])
            .filter(col(c).is_not_null())
            .limit(n)
            .collect_with_engine(Engine::Streaming)
            .ok()?
            .unwrap_single();
        first.column(c).and_then(|v| v.str().cloned()).ok()
    };
    let head = look(raw.clone().slice(0, FIRST_ROWS))?;
    if head.len() >= n as usize {
        return Some(head);
    }
    look(raw.clone())
}

/// How many rows `first_values` looks at before it reads the whole column.
const FIRST_ROWS: IdxSize = 10_000;

/// Whether the text column `c` holds Unix times: its first non-null value is a number.
/// A column of no value (a header alone, nulls only) holds none.
pub fn holds_numbers(raw: &LazyFrame, c: &str) -> bool {
    let Some(values) = first_values(raw, c, 1) else {
        return false;
    };
    // `iter`, not `get(0)`: polars' `get` panics on an empty column.
    let value = values.iter().flatten().next();
    value.is_some_and(|v| v.trim().parse::<f64>().is_ok_and(f64::is_finite))
}

/// Add `PARSED` (Datetime, ms, UTC) parsed from the text column `c`, whose first values
/// have the fast `forms`.
pub fn parse_text_column(lf: LazyFrame, c: &str, forms: &[Form]) -> LazyFrame {
    let null_text = || lit(NULL).cast(DataType::String);
    // 1. The forms the first values have, each by its fast format. With more than one,
    //    each reads only the rows of its width and separator (a value the fast parser
    //    cannot read goes to chrono, slowly, to fail there).
    let width = col(c).str().len_bytes();
    let sep = col(c).str().slice(lit(10i64), lit(1u64));
    let fast: Vec<Expr> = forms
        .iter()
        .map(|&(s, w, fraction, zone)| {
            let only = if forms.len() == 1 {
                col(c)
            } else {
                when(
                    width
                        .clone()
                        .eq(lit(w + zone.len() as u32))
                        .and(sep.clone().eq(lit(s))),
                )
                .then(col(c))
                .otherwise(null_text())
            };
            datetime(only, &format!("%Y-%m-%d{s}%H:%M:%S{fraction}{zone}"))
        })
        .collect();
    let fast = if fast.is_empty() {
        lit(NULL).cast(DataType::Datetime(TimeUnit::Milliseconds, None))
    } else {
        coalesce(&fast)
    };
    let lf = lf.with_column(fast.alias(FAST_PARSED));
    if forms.is_empty() {
        // No fast form: every value takes the slow path.
        return slow_path(lf, c);
    }
    // 2. The rest, per morsel, only in a morsel holding a value the fast formats did not
    //    read: the slow path's steps cost more than the fast parse, and in the usual log
    //    every value is read fast.
    let name = c.to_string();
    let rest = col(c).map_many(
        move |cols: &mut [Column]| the_rest(&name, cols),
        &[col(FAST_PARSED)],
        |_, _| {
            Ok(Field::new(
                PARSED.into(),
                DataType::Datetime(TimeUnit::Milliseconds, None),
            ))
        },
    );
    lf.with_column(rest.alias(PARSED))
}

/// `PARSED` of one morsel, from its text column and its fast parse (`cols`): the fast
/// parse where it read every value; else the slow path over the morsel.
fn the_rest(c: &str, cols: &mut [Column]) -> PolarsResult<Column> {
    let (text, fast) = (&cols[0], &cols[1]);
    let unread = fast.is_null() & text.is_not_null();
    if !unread.any() {
        return Ok(fast.clone());
    }
    let morsel = DataFrame::new(
        text.len(),
        vec![
            text.clone().with_name(c.into()),
            fast.clone().with_name(FAST_PARSED.into()),
        ],
    )?;
    let out = slow_path(morsel.lazy(), c)
        .select([col(PARSED)])
        .collect()?;
    Ok(out.column(PARSED)?.clone())
}

/// Add `PARSED` to a frame holding the text column `c` and its fast parse
/// `FAST_PARSED`: the fast parse, else the value as chrono reads it after the trim and
/// the offset's cut, else a Unix time, else null.
fn slow_path(lf: LazyFrame, c: &str) -> LazyFrame {
    let null_text = || lit(NULL).cast(DataType::String);
    // The rest (an offset, spaces around, another fraction width, a number, or not a
    // time at all), trimmed, with any offset cut off and kept apart.
    let text = when(col(FAST_PARSED).is_null())
        .then(col(c))
        .otherwise(null_text())
        .str()
        .strip_chars(lit(NULL))
        .str()
        .strip_chars_end(lit("Zz"));
    let lf = lf.with_column(text.alias(TEXT));
    let t = || col(TEXT);
    let char_at = |i: i64| t().str().slice(lit(i), lit(1u64));
    let is_sign = |e: Expr| e.clone().eq(lit("+")).or(e.eq(lit("-")));
    // `±HH:MM`, `±HHMM` or `±HH` (PostgreSQL's and DuckDB's text for a UTC timestamp
    // ends in `+00`) after the time: past the 19 characters of date and time, so never a
    // date's `-`.
    let long = |n: u32| t().str().len_chars().gt_eq(lit(n));
    let offset_len = when(
        is_sign(char_at(-6))
            .and(char_at(-3).eq(lit(":")))
            .and(long(25)),
    )
    .then(lit(6i64))
    .when(is_sign(char_at(-5)).and(long(24)))
    .then(lit(5i64))
    .when(is_sign(char_at(-3)).and(long(22)))
    .then(lit(3i64))
    .otherwise(lit(0i64));
    let lf = lf.with_column(offset_len.alias(OFFSET_LEN));
    let n = || col(OFFSET_LEN);
    let local = t()
        .str()
        .slice(lit(0i64), t().str().len_chars().cast(DataType::Int64) - n());
    let offset = when(n().gt(lit(0i64)))
        .then(t().str().tail(n()))
        .otherwise(null_text());
    let digits = |from: i64| {
        offset
            .clone()
            .str()
            .slice(lit(from), lit(2u64))
            .cast(DataType::Int64)
    };
    let minutes = when(n().eq(lit(6i64)))
        .then(digits(1) * lit(60i64) + digits(4))
        .when(n().eq(lit(3i64)))
        .then(digits(1) * lit(60i64))
        .otherwise(digits(1) * lit(60i64) + digits(3));
    let signed = when(
        offset
            .clone()
            .str()
            .slice(lit(0i64), lit(1u64))
            .eq(lit("-")),
    )
    .then(lit(-1i64))
    .otherwise(lit(1i64));
    let offset_ms = (signed * minutes * lit(60_000i64)).fill_null(lit(0i64));
    let lf = lf.with_columns([local.alias(LOCAL), offset_ms.alias(OFFSET_MS)]);

    // chrono reads any fraction width.
    let with_t = datetime(col(LOCAL), "%Y-%m-%dT%H:%M:%S%.f");
    let lf = lf.with_column(with_t.alias(ISO));
    let with_space = when(col(ISO).is_null())
        .then(col(LOCAL))
        .otherwise(null_text());
    let iso = coalesce(&[col(ISO), datetime(with_space, "%Y-%m-%d %H:%M:%S%.f")]);
    let utc = (iso.clone().cast(DataType::Int64) - col(OFFSET_MS))
        .cast(DataType::Datetime(TimeUnit::Milliseconds, None));
    let number = when(iso.is_null()).then(t()).otherwise(null_text());
    lf.with_column(coalesce(&[col(FAST_PARSED), utc, unix_time(number)]).alias(PARSED))
}

fn datetime(text: Expr, format: &str) -> Expr {
    text.str().to_datetime(
        Some(TimeUnit::Milliseconds),
        None,
        StrptimeOptions {
            format: Some(format.into()),
            strict: false,
            exact: true,
            // Timestamps are nearly all distinct: a cache of parsed values only costs.
            cache: false,
        },
        lit("raise"),
    )
}

/// Unix time, its unit told by its size: below 1e11 seconds (until the year 5138),
/// below 1e14 milliseconds, below 1e17 microseconds, else nanoseconds. Whole numbers are
/// divided as integers (a nanosecond count is past f64's exact range).
pub fn unix_time(e: Expr) -> Expr {
    let whole = e.clone().cast(DataType::Int64);
    let v = e.cast(DataType::Float64);
    let below = |bound: f64| v.clone().lt(lit(bound)).and(v.clone().gt(lit(-bound)));
    let per = |unit: i64| whole.clone().floor_div(lit(unit));
    let from_whole = when(below(1e11))
        .then(whole.clone() * lit(1000i64))
        .when(below(1e14))
        .then(whole.clone())
        .when(below(1e17))
        .then(per(1000))
        .otherwise(per(1_000_000));
    let from_fraction = when(below(1e11))
        .then(v.clone() * lit(1000.0))
        .when(below(1e14))
        .then(v.clone())
        .otherwise(v.clone() / lit(1000.0))
        .cast(DataType::Int64);
    when(v.clone().is_finite().not())
        .then(lit(NULL).cast(DataType::Int64))
        .when(whole.clone().cast(DataType::Float64).eq(v))
        .then(from_whole)
        .otherwise(from_fraction)
        .cast(DataType::Datetime(TimeUnit::Milliseconds, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(values: &[Option<&str>]) -> (Vec<Option<i64>>, usize) {
        let df = df!("ts" => values).unwrap();
        let lf = df.lazy();
        let forms = forms(&lf, "ts");
        let out = parse_text_column(lf, "ts", &forms)
            .select([
                col(PARSED).cast(DataType::Int64),
                col(FAST_PARSED).is_not_null().sum().alias("fast"),
            ])
            .collect()
            .unwrap();
        let ms = out.column(PARSED).unwrap().i64().unwrap().iter().collect();
        let fast = out.column("fast").unwrap().u32().unwrap().get(0).unwrap() as usize;
        (ms, fast)
    }

    /// 2026-11-02T10:00:00Z in milliseconds since the Unix epoch.
    const TEN: i64 = 1_793_613_600_000;

    #[test]
    fn iso_forms_read_as_utc_and_the_common_widths_take_the_fast_path() {
        let (ms, fast) = parsed(&[
            Some("2026-11-02T10:00:00Z"),
            Some("2026-11-02T10:00:00.250Z"),
            Some("2026-11-02 10:00:00.250000"),
            Some(" 2026-11-02T10:00:00.250000000z "),
            Some("2026-11-02T10:00:00.25"),
        ]);
        assert_eq!(
            ms,
            vec![
                Some(TEN),
                Some(TEN + 250),
                Some(TEN + 250),
                Some(TEN + 250),
                Some(TEN + 250)
            ]
        );
        // Spaces around and the two-digit fraction are chrono's.
        assert_eq!(fast, 3);
    }

    /// The slow path runs per morsel, only in morsels holding a value the fast formats did
    /// not read: on the streaming engine, with such values here and there among many read
    /// fast, every value still comes out as it would alone.
    #[test]
    fn values_the_fast_formats_miss_are_read_wherever_they_fall() {
        let n = 200_000;
        let text: Vec<Option<String>> = (0..n)
            .map(|i| match i % 50_000 {
                49_999 => Some("2026-11-02T18:00:00.250+08:00".to_string()),
                30_000 => Some(" 2026-11-02T10:00:00.250Z".to_string()),
                20_000 => None,
                10_000 => Some("not a time".to_string()),
                _ => Some("2026-11-02T10:00:00.250Z".to_string()),
            })
            .collect();
        let lf = df!("ts" => text).unwrap().lazy();
        let forms = forms(&lf, "ts");
        let out = parse_text_column(lf, "ts", &forms)
            .select([col(PARSED).cast(DataType::Int64)])
            .collect_with_engine(Engine::Streaming)
            .unwrap()
            .unwrap_single();
        let ms: Vec<Option<i64>> = out.column(PARSED).unwrap().i64().unwrap().iter().collect();
        for (i, got) in ms.iter().enumerate() {
            let want = match i % 50_000 {
                20_000 | 10_000 => None,
                _ => Some(TEN + 250),
            };
            assert_eq!(*got, want, "row {i}");
        }
    }

    #[test]
    fn offsets_are_converted_to_utc() {
        let (ms, _) = parsed(&[
            Some("2026-11-02T18:00:00+08:00"),
            Some("2026-11-02T18:00:00.250+0800"),
            Some("2026-11-02 05:30:00-04:30"),
            Some("2026-11-02T10:00:00+00:00"),
        ]);
        assert_eq!(ms, vec![Some(TEN), Some(TEN + 250), Some(TEN), Some(TEN)]);
    }

    /// PostgreSQL and DuckDB write a timestamp with time zone as `… +00` (hours only).
    #[test]
    fn an_offset_of_whole_hours_is_converted_to_utc() {
        let (ms, _) = parsed(&[
            Some("2026-11-02 10:00:00.250+00"),
            Some("2026-11-02T18:00:00+08"),
            Some("2026-11-02 05:00:00-05"),
            // A date alone ends in `-DD`: not an offset, and not a time.
            Some("2026-11-02"),
        ]);
        assert_eq!(ms, vec![Some(TEN + 250), Some(TEN), Some(TEN), None]);
    }

    #[test]
    fn unix_time_unit_is_told_by_size() {
        let (ms, fast) = parsed(&[
            Some("1793613600"),
            Some("1793613600.25"),
            Some("1793613600250"),
            Some("1793613600250000"),
            Some("1793613600250000000"),
        ]);
        assert_eq!(
            ms,
            vec![
                Some(TEN),
                Some(TEN + 250),
                Some(TEN + 250),
                Some(TEN + 250),
                Some(TEN + 250)
            ]
        );
        assert_eq!(fast, 0);
    }

    #[test]
    fn a_number_column_with_a_fraction_keeps_it() {
        let df = df!("t" => [1_793_613_600.25f64, 1_793_613_600_250.0]).unwrap();
        let out = df
            .lazy()
            .select([unix_time(col("t")).cast(DataType::Int64).alias("t")])
            .collect()
            .unwrap();
        let ms: Vec<Option<i64>> = out.column("t").unwrap().i64().unwrap().iter().collect();
        assert_eq!(ms, vec![Some(TEN + 250), Some(TEN + 250)]);
    }

    #[test]
    fn what_is_not_a_time_is_null() {
        let (ms, _) = parsed(&[
            None,
            Some(""),
            Some("yesterday"),
            Some("2026-13-02T10:00:00Z"),
            Some("2026-11-02T10:00:00+8"),
            Some("NaN"),
        ]);
        assert_eq!(ms, vec![None; 6]);
    }
}
