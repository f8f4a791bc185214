//! Row-level data-quality checks. Each check adds a boolean `dq_<check>` column; the
//! summary counts them with example request ids. Nothing is fixed or dropped here:
//! a flagged row keeps its values (missing stays null) and is still classified.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use polars::prelude::*;

use crate::catalogue::{self, Kind, FIELDS};
use crate::kernels::{compare, holds, Side, Test};
use crate::ruleset::types::Cmp;
use crate::ruleset::RuleSet;
use crate::source::{FILE_INDEX, ROW_COL, SOURCE_COL, UNPARSED_PREFIX, UNREADABLE_COL};
use crate::stats;
use crate::summary::{Overlap, OverlapPair};

/// One data-quality check.
#[derive(Debug, Clone)]
pub struct Check {
    /// Column suffix and JSON key: `dq_<name>`.
    pub name: &'static str,
    pub doc: &'static str,
}

pub const OUT_OF_ORDER: Check = Check {
    name: "out_of_order",
    doc: "timeline points out of order (t3 ≤ t4 ≤ t5 ≤ t6 ≤ t7 among those present)",
};
pub const NEGATIVE: Check = Check {
    name: "negative",
    doc: "a negative duration or time point",
};
pub const ZERO_AS_MISSING: Check = Check {
    name: "zero_as_missing",
    doc: "a time point of exactly 0 while a later point is positive: probably \"missing\" written as 0",
};
pub const TPS_MISMATCH: Check = Check {
    name: "tps_mismatch",
    doc: "logged visible_output_tps disagrees with output_tokens ÷ (t6 − t5) beyond tps_tolerance",
};
pub const DUPLICATE_ID: Check = Check {
    name: "duplicate_id",
    doc: "the request id appears more than once",
};
pub const UNPARSED: Check = Check {
    name: "unparsed",
    doc: "a value that could not be read as its field's type (kept as null)",
};

pub const UNREADABLE: Check = Check {
    name: "unreadable",
    doc: "a line or record that could not be read whole (kept with --on-bad-row keep; its unreadable parts null)",
};
pub const IMPLAUSIBLE: Check = Check {
    name: "implausible",
    doc: "a time above 24 hours (86,400,000 ms): no single API request takes that long",
};

/// Above this, a time in milliseconds is not a request's latency.
pub const MAX_PLAUSIBLE_MS: f64 = 86_400_000.0;

pub const ALL: [Check; 8] = [
    OUT_OF_ORDER,
    NEGATIVE,
    ZERO_AS_MISSING,
    TPS_MISMATCH,
    DUPLICATE_ID,
    UNPARSED,
    UNREADABLE,
    IMPLAUSIBLE,
];

pub fn column(check: &Check) -> String {
    format!("dq_{}", check.name)
}

fn any(exprs: Vec<Expr>) -> Expr {
    exprs
        .into_iter()
        .map(|e| e.fill_null(lit(false)))
        .reduce(|a, b| a.or(b))
        .unwrap_or(lit(false))
}

/// The name of the recomputed TPS metric the tps check compares with, when the rule
/// table defines it.
pub const RECOMPUTED_TPS_METRIC: &str = "visible_output_tps_recomputed";
pub const TPS_TOLERANCE_PARAM: &str = "tps_tolerance";

/// Whether the rule table lets the TPS cross-check run.
pub fn tps_check_available(rules: &RuleSet) -> bool {
    rules
        .metrics
        .iter()
        .any(|m| m.name == RECOMPUTED_TPS_METRIC)
        && rules.params.iter().any(|p| p.name == TPS_TOLERANCE_PARAM)
}

/// At most about this many ids per pass of `duplicate_ids` (4 bytes each: 512 MB).
const IDS_PER_PASS: u64 = 1 << 27;

/// The top bits of an id's hash choose one of 2^PART_BITS parts of a pass of
/// `duplicate_ids`; the part keeps the hash's low 32 bits. An id is known by those 48 bits
/// (`fingerprint`): among 2^27 distinct ids, about 2^5 pairs share one, each confirmed
/// (and dropped) by the ids themselves.
const PART_BITS: u32 = 16;

/// The 48 bits of a hash `duplicate_ids` keeps: the part's above its low half.
fn fingerprint(hash: u64) -> u64 {
    ((hash >> (64 - PART_BITS)) << 32) | (hash & 0xffff_ffff)
}

