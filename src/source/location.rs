//! Where a row is in its file. A message about a row names the line an editor shows (CSV
//! and JSON lines) or, in a file without lines (Parquet, a JSON array), the row. polars
//! numbers rows from 1 in the order it reads them; blank lines, a CSV header, bad rows left
//! out and CSV records spanning several lines make the row and the line differ, so the row
//! check notes where they do (`LineMap`), and `Locations` turns a frame's `source_file` and
//! `source_row` back into words.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::Input;

/// The line each row of one text file begins on. Only the rows where the line number jumps
/// by more than one are stored, so a file without blank lines or a header holds nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMap {
    /// (row, the line it begins on) wherever that line is not the previous row's line + 1;
    /// before the first entry, row N is on line N.
    jumps: Vec<(u64, u64)>,
}

impl LineMap {
    /// Note that `row` begins on `line`. Rows are noted in increasing order.
    pub fn record(&mut self, row: u64, line: u64) {
        if self.line(row) != line {
            self.jumps.push((row, line));
        }
    }

    /// Whether row N is on line N throughout: no blank line, no row of several lines and
    /// none left out before the last row.
    pub fn rows_are_lines(&self) -> bool {
        self.jumps.is_empty()
    }

    /// The 1-based line that 1-based `row` begins on.
    pub fn line(&self, row: u64) -> u64 {
        match self.jumps.partition_point(|&(r, _)| r <= row) {
            0 => row,
            i => {
                let (r, l) = self.jumps[i - 1];
                l + row.saturating_sub(r)
            }
        }
    }
}

impl LineMap {
    /// `line` as a polars expression of the row column: the row plus the offset of the
    /// last jump at or before it (a search among the few jumps, not a per-row lookup).
    pub fn expr(&self, row: Expr) -> Expr {
        if self.jumps.is_empty() {
            return row;
        }
        let starts: Vec<i64> = self.jumps.iter().map(|&(r, _)| r as i64).collect();
        let mut offsets: Vec<i64> = vec![0];
        offsets.extend(self.jumps.iter().map(|&(r, l)| l as i64 - r as i64));
        let at = lit(Series::new("starts".into(), starts)).search_sorted(
            row.clone(),
            SearchSortedSide::Right,
            false,
        );
        row + lit(Series::new("offsets".into(), offsets)).gather(at, false)
    }
}

/// Where the rows of every input are, keyed by the path as the frame's `source_file` holds
/// it.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    /// `None` for a file without lines.
    files: BTreeMap<String, Option<LineMap>>,
}

impl Locations {
    pub fn of(inputs: &[Input]) -> Locations {
        let files = inputs
            .iter()
            .map(|i| (i.path.display().to_string(), i.lines.clone()))
            .collect();
        Locations { files }
    }

    /// The line row `row` of `file` begins on; `None` for a file without lines.
    pub fn line(&self, file: &str, row: i64) -> Option<i64> {
        let map = self.files.get(file)?.as_ref()?;
        let row = u64::try_from(row).ok().filter(|r| *r > 0)?;
        i64::try_from(map.line(row)).ok()
    }

    /// `line 5` in a CSV or JSON-lines file, `row 3` elsewhere.
    pub fn describe(&self, file: &str, row: i64) -> String {
        match self.line(file, row) {
            Some(l) => format!("line {l}"),
            None => format!("row {row}"),
        }
    }
}

/// The 1-based line and column of byte `at` of `bytes` (the first byte that is not UTF-8,
/// say), counting bytes: the position an error names, as serde_json's do.
pub fn line_and_column(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, before.len() - line_start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_to_lines_across_jumps() {
        let mut m = LineMap::default();
        // A CSV header on line 1; rows 1-2 on lines 2-3; a blank line 4; row 3 on line 5,
        // spanning lines 5-6 (a quoted newline); row 4 on line 7.
        for (row, line) in [(1, 2), (2, 3), (3, 5), (4, 7)] {
            m.record(row, line);
        }
        assert_eq!(
            [1, 2, 3, 4, 5].map(|r| m.line(r)),
            [2, 3, 5, 7, 8],
            "row 5 (not recorded) follows row 4"
        );
        assert_eq!(m.jumps, vec![(1, 2), (3, 5), (4, 7)]);
    }

    /// The polars expression `--out` writes with gives the same line as `line`, row by row.
    #[test]
    fn the_line_expression_agrees_with_line() {
        let mut m = LineMap::default();
        for (row, line) in [(1, 2), (2, 3), (3, 5), (4, 7), (9, 20)] {
            m.record(row, line);
        }
        let rows: Vec<i64> = (1..=12).collect();
        let df = df!("row" => rows.clone()).unwrap();
        let got = df
            .lazy()
            .select([m.expr(col("row")).alias("line")])
            .collect()
            .unwrap();
        let got: Vec<i64> = got
            .column("line")
            .unwrap()
            .i64()
            .unwrap()
            .into_no_null_iter()
            .collect();
        let want: Vec<i64> = rows.iter().map(|&r| m.line(r as u64) as i64).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_file_without_jumps_stores_nothing() {
        let mut m = LineMap::default();
        for row in 1..=1000 {
            m.record(row, row);
        }
        assert!(m.jumps.is_empty());
        assert_eq!(m.line(17), 17);
    }
}
