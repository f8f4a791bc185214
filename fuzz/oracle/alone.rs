//! A check two oracles share (`crate::alone` where they are included with `#[path]`): a text log's copy, made in the
//! reading that checks it (`source::copy`), must hold what polars' reader reads. The first
//! and last requests' rows in the whole log must equal their rows read alone (a lookup of
//! the id column and one-row slices, through polars' reader).

use std::path::PathBuf;

use polars::prelude::*;
use tracediag::source::{self, BadRowPolicy, COHORT_ROWS};

/// Panics where a request's rows in `all` (the whole log at `paths`, collected) differ from
/// its rows read alone, unless polars' reader refuses the file for a reason
/// `refused_alone` accepts.
pub fn requests_read_alone_agree(
    paths: &[PathBuf],
    all: &DataFrame,
    refused_alone: impl Fn(&str) -> bool,
) {
    let Ok(ids) = all.column("request_id").and_then(|c| c.str().cloned()) else {
        return;
    };
    let ids: Vec<&str> = ids.iter().flatten().collect();
    for id in [ids.first(), ids.last()].into_iter().flatten() {
        let loaded =
            match source::load_for(paths, None, BadRowPolicy::Keep, &[], Some(id), COHORT_ROWS) {
                Ok(loaded) => loaded,
                Err(e) if refused_alone(&e.to_string()) => return,
                Err(e) => panic!("the log read whole does not read again for one request: {e}"),
            };
        let alone = match loaded.request.expect("a request's rows").collect() {
            Ok(alone) => alone,
            Err(e) if refused_alone(&e.to_string()) => return,
            Err(e) => panic!("a request's rows do not collect: {e}"),
        };
        let whole = all
            .clone()
            .lazy()
            .filter(col("request_id").eq(lit(*id)))
            .collect()
            .expect("filter");
        assert!(
            whole.equals_missing(&alone),
            "request {id:?} in the whole log:\n{whole}\nread alone:\n{alone}"
        );
    }
}