/// Fixed seeds: the hashes (and so which ids a pass looks at) are the same in every run.
const ID_HASH_SEEDS: [u64; 4] = [0x7472_6163, 0x6564_6961, 0x6720_6964, 0x7320_0001];

/// The request ids that appear more than once, and how they spread over the input files.
pub struct Duplicates {
    /// The duplicated ids, sorted.
    pub ids: Series,
    /// Per pair of files, the ids both hold (pairs in file order; ids in one file only or
    /// in three or more files are in no pair).
    pub pairs: Vec<SharedIds>,
    /// The rows of the log (with or without an id).
    pub rows: u64,
    /// The rows holding one of `ids`: those the duplicate-id check flags.
    pub flagged: u64,
}

/// The request ids two input files (by their index in the run) both hold, and how many
/// distinct ids each file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedIds {
    pub a: usize,
    pub b: usize,
    pub shared: u64,
    pub a_ids: u64,
    pub b_ids: u64,
}

impl Duplicates {
    /// The flag of a row whose id is one of them.
    pub fn flag(&self) -> Expr {
        if self.ids.is_empty() {
            return lit(false);
        }
        stats::member_of(col("request_id"), &self.ids).fill_null(lit(false))
    }

    /// The duplicate-id check's examples (`ExampleSearch`'s, where it searches the log
    /// the ids were found in): the smallest ids.
    pub fn examples(&self) -> PolarsResult<Vec<Example>> {
        let mut ids: Vec<&str> = self.ids.str()?.iter().flatten().collect();
        ids.sort_unstable();
        Ok(ids
            .into_iter()
            .take(EXAMPLES)
            .map(|id| Example {
                key: id.to_string(),
                row: 0,
                has_id: true,
            })
            .collect())
    }
}

impl SharedIds {
    /// Every request (with an id) of one of the two files is in the other: one file is a
    /// copy of the other or of a part of it.
    pub fn whole_file(&self) -> bool {
        self.shared == self.a_ids || self.shared == self.b_ids
    }
}

/// Overlapping inputs, when most of the duplicated ids are whole-file copies (`names`:
/// the input files by index).
pub fn overlap(d: &Duplicates, names: &[String]) -> Option<Overlap> {
    let whole: Vec<&SharedIds> = d.pairs.iter().filter(|p| p.whole_file()).collect();
    let whole_file_ids: u64 = whole.iter().map(|p| p.shared).sum();
    let duplicate_ids = d.ids.len() as u64;
    if whole_file_ids == 0 || whole_file_ids * 2 <= duplicate_ids {
        return None;
    }
    let name = |i: usize| {
        names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("input {i}"))
    };
    Some(Overlap {
        duplicate_ids,
        whole_file_ids,
        pairs: whole
            .iter()
            .map(|p| OverlapPair {
                a: name(p.a),
                b: name(p.b),
                shared_ids: p.shared,
                a_ids: p.a_ids,
                b_ids: p.b_ids,
            })
            .collect(),
    })
}

/// The request ids that appear more than once. A pass sorts 48 bits of the 64-bit hash of
/// each id (`fingerprint`: 4 bytes an id, never the id strings) and keeps those next to an
/// equal one (`candidates`); a second pass confirms exactly, by the ids themselves, the few
/// fingerprints seen twice, so a collision between two ids is never called a duplicate
/// (`Candidates::confirmed`). Nulls never count. The second pass also notes which files
/// hold each duplicated id, so overlapping inputs (the same requests in two files) are
/// counted per pair of files; only then is each file's number of ids asked for.
pub fn duplicate_ids(lf: LazyFrame) -> PolarsResult<Duplicates> {
    duplicates_sliced(lf, IDS_PER_PASS)
}

fn duplicates_sliced(lf: LazyFrame, ids_per_pass: u64) -> PolarsResult<Duplicates> {
    let candidates = candidates_sliced(lf.clone(), ids_per_pass)?;
    let confirmed = match candidates.confirm_query(lf.clone(), candidates.flag()) {
        Some(q) => stats::collect(q)?,
        None => DataFrame::empty(),
    };
    candidates.confirmed(lf, confirmed)
}

/// The fingerprints of request ids seen more than once: `duplicate_ids`' first pass.
pub struct Candidates {
    /// Distinct, sorted.
    fingerprints: Series,
    /// The rows of the log (with or without an id).
    pub rows: u64,
    /// The passes the ids were seen in (`IDS_PER_PASS` each, by their hashes).
    slices: u64,
}

