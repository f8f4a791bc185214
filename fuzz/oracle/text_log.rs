//! What two oracles share (`crate::text_log` where they are included with `#[path]`): a text
//! log's bytes read whole as `analyze` reads them, and the check that its copy, made in the
//! reading that checks it (`source::copy`), holds what polars' reader reads: the first and
//! last requests' rows in the whole log equal their rows read alone (a lookup of the id
//! column and one-row slices, through polars' reader).

use std::io::Write;
use std::path::PathBuf;

use polars::prelude::*;
use tracediag::error::Error;
use tracediag::source::{self, BadRowPolicy, Input, COHORT_ROWS};

/// A log read whole: its temporary file (kept while it is read), its path, its canonical
/// rows and what was read.
pub struct Whole {
    _file: tempfile::NamedTempFile,
    pub paths: Vec<PathBuf>,
    pub all: DataFrame,
    pub inputs: Vec<Input>,
}

/// `data` written to a temporary file ending in `suffix` and read with `--on-bad-row keep`;
/// none where the whole file is refused for a reason `acceptable` accepts. Panics where it
/// is refused otherwise, where its rows do not collect, and where rows were bad but
/// `--on-bad-row error` does not stop with an acceptable error.
pub fn read_whole(data: &[u8], suffix: &str, acceptable: impl Fn(&Error) -> bool) -> Option<Whole> {
    let mut file = tempfile::Builder::new()
        .suffix(suffix)
        .tempfile()
        .expect("temp file");
    file.write_all(data).expect("write temp file");
    file.flush().expect("flush temp file");
    let paths = vec![file.path().to_path_buf()];
    let (lf, inputs) = match source::load(&paths, None, BadRowPolicy::Keep, &[]) {
        Err(e) => {
            assert!(acceptable(&e), "the whole file refused: {e}");
            return None;
        }
        Ok(loaded) => loaded,
    };
    let all = match lf.collect() {
        Ok(all) => all,
        Err(e) => panic!("the canonical frame does not collect: {e}"),
    };
    if inputs.iter().any(|i| !i.bad_rows.is_empty()) {
        match source::load(&paths, None, BadRowPolicy::Error, &[]) {
            Ok(_) => panic!("bad rows under keep, none under error"),
            Err(e) => assert!(acceptable(&e), "--on-bad-row error: {e}"),
        }
    }
    Some(Whole {
        _file: file,
        paths,
        all,
        inputs,
    })
}

/// Panics where a request's rows in the whole log differ from its rows read alone, unless
/// polars' reader refuses the file for a reason `refused_alone` accepts.
pub fn requests_read_alone_agree(whole: &Whole, refused_alone: impl Fn(&str) -> bool) {
    let Ok(ids) = whole
        .all
        .column("request_id")
        .and_then(|c| c.str().cloned())
    else {
        return;
    };
    let ids: Vec<&str> = ids.iter().flatten().collect();
    for id in [ids.first(), ids.last()].into_iter().flatten() {
        let loaded = match source::load_for(
            &whole.paths,
            None,
            BadRowPolicy::Keep,
            &[],
            Some(id),
            COHORT_ROWS,
        ) {
            Ok(loaded) => loaded,
            Err(e) if refused_alone(&e.to_string()) => return,
            Err(e) => panic!("the log read whole does not read again for one request: {e}"),
        };
        // An id in more rows than are worth a slice each comes with every row of the file
        // (as `explain` reads it, filtering them by id).
        let of_id = |lf: LazyFrame| lf.filter(col("request_id").eq(lit(*id)));
        let alone = match of_id(loaded.request.expect("a request's rows")).collect() {
            Ok(alone) => alone,
            Err(e) if refused_alone(&e.to_string()) => return,
            Err(e) => panic!("a request's rows do not collect: {e}"),
        };
        let in_whole = of_id(whole.all.clone().lazy()).collect().expect("filter");
        assert!(
            in_whole.equals_missing(&alone),
            "request {id:?} in the whole log:\n{in_whole}\nread alone:\n{alone}"
        );
    }
}
