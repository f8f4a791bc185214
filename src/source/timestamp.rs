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
//! 3, 6 or 9 digits) the first values have is read by a fixed format of its width, and
//! only the rest is trimmed, cut at its offset and given to chrono. The fixed formats are
//! read by `read_fast` (digits at fixed places, a morsel's shared date read once), which
//! reads what polars' fast parser would; a morsel holding a value it does not read is
//! given to polars' formats. The slower steps run per morsel, and only in a morsel holding
//! a value the step before did not read: in the usual log they never run.

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
    // 1. The forms the first values have: each value of one of their widths read by
    //    `read_fast`, a morsel at a time; a morsel with a value it does not read is
    //    parsed by polars' formats instead (`polars_fast`), which is what it reads.
    let fast = if forms.is_empty() {
        lit(NULL).cast(DataType::Datetime(TimeUnit::Milliseconds, None))
    } else {
        let (name, forms) = (c.to_string(), forms.to_vec());
        col(c).map(
            move |text: Column| fast_morsel(&name, &text, &forms),
            |_, f| {
                Ok(Field::new(
                    f.name().clone(),
                    DataType::Datetime(TimeUnit::Milliseconds, None),
                ))
            },
        )
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

/// The fast forms' parse of one morsel's text column `c`: `read_fast` of each value,
/// where it reads every value that is not null; else `polars_fast` of the morsel.
fn fast_morsel(c: &str, text: &Column, forms: &[Form]) -> PolarsResult<Column> {
    let values = text.str()?;
    let mut day = None;
    // None from the first value `read_fast` does not read on (a null reads as null).
    let ms: Option<Int64Chunked> = values
        .iter()
        .map(|v| match v {
            None => Some(None),
            Some(v) => read_fast(v.as_bytes(), forms, &mut day).map(Some),
        })
        .collect();
    if let Some(ms) = ms {
        return Ok(ms
            .with_name(text.name().clone())
            .into_datetime(TimeUnit::Milliseconds, None)
            .into_column());
    }
    let morsel = DataFrame::new(text.len(), vec![text.clone().with_name(c.into())])?;
    let out = morsel
        .lazy()
        .select([polars_fast(c, forms).alias(FAST_PARSED)])
        .collect()?;
    Ok(out
        .column(FAST_PARSED)?
        .clone()
        .with_name(text.name().clone()))
}

/// The fast forms as polars' formats: each form's format over the values of its width
/// and separator (all values where there is one form), the first that reads a value
/// giving it. A value polars' fast parser cannot read goes to chrono with that format.
fn polars_fast(c: &str, forms: &[Form]) -> Expr {
    let null_text = || lit(NULL).cast(DataType::String);
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
    coalesce(&fast)
}

/// A value of one of the fast `forms` (its width and separator's), in UTC milliseconds:
/// what polars' fast parser gives for the form's format (the same digits read, the same
/// dates and times valid, as chrono has them), where every field is its number of ASCII
/// digits; `None` for anything else, which polars' formats are left to read. `day` is the
/// last date read and its first millisecond: a log's timestamps share their date.
fn read_fast(v: &[u8], forms: &[Form], day: &mut Option<([u8; 10], i64)>) -> Option<i64> {
    let &(_, w, fraction, zone) = forms
        .iter()
        .find(|(s, w, _, zone)| v.len() == *w as usize + zone.len() && v[10] == s.as_bytes()[0])?;
    let digits = |from: usize, n: usize| -> Option<u32> {
        v[from..from + n].iter().try_fold(0u32, |n, &b| {
            let d = b.wrapping_sub(b'0');
            (d < 10).then(|| n * 10 + u32::from(d))
        })
    };
    let date: [u8; 10] = v[..10].try_into().expect("at least 19 bytes");
    let day_ms = match *day {
        Some((last, ms)) if last == date => ms,
        _ => {
            if v[4] != b'-' || v[7] != b'-' {
                return None;
            }
            let (y, m, d) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
            let ms = chrono::NaiveDate::from_ymd_opt(y as i32, m, d)?
                .and_hms_opt(0, 0, 0)?
                .and_utc()
                .timestamp_millis();
            *day = Some((date, ms));
            ms
        }
    };
    if v[13] != b':' || v[16] != b':' || !v.ends_with(zone.as_bytes()) {
        return None;
    }
    let (h, m, s) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    // chrono's valid times (no leap second: a fraction of at most 9 digits is below one).
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    let ms = match fraction {
        "" => 0,
        _ => {
            if v[19] != b'.' {
                return None;
            }
            // The fraction's milliseconds: its first three digits, as the nanoseconds'
            // truncation gives them.
            let n = w as usize - 20;
            digits(20, n)? / 10u32.pow(n as u32 - 3)
        }
    };
    Some(day_ms + i64::from(h * 3_600_000 + m * 60_000 + s * 1000 + ms))
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

    /// Where `read_fast` reads a value, polars' format for its form reads the same
    /// instant; a morsel holding a value it does not read is read by polars' formats, so
    /// the column is the same either way: valid and invalid dates and times (29 February,
    /// 24:00, a 60th second, month 13, day 0, year 0), wrong separators, signs and spaces
    /// where digits go, in every fast form.
    #[test]
    fn the_fast_read_is_polars_fast_formats() {
        let dates = [
            "2026-11-02",
            "2024-02-29",
            "2026-02-29",
            "0000-01-01",
            "1969-12-31",
            "9999-12-31",
            "2026-13-02",
            "2026-00-10",
            "2026-11-00",
            "2026-11-31",
            "2026/11/02",
            "2026-1-+02",
            "+026-11-02",
            "-026-11-02",
            " 026-11-02",
        ];
        let times = [
            "10:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "00:00:00", "1 :00:00",
            "10-00-00", "+1:00:00",
        ];
        let fractions = ["", ".250", ".999999", ".123456789", ".+25", ",250", ".2500"];
        let mut values = vec![];
        for d in dates {
            for sep in ["T", " ", "x"] {
                for t in times {
                    for f in fractions {
                        for z in ["", "Z", "z"] {
                            values.push(format!("{d}{sep}{t}{f}{z}"));
                        }
                    }
                }
            }
        }
        let all_forms: Vec<Form> = ["T", " "]
            .into_iter()
            .flat_map(|s| {
                FAST.into_iter()
                    .flat_map(move |(w, f)| ["", "Z"].map(|z| (s, w, f, z)))
            })
            .collect();
        for forms in [
            vec![("T", 23, ".%3f", "Z")],
            vec![(" ", 19, "", "")],
            all_forms,
        ] {
            let text = Column::new("ts".into(), &values);
            let by_polars = DataFrame::new(values.len(), vec![text.clone()])
                .unwrap()
                .lazy()
                .select([polars_fast("ts", &forms).cast(DataType::Int64)])
                .collect()
                .unwrap();
            let by_polars: Vec<Option<i64>> = by_polars
                .column("ts")
                .unwrap()
                .i64()
                .unwrap()
                .iter()
                .collect();
            let mut day = None;
            let mut read = 0;
            for (v, want) in values.iter().zip(&by_polars) {
                if let Some(ms) = read_fast(v.as_bytes(), &forms, &mut day) {
                    assert_eq!(Some(ms), *want, "{v} in {forms:?}");
                    read += 1;
                }
            }
            // Five valid dates, three valid times, in each form.
            assert!(read >= 15, "{forms:?}: {read} read");
            let morsel = fast_morsel("ts", &text, &forms).unwrap();
            let morsel: Vec<Option<i64>> = morsel
                .cast(&DataType::Int64)
                .unwrap()
                .i64()
                .unwrap()
                .iter()
                .collect();
            assert_eq!(morsel, by_polars, "{forms:?}");
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