/// `duplicate_ids`' first pass: the fingerprints seen twice.
pub fn candidates(lf: LazyFrame) -> PolarsResult<Candidates> {
    candidates_sliced(lf, IDS_PER_PASS)
}

/// Each id's hash: the same in every run (fixed seeds).
fn id_hash() -> Expr {
    let [k0, k1, k2, k3] = ID_HASH_SEEDS;
    col("request_id").hash(k0, k1, k2, k3).alias("__id_hash")
}

fn with_id(lf: LazyFrame) -> LazyFrame {
    lf.filter(col("request_id").is_not_null())
}

fn candidates_sliced(lf: LazyFrame, ids_per_pass: u64) -> PolarsResult<Candidates> {
    let hash = id_hash();
    // Hashes in slices (`hash % slices`), one pass each, so that a pass holds at most
    // about `IDS_PER_PASS` hashes however many requests there are. The rows of the log
    // bound the ids (polars reads a Parquet file's from its metadata).
    let rows = stats::collect(lf.clone().select([len().cast(DataType::UInt64)]))?;
    let rows = rows.column("len")?.u64()?.get(0).unwrap_or(0);
    let slices = rows.div_ceil(ids_per_pass).max(1);
    let with_id = with_id(lf);
    // A slice's fingerprints, in parts by their top bits, each part sorted: one seen twice
    // is next to itself. 4 bytes an id hold far less than a hash table of every id with
    // its count, and one function over each morsel fills the parts (a polars sort of the
    // 64-bit hashes took a pass per 2^25 ids).
    let mut seen_twice: Vec<u64> = vec![];
    for k in 0..slices {
        let parts = Arc::new(Mutex::new(Parts::new(rows.div_ceil(slices))));
        let filling = parts.clone();
        stats::collect(stats::counting_query(
            &with_id,
            vec![hash.clone()],
            move |cols, height| {
                let hashes = stats::at_height(&cols[0], height);
                let hashes = hashes.u64()?;
                stats::lock(&filling).add(hashes.into_no_null_iter().filter(|h| h % slices == k));
                Ok(())
            },
        ))?;
        let parts = std::mem::take(&mut *stats::lock(&parts));
        seen_twice.extend(parts.seen_twice());
    }
    // Two slices' hashes may share a fingerprint.
    seen_twice.sort_unstable();
    seen_twice.dedup();
    Ok(Candidates {
        fingerprints: Series::new("__fingerprint".into(), seen_twice),
        rows,
        slices,
    })
}

impl Candidates {
    /// The flag of a row whose id has a candidate fingerprint.
    pub fn flag(&self) -> Expr {
        if self.fingerprints.is_empty() {
            return lit(false);
        }
        col("request_id")
            .is_not_null()
            .and(stats::member_of(
                fingerprint_expr(id_hash()),
                &self.fingerprints,
            ))
            .fill_null(lit(false))
    }

    /// The query that confirms them on the log `lf` they were found in (`flagged`: `flag`,
    /// or a column of `lf` holding it): one row per id among the flagged rows, with its
    /// rows (`__n`) and the files holding it, sorted by id. None where there is no
    /// candidate.
    pub fn confirm_query(&self, lf: LazyFrame, flagged: Expr) -> Option<LazyFrame> {
        if self.fingerprints.is_empty() {
            return None;
        }
        let file = || col(FILE_INDEX).cast(DataType::Int64);
        Some(
            lf.filter(flagged)
                .group_by([col("request_id")])
                .agg([
                    len().alias("__n"),
                    file().min().alias("__a"),
                    file().max().alias("__b"),
                    file().n_unique().cast(DataType::Int64).alias("__files"),
                ])
                .sort(["request_id"], Default::default()),
        )
    }

