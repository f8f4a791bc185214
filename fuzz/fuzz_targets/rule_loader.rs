//! Rule-file loader and expression type-checker: `RuleSet::parse` on arbitrary text must
//! never panic; a table it accepts must compile onto an empty canonical frame without
//! panicking (the plan is built, not collected).
#![no_main]

use libfuzzer_sys::fuzz_target;
use polars::prelude::*;
use tracediag::catalogue::BASELINE_SUFFIX;
use tracediag::ruleset::{compile, RuleSet};
use tracediag::source::dtype_of;

fn empty_frame(rules: &RuleSet) -> LazyFrame {
    let mut cols: Vec<Column> = Vec::new();
    for f in rules.catalogue.fields() {
        let dt = dtype_of(f.kind);
        cols.push(Column::new_empty(f.name.into(), &dt));
        if f.baseline {
            let name = format!("{}{}", f.name, BASELINE_SUFFIX);
            cols.push(Column::new_empty(name.into(), &dt));
        }
    }
    DataFrame::new(0, cols)
        .expect("catalogue names are distinct")
        .lazy()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(rules) = RuleSet::parse(&text, "fuzz.toml") {
        let _plan = compile::apply(&rules, empty_frame(&rules));
    }
});
