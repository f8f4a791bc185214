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
    scaled_point_multiply,
    scaled_point_multiply_left,
    scaled_point_divide,
    scaled_point_divide_by,
    scaled_point_negate,
    scaled_point_abs,
    elapsed_of_a_duration,
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

/// Issue 19: `first_text_delta_ms - upstream_headers_ms * 1` passed, because a point
/// times a number was typed as a duration. Every operator that scales a point is refused
/// where it stands, and names the point's origin and the explicit conversion.
#[test]
fn scaling_a_time_point_is_refused_at_the_operator() {
    for (name, at) in [
        ("scaled_point_multiply", ":6:31"),
        ("scaled_point_multiply_left", ":6:31"),
        ("scaled_point_divide", ":6:31"),
        ("scaled_point_divide_by", ":8:7"),
        ("scaled_point_negate", ":6:32"),
        ("scaled_point_abs", ":6:31"),
    ] {
        let err = check(name);
        assert!(err.contains(&format!("{name}.toml{at}")), "{name}: {err}");
        assert!(err.contains("a time point: `upstream_headers_ms`"), "{err}");
        assert!(err.contains("counts from t1 (upstream start)"), "{err}");
        assert!(err.contains("`elapsed(upstream_headers_ms)`"), "{err}");
    }
}

/// The other side of the same change: durations still scale, a point's time since its
/// origin is a duration when `elapsed` says so, and the result takes part in the same
/// checks as any duration.
#[test]
fn durations_still_scale_and_elapsed_makes_a_point_a_duration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scale.toml");
    std::fs::write(
        &path,
        r#"name = "scale"
default_class = "normal"

[[params]]
name = "share"
value = 0.5
unit = "ratio"
doc = "x"

[[metrics]]
name = "twice_the_gap_ms"
expr = "(first_text_delta_ms - first_response_ms) * 2"
doc = "a same-origin difference is a duration: it scales"

[[metrics]]
name = "shifted_ms"
expr = "first_text_delta_ms - auth_ms / 2 - 3 * twice_the_gap_ms"
doc = "a point minus scaled durations is a point"

[[rules]]
class = "mostly_headers"
order = 1
when = "upstream_headers_ms >= share * elapsed(total_handler_ms) AND output_tokens / elapsed(upstream_headers_ms) * 1000 < 20"
look_at = "upstream_headers_ms"
layer = "x"
next_check = "x"
detects = "x"
why = "x"
"#,
    )
    .unwrap();
    let out = cli(&["rules", "check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).ends_with(": ok — table `scale`, 1 rules, 2 metrics, 1 parameters\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn shipped_tables_check_clean() {
    let out = cli(&[
        "rules",
        "check",
        "rules/gateway.toml",
        "rules/relay.toml",
        "rules/gateway_coarse.toml",
        "rules/upstream.toml",
        "rules/engine.toml",
        "rules/client.toml",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "rules/gateway.toml: ok — table `gateway`, 9 rules, 19 metrics, 12 parameters\n\
         rules/relay.toml: ok — table `relay`, 6 rules, 9 metrics, 7 parameters\n\
         rules/gateway_coarse.toml: ok — table `gateway_coarse`, 7 rules, 13 metrics, 8 parameters\n\
         rules/upstream.toml: ok — table `upstream`, 4 rules, 5 metrics, 4 parameters\n\
         rules/engine.toml: ok — table `engine`, 4 rules, 9 metrics, 5 parameters\n\
         rules/client.toml: ok — table `client`, 5 rules, 5 metrics, 5 parameters\n"
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
        "tracediag: error: --set: no shipped rule table has a parameter `header_slow`; did you mean `header_slow_ms`?\n"
    );
}