    /// The duplicates, from `confirm_query`'s frame (`confirmed`; any frame where there
    /// is no candidate) on the log `lf`: the ids among them seen more than once (a
    /// fingerprint shared by two ids seen once each is no duplicate).
    pub fn confirmed(&self, lf: LazyFrame, confirmed: DataFrame) -> PolarsResult<Duplicates> {
        let rows = self.rows;
        if self.fingerprints.is_empty() {
            return Ok(Duplicates {
                ids: Series::new_empty("request_id".into(), &DataType::String),
                pairs: vec![],
                rows,
                flagged: 0,
            });
        }
        let confirmed = stats::collect(confirmed.lazy().filter(col("__n").gt(lit(1))))?;
        let ids = confirmed
            .column("request_id")?
            .as_materialized_series()
            .clone();
        let flagged = confirmed
            .column("__n")?
            .cast(&DataType::UInt64)?
            .u64()?
            .sum()
            .unwrap_or(0);
        let pairs = pairs(with_id(lf), &confirmed, self.slices)?;
        Ok(Duplicates {
            ids,
            pairs,
            rows,
            flagged,
        })
    }
}

/// Per pair of files, the confirmed ids (`confirmed`: one row per id, with its files)
/// both hold, with the number of distinct ids of each (a pass per slice of the hashes,
/// only where some id is in two files).
fn pairs(with_id: LazyFrame, confirmed: &DataFrame, slices: u64) -> PolarsResult<Vec<SharedIds>> {
    // Ids in exactly two files, counted per pair: one row per pair.
    let per_pair = stats::collect(
        confirmed
            .clone()
            .lazy()
            .filter(col("__files").eq(lit(2i64)))
            .group_by([col("__a"), col("__b")])
            .agg([len().cast(DataType::UInt64).alias("__shared")])
            .sort(["__a", "__b"], Default::default()),
    )?;
    if per_pair.height() == 0 {
        return Ok(vec![]);
    }
    let file = || col(FILE_INDEX).cast(DataType::Int64);
    let in_slice = |k: u64| {
        if slices == 1 {
            lit(true)
        } else {
            (col("__id_hash") % lit(slices)).eq(lit(k))
        }
    };
    // Distinct ids per file, by their hashes (a file may repeat an id of its own), summed
    // over the slices (a pass each, as above).
    let mut per_file: std::collections::BTreeMap<i64, u64> = Default::default();
    for k in 0..slices {
        let df = stats::collect(
            with_id
                .clone()
                .with_column(id_hash())
                .filter(in_slice(k))
                .group_by([file().alias("__f")])
                .agg([col("__id_hash")
                    .n_unique()
                    .cast(DataType::UInt64)
                    .alias("__ids")]),
        )?;
        let (files, counts) = (df.column("__f")?.i64()?, df.column("__ids")?.u64()?);
        for (f, n) in files.iter().zip(counts.iter()) {
            if let (Some(f), Some(n)) = (f, n) {
                *per_file.entry(f).or_default() += n;
            }
        }
    }
    let ids_in = |f: i64| per_file.get(&f).copied().unwrap_or(0);
    let (a, b) = (
        per_pair.column("__a")?.i64()?,
        per_pair.column("__b")?.i64()?,
    );
    let shared = per_pair.column("__shared")?.u64()?;
    Ok((0..per_pair.height())
        .filter_map(|i| {
            let (fa, fb) = (a.get(i)?, b.get(i)?);
            Some(SharedIds {
                a: usize::try_from(fa).ok()?,
                b: usize::try_from(fb).ok()?,
                shared: shared.get(i)?,
                a_ids: ids_in(fa),
                b_ids: ids_in(fb),
            })
        })
        .collect())
}

/// The fingerprints (`fingerprint`) of one pass of `duplicate_ids`: 2^PART_BITS parts,
/// each the low halves of the hashes whose top bits are its number.
#[derive(Default)]
struct Parts(Vec<Vec<u32>>);

impl Parts {
    /// Parts with room for about `ids` hashes without growing: a tenth more than their
    /// share (the hashes spread evenly over them).
    fn new(ids: u64) -> Parts {
        let each = (ids >> PART_BITS) as usize;
        Parts(
            (0..1 << PART_BITS)
                .map(|_| Vec::with_capacity(each + each / 10 + 16))
                .collect(),
        )
    }

    fn add(&mut self, hashes: impl Iterator<Item = u64>) {
        for h in hashes {
            self.0[(h >> (64 - PART_BITS)) as usize].push(h as u32);
        }
    }

    /// The fingerprints met more than once, in order, once each.
    fn seen_twice(self) -> Vec<u64> {
        // Each part sorted on its own, on the machine's threads.
        let parts: Vec<(usize, Vec<u32>)> = self.0.into_iter().enumerate().collect();
        stats::par_map(parts, |(part, mut low)| {
            low.sort_unstable();
            let mut found = vec![];
            for w in low.windows(2) {
                if w[0] == w[1] {
                    let f = ((part as u64) << 32) | u64::from(w[0]);
                    if found.last() != Some(&f) {
                        found.push(f);
                    }
                }
            }
            found
        })
        .concat()
    }
}

