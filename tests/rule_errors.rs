//! Every way a rule file can be wrong gets an error that names the file, line and column,
//! says what was expected and found, and exits 2. One snapshot per bad file in
//! fixtures/rules/bad/.

mod common;

use common::*;

fn check(name: &str) -> String {
    let rel = format!("fixtures/rules/bad/{name}.toml");
    let out = cli(&["rules", "check", &rel]);
    assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{name} printed to stdout");
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(
        err.contains(&format!("{rel}:")),
        "{name}: error does not name the file:\n{err}"
    );
    err
}

macro_rules! bad_rule_file {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), check(stringify!($name)));
        }
    )*};
}

bad_rule_file!(
    cross_origin_subtraction,
    cross_origin_comparison,
    cross_origin_coalesce,
    cross_origin_through_metric,
    cross_origin_second_line,
    unit_mismatch,
    param_unit_mismatch,
    unknown_field,
    expression_syntax,
    toml_syntax,
    unknown_key,
    duplicate_class,
    metric_cycle,
    condition_not_boolean,
    long_line,
);

#[test]
fn every_bad_fixture_has_a_test() {
    let src = std::fs::read_to_string(root().join("tests/rule_errors.rs")).unwrap();
    for entry in std::fs::read_dir(fixture("rules/bad")).unwrap() {
        let name = entry
            .unwrap()
            .path()
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            src.contains(&format!("    {name},")),
            "fixtures/rules/bad/{name}.toml has no test"
        );
    }
}

#[test]
fn cross_origin_errors_name_both_fields_and_origins() {
    for name in [
        "cross_origin_subtraction",
        "cross_origin_comparison",
        "cross_origin_coalesce",
    ] {
        let err = check(name);
        assert!(err.contains("counts from t0 (gateway receive)"), "{err}");
        assert!(err.contains("counts from t1 (upstream start)"), "{err}");
        assert!(err.contains("upstream_headers_ms + t1_offset_ms"), "{err}");
    }
}

#[test]
fn shipped_table_checks_clean() {
    let out = cli(&["rules", "check", "rules/gateway.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "rules/gateway.toml: ok — table `gateway`, 9 rules, 18 metrics, 12 parameters\n"
    );
}

#[test]
fn set_of_an_unknown_parameter_suggests_the_nearest() {
    let out = cli(&[
        "analyze",
        "fixtures/traces/traces.jsonl",
        "--set",
        "header_slow=2000",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "tracediag: error: --set: the rule table `gateway` has no parameter `header_slow`; did you mean `header_slow_ms`?\n"
    );
}