/// `fingerprint` of each hash of `hash`.
fn fingerprint_expr(hash: Expr) -> Expr {
    hash.map(
        |c: Column| {
            let f: UInt64Chunked =
                polars::chunked_array::ops::arity::unary_elementwise_values(c.u64()?, fingerprint);
            Ok(f.into_column())
        },
        |_, f| Ok(Field::new(f.name().clone(), DataType::UInt64)),
    )
}

/// Adds the `dq_*` columns. Runs after the rule table (the TPS check uses its metric);
/// `duplicate` is the duplicate-id flag (`Duplicates::flag`; on a summary's first pass,
/// which confirms them, its candidates' `Candidates::flag`: `plan::Scope::Summary`; `None`:
/// not looked for, and the flag is null). `present` says whether some input maps a field:
/// a field no input maps is null in every row and can flag nothing, so the checks leave it
/// out rather than compare a column of nulls on every request.
pub fn apply(
    rules: &RuleSet,
    lf: LazyFrame,
    duplicate: Option<Expr>,
    present: &dyn Fn(&str) -> bool,
) -> LazyFrame {
    // The checks on the timings are tests (`kernels::holds`): each reads its columns once,
    // a word of 64 requests at a time, however many comparisons it makes of them.
    let cmp = |a: &str, op: Cmp, b: Side| Test::Cmp(a.to_string(), op, b);
    let points: Vec<_> = catalogue::t0_points_in_order()
        .into_iter()
        .filter(|p| present(p.name))
        .collect();
    // Some point after a later one.
    let order = Test::Descends(points.iter().map(|p| p.name.to_string()).collect());
    let fields = || FIELDS.iter().filter(|f| present(f.name));

    let timing: Vec<&str> = fields()
        .filter(|f| f.kind.is_timing())
        .map(|f| f.name)
        .collect();
    let negative = Test::Any(
        timing
            .iter()
            .map(|n| cmp(n, Cmp::Lt, Side::Value(0.0)))
            .collect(),
    );
    let implausible = Test::Any(
        fields()
            .filter(|f| matches!(f.kind, Kind::Point { .. } | Kind::Phase | Kind::Duration))
            .map(|f| cmp(f.name, Cmp::Gt, Side::Value(MAX_PLAUSIBLE_MS)))
            .collect(),
    );

    let all_points: Vec<(&str, catalogue::Event)> = fields()
        .filter_map(|f| match f.kind {
            Kind::Point { marks, .. } => Some((f.name, marks)),
            _ => None,
        })
        .collect();
    let mut zeros = vec![];
    for (name, marks) in &all_points {
        // Later on the same clock: a client's first token says nothing of a gateway point.
        let later: Vec<Test> = all_points
            .iter()
            .filter(|(_, m)| m > marks && m.clock() == marks.clock())
            .map(|(n, _)| cmp(n, Cmp::Gt, Side::Value(0.0)))
            .collect();
        zeros.push(Test::All(vec![
            cmp(name, Cmp::Eq, Side::Value(0.0)),
            Test::Any(later),
        ]));
    }

    let tps = if tps_check_available(rules) {
        let tol = rules.param_values()[TPS_TOLERANCE_PARAM];
        let logged = col("visible_output_tps");
        let re = col(RECOMPUTED_TPS_METRIC);
        let diff = logged.clone() - re.clone();
        let abs = when(compare(diff.clone(), Cmp::Lt, lit(0.0)))
            .then(lit(0.0) - diff.clone())
            .otherwise(diff);
        compare(abs, Cmp::Gt, lit(tol) * re).fill_null(lit(false))
    } else {
        lit(false)
    };

    // Not looked for (`plan::Scope::Request`'s whole log): unknown, not "no".
    let dup = duplicate.unwrap_or_else(|| lit(NULL).cast(DataType::Boolean));

    let unparsed = any(fields()
        .filter(|f| !matches!(f.kind, Kind::Label))
        .map(|f| col(format!("{UNPARSED_PREFIX}{}", f.name).as_str()))
        .collect());

    lf.with_columns([
        holds(&order).alias(column(&OUT_OF_ORDER).as_str()),
        holds(&negative).alias(column(&NEGATIVE).as_str()),
        holds(&Test::Any(zeros)).alias(column(&ZERO_AS_MISSING).as_str()),
        tps.alias(column(&TPS_MISMATCH).as_str()),
        dup.alias(column(&DUPLICATE_ID).as_str()),
        unparsed.alias(column(&UNPARSED).as_str()),
        col(UNREADABLE_COL).alias(column(&UNREADABLE).as_str()),
        holds(&implausible).alias(column(&IMPLAUSIBLE).as_str()),
    ])
}

/// How many examples each check shows.
pub const EXAMPLES: usize = 3;

/// A flagged row as its examples name it: by id, or where the id is missing by file and
/// row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Example {
    /// The id, or the file where the id is missing: ids and files sort together.
    pub key: String,
    /// 0 for an id, the row for a file.
    pub row: i64,
    pub has_id: bool,
}

/// The first `EXAMPLES` distinct flagged rows of every check, sorted by id, or by file and
/// row (row 2 before row 10) where the id is missing, found in the pass that counts the
/// flags: one function over each morsel keeps, per check, the smallest it has met. A
/// check's examples so cost no scan of their own, and hold `EXAMPLES` rows at most.
pub struct ExampleSearch {
    found: Arc<Mutex<Vec<BTreeSet<Example>>>>,
}

impl Default for ExampleSearch {
    fn default() -> Self {
        ExampleSearch {
            found: Arc::new(Mutex::new(vec![BTreeSet::new(); ALL.len()])),
        }
    }
}

impl ExampleSearch {
    /// The query that looks, to be collected with the pass's others.
    pub fn query(&self, lf: &LazyFrame) -> LazyFrame {
        let mut inputs = vec![col("request_id"), col(SOURCE_COL), col(ROW_COL)];
        inputs.extend(ALL.iter().map(|c| col(column(c).as_str())));
        let found = self.found.clone();
        stats::counting_query(lf, inputs, move |cols, height| {
            let local = examples_of_morsel(cols, height)?;
            let mut found = stats::lock(&found);
            for (all, mine) in found.iter_mut().zip(local) {
                for e in mine {
                    keep_smallest(all, e);
                }
            }
            Ok(())
        })
    }

    /// Once the query is collected: each check's examples, in `ALL`'s order.
    pub fn found(&self) -> Vec<Vec<Example>> {
        stats::lock(&self.found)
            .iter()
            .map(|set| set.iter().cloned().collect())
            .collect()
    }
}

/// Adds `e` to `set` if it is among the `EXAMPLES` smallest.
fn keep_smallest(set: &mut BTreeSet<Example>, e: Example) {
    set.insert(e);
    if set.len() > EXAMPLES {
        set.pop_last();
    }
}

/// Per check, the `EXAMPLES` smallest distinct examples among one morsel's flagged rows.
/// `cols`: the id, the file, the row, then every check's flag in `ALL`'s order.
fn examples_of_morsel(cols: &[Column], height: usize) -> PolarsResult<Vec<BTreeSet<Example>>> {
    let (ids, files, rows) = (
        stats::at_height(&cols[0], height),
        &cols[1],
        stats::at_height(&cols[2], height),
    );
    let (ids, rows) = (ids.str()?, rows.cast(&DataType::Int64)?);
    let rows = rows.i64()?;
    let mut out = vec![];
    for flag in &cols[3..] {
        let flag = stats::at_height(flag, height);
        let flag = flag.bool()?;
        let mut set = BTreeSet::new();
        if flag.sum().unwrap_or(0) == 0 {
            out.push(set);
            continue;
        }
        for (r, f) in flag.iter().enumerate() {
            if f != Some(true) {
                continue;
            }
            let file: AnyValue;
            let (key, row, has_id): (&str, i64, bool) = match ids.get(r) {
                Some(id) => (id, 0, true),
                None => {
                    file = files.get(r)?;
                    let row = rows.get(r).unwrap_or(0);
                    match &file {
                        AnyValue::String(f) => (f, row, false),
                        AnyValue::StringOwned(f) => (f.as_str(), row, false),
                        _ => continue,
                    }
                }
            };
            // Compared before the text is copied: most flagged rows are not among the
            // smallest.
            let larger = set.len() == EXAMPLES
                && set.last().is_some_and(|l: &Example| {
                    (key, row, has_id) >= (l.key.as_str(), l.row, l.has_id)
                });
            if !larger {
                let key = key.to_string();
                keep_smallest(&mut set, Example { key, row, has_id });
            }
        }
        out.push(set);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of each check, from `ExampleSearch` over `df` in morsels of `chunk`
    /// rows (each a chunk of its own, as the streaming engine may give them).
    fn search(df: &DataFrame, chunk: usize) -> Vec<Vec<Example>> {
        let mut parts = df.slice(0, chunk);
        let mut at = chunk;
        while at < df.height() {
            parts.vstack_mut(&df.slice(at as i64, chunk)).unwrap();
            at += chunk;
        }
        let mut lf = parts.lazy();
        for c in ALL.iter().filter(|c| c.name != NEGATIVE.name) {
            lf = lf.with_column(lit(false).alias(column(c).as_str()));
        }
        let search = ExampleSearch::default();
        stats::collect_all(vec![search.query(&lf)]).unwrap();
        search.found()
    }

    /// An id flagged many times is one example, and the next ids are found past it; ids and
    /// file positions sort together, rows by number; a check that flagged nothing has none.
    #[test]
    fn examples_are_the_smallest_distinct_flagged_rows() {
        let n = 100;
        let mut ids: Vec<Option<&str>> = vec![Some("a"); n];
        ids.extend([Some("c"), None, None, Some("b"), Some("0"), Some("d")]);
        let rows: Vec<i64> = (1..=ids.len() as i64).collect();
        let files = vec!["f.csv"; ids.len()];
        let mut flag = vec![true; ids.len()];
        // "0" is not flagged.
        flag[n + 4] = false;
        let df = df!(
            "request_id" => ids,
            SOURCE_COL => files,
            ROW_COL => rows,
            "dq_negative" => flag,
        )
        .unwrap();
        let negative = ALL.iter().position(|c| c.name == NEGATIVE.name).unwrap();
        for chunk in [7, 50, 1000] {
            let found = search(&df, chunk);
            let keys: Vec<(&str, i64)> = found[negative]
                .iter()
                .map(|e| (e.key.as_str(), e.row))
                .collect();
            // "a" < "b" < "c" < "f.csv": the rows without an id come last here.
            assert_eq!(keys, [("a", 0), ("b", 0), ("c", 0)], "{chunk}");
            assert!(found
                .iter()
                .enumerate()
                .all(|(i, f)| i == negative || f.is_empty()));
        }

        // Without ids, by file and row number (row 9 before row 10).
        let df = df!(
            "request_id" => [None::<&str>, None, None],
            SOURCE_COL => ["f.csv", "f.csv", "e.csv"],
            ROW_COL => [10i64, 9, 11],
            "dq_negative" => [true, true, false],
        )
        .unwrap();
        let found = search(&df, 2);
        let keys: Vec<(&str, i64)> = found[negative]
            .iter()
            .map(|e| (e.key.as_str(), e.row))
            .collect();
        assert_eq!(keys, [("f.csv", 9), ("f.csv", 10)]);
    }

    /// Ids seen twice are found (and only those); a missing id is never a duplicate.
    #[test]
    fn duplicate_ids_are_confirmed_by_the_ids() {
        let df = df!(
            "request_id" => [Some("x"), Some("y"), Some("x"), None, None, Some("z"), Some("y")],
            FILE_INDEX => [0u32; 7],
        )
        .unwrap();
        let dups = duplicate_ids(df.lazy()).unwrap();
        let got: Vec<&str> = dups.ids.str().unwrap().iter().flatten().collect();
        assert_eq!(got, ["x", "y"]);
        // All in one file: no pair of files shares them.
        assert!(dups.pairs.is_empty());
        // Their four rows are flagged; the examples are the smallest ids.
        assert_eq!(dups.flagged, 4);
        let examples: Vec<String> = dups
            .examples()
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        assert_eq!(examples, ["x", "y"]);
    }

    /// Two ids seen once each that share a fingerprint (as 48 bits of 10M ids' hashes
    /// nearly always do somewhere) are no duplicates: the confirmation by the ids drops
    /// them, from the ids, the flagged rows and the examples alike.
    #[test]
    fn a_shared_fingerprint_is_no_duplicate() {
        let lf = df!("request_id" => ["a", "b", "a", "c"], FILE_INDEX => [0u32; 4])
            .unwrap()
            .lazy();
        let candidates = Candidates {
            fingerprints: Series::new("__fingerprint".into(), [1u64, 2]),
            rows: 4,
            slices: 1,
        };
        // What `confirm_query` finds: "a" twice; "b" and "c" once, under one fingerprint.
        let confirmed = df!(
            "request_id" => ["a", "b", "c"],
            "__n" => [2u32, 1, 1],
            "__a" => [0i64; 3],
            "__b" => [0i64; 3],
            "__files" => [1i64; 3],
        )
        .unwrap();
        let d = candidates.confirmed(lf, confirmed).unwrap();
        let ids: Vec<&str> = d.ids.str().unwrap().iter().flatten().collect();
        assert_eq!(ids, ["a"]);
        assert_eq!(d.flagged, 2);
        assert_eq!(d.examples().unwrap().len(), 1);
    }

    /// In slices (a pass per slice of the hashes, as on a log of many millions of ids)
    /// the same ids and the same per-file counts come out as in one pass.
    #[test]
    fn duplicates_in_slices_equal_one_pass() {
        let ids: Vec<String> = (0..200)
            .map(|i| format!("id-{}", if i % 7 == 0 { i / 2 } else { i }))
            .collect();
        let files: Vec<u32> = (0..200).map(|i| (i % 3 == 0) as u32).collect();
        let df = df!("request_id" => ids, FILE_INDEX => files).unwrap();
        let one = duplicates_sliced(df.clone().lazy(), 1 << 20).unwrap();
        for per_pass in [1, 9, 64] {
            let sliced = duplicates_sliced(df.clone().lazy(), per_pass).unwrap();
            assert!(sliced.ids.equals_missing(&one.ids), "{per_pass} per pass");
            assert_eq!(sliced.pairs, one.pairs, "{per_pass} per pass");
        }
        assert!(one.ids.len() > 5 && !one.pairs.is_empty());
    }

    /// Among many ids (the sorted hashes span many of the streaming engine's morsels, so
    /// an id's two hashes may fall on either side of a morsel's end), every id seen twice
    /// is found, and no other.
    #[test]
    fn duplicates_among_many_ids_are_all_found() {
        let n = 400_000;
        // Every 997th id is repeated at the end, in reverse order.
        let twice: Vec<usize> = (0..n).step_by(997).collect();
        let ids: Vec<String> = (0..n)
            .chain(twice.iter().rev().copied())
            .map(|i| format!("req-{i:07}"))
            .collect();
        let rows = ids.len();
        let df = df!("request_id" => ids, FILE_INDEX => vec![0u32; rows]).unwrap();
        let dups = duplicate_ids(df.lazy()).unwrap();
        let got: Vec<&str> = dups.ids.str().unwrap().iter().flatten().collect();
        let want: Vec<String> = twice.iter().map(|i| format!("req-{i:07}")).collect();
        assert_eq!(got, want);
    }

    /// Ids shared by two files are counted per pair, with each file's number of ids: file
    /// 1 is a copy of file 0; file 2 shares one id with file 0 and holds more.
    #[test]
    fn duplicates_across_files_are_counted_per_pair() {
        let df = df!(
            "request_id" => ["a", "b", "c", "a", "b", "c", "c", "d", "e", "f"],
            FILE_INDEX => [0u32, 0, 0, 1, 1, 1, 2, 2, 2, 2],
        )
        .unwrap();
        let dups = duplicate_ids(df.lazy()).unwrap();
        let got: Vec<&str> = dups.ids.str().unwrap().iter().flatten().collect();
        assert_eq!(got, ["a", "b", "c"]);
        // "c" is in three files: in no pair.
        assert_eq!(
            dups.pairs,
            [SharedIds {
                a: 0,
                b: 1,
                shared: 2,
                a_ids: 3,
                b_ids: 3
            }]
        );
        assert!(!dups.pairs[0].whole_file());
        // File 0 repeats "a": its distinct ids, not its rows, are all in file 1.
        let df = df!(
            "request_id" => ["a", "b", "a", "a", "b", "x"],
            FILE_INDEX => [0u32, 0, 0, 1, 1, 1],
        )
        .unwrap();
        let dups = duplicate_ids(df.lazy()).unwrap();
        assert_eq!(dups.pairs.len(), 1);
        assert!(
            dups.pairs[0].whole_file(),
            "every id of file 0 is in file 1"
        );
    }
}
