//! Client identifiers (`user`, `token_name`, `client_ip`) are written only as salted
//! HMAC-SHA256 hashes unless `--keep-ids`: checked against a reference HMAC computed here,
//! across runs, in every output format, and for leaks of the raw values.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use hmac::{Hmac, KeyInit, Mac};
use polars::prelude::*;
use sha2::{Digest, Sha256};

const USERS: &str = "fixtures/ids/users.jsonl";

/// Every raw identifier value of the fixture (`username` included: it is never read).
const RAW: &[&str] = &[
    "u-alice-4821",
    "u-bob-9037",
    "u-carol-1170",
    "Alice Liddell",
    "Bob Marley",
    "Carol Danvers",
    "alice-laptop-key",
    "bob-ci-key",
    "carol-batch-key",
    "203.0.113.17",
    "198.51.100.42",
    "192.0.2.9",
];

/// The binary with `TRACEDIAG_SALT` unset (or set to `env_salt`), from the project root.
fn run_with(args: &[&str], env_salt: Option<&str>) -> Output {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(root())
        .env_remove("TRACEDIAG_SALT");
    if let Some(s) = env_salt {
        c.env("TRACEDIAG_SALT", s);
    }
    c.output().expect("the tracediag binary runs")
}

fn run_ok(args: &[&str], env_salt: Option<&str>) -> String {
    let o = run_with(args, env_salt);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The reference: hex HMAC-SHA256(salt, value), first 16 characters.
fn reference(salt: &str, value: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(salt.as_bytes()).unwrap();
    mac.update(value.as_bytes());
    let code = mac.finalize().into_bytes();
    code.iter().map(|b| format!("{b:02x}")).collect::<String>()[..16].to_string()
}

fn fingerprint(salt: &str) -> String {
    let d = Sha256::digest(salt.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect::<String>()[..8].to_string()
}

/// `--out` as JSON lines: one object per request.
fn out_rows(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn column(rows: &[serde_json::Value], name: &str) -> Vec<Option<String>> {
    rows.iter()
        .map(|r| r[name].as_str().map(String::from))
        .collect()
}

fn write_rows(dir: &Path, name: &str, extra: &[&str], env_salt: Option<&str>) -> Vec<u8> {
    let out = dir.join(name);
    let mut args = vec!["analyze", USERS, "--out", out.to_str().unwrap(), "--force"];
    args.extend_from_slice(extra);
    run_ok(&args, env_salt);
    std::fs::read(&out).unwrap()
}

#[test]
fn salted_ids_are_the_hmac_of_the_value_stable_across_runs_and_nulls_stay_null() {
    let dir = tempfile::tempdir().unwrap();
    let first = write_rows(dir.path(), "rows.jsonl", &["--salt", "s3cret"], None);
    let rows = out_rows(&dir.path().join("rows.jsonl"));
    let h = |v: &str| Some(reference("s3cret", v));
    assert_eq!(
        column(&rows, "user"),
        [
            h("u-alice-4821"),
            h("u-bob-9037"),
            h("u-alice-4821"),
            None,
            h("u-carol-1170")
        ]
    );
    assert_eq!(
        column(&rows, "token_name"),
        [
            h("alice-laptop-key"),
            h("bob-ci-key"),
            h("alice-laptop-key"),
            None,
            h("carol-batch-key")
        ]
    );
    assert_eq!(
        column(&rows, "client_ip"),
        [
            h("203.0.113.17"),
            h("198.51.100.42"),
            h("203.0.113.17"),
            h("198.51.100.42"),
            h("192.0.2.9")
        ]
    );
    // The same salt, the same bytes; from the environment too.
    let second = write_rows(dir.path(), "rows.jsonl", &["--salt", "s3cret"], None);
    assert_eq!(first, second);
    let from_env = write_rows(dir.path(), "rows.jsonl", &[], Some("s3cret"));
    assert_eq!(first, from_env);

    let table = run_ok(&["analyze", USERS, "--salt", "s3cret"], None);
    let line = format!(
        "client ids: user, token_name, client_ip → salted HMAC-SHA256 (given salt, fingerprint {})\n",
        fingerprint("s3cret")
    );
    assert!(table.contains(&line), "{table}");
    assert_eq!(table, run_ok(&["analyze", USERS, "--salt", "s3cret"], None));
}

#[test]
fn without_a_salt_each_run_draws_one_and_reports_its_fingerprint() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), "a.jsonl", &[], None);
    write_rows(dir.path(), "b.jsonl", &[], None);
    let a = column(&out_rows(&dir.path().join("a.jsonl")), "user");
    let b = column(&out_rows(&dir.path().join("b.jsonl")), "user");
    assert_ne!(a, b);
    for users in [&a, &b] {
        // Still one hash per user within a run, and the null stays null.
        assert_eq!(users[0], users[2]);
        assert_eq!(users[3], None);
        assert!(users[0]
            .as_deref()
            .is_some_and(|h| h.len() == 16 && h.bytes().all(|c| c.is_ascii_hexdigit())));
    }

    let json = run_ok(&["analyze", USERS, "--format", "json"], None);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ids = &v["client_ids"];
    assert_eq!(
        ids["fields"],
        serde_json::json!(["user", "token_name", "client_ip"])
    );
    assert_eq!(ids["written_as"], "hmac_sha256");
    assert_eq!(ids["salt"], "random_per_run");
    let fp = ids["salt_fingerprint"].as_str().unwrap();
    assert_eq!(fp.len(), 8);

    let table = run_ok(&["analyze", USERS], None);
    let line = table
        .lines()
        .find(|l| l.starts_with("client ids: "))
        .unwrap_or_else(|| panic!("no client ids line:\n{table}"));
    assert!(
        line.contains("→ salted HMAC-SHA256 (random per-run salt, fingerprint ")
            && line.ends_with("; --salt for stable hashes, --keep-ids to keep them)"),
        "{line}"
    );
}

#[test]
fn keep_ids_keeps_the_values_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    write_rows(dir.path(), "rows.jsonl", &["--keep-ids"], None);
    let rows = out_rows(&dir.path().join("rows.jsonl"));
    assert_eq!(
        column(&rows, "user"),
        [
            Some("u-alice-4821".into()),
            Some("u-bob-9037".into()),
            Some("u-alice-4821".into()),
            None,
            Some("u-carol-1170".into())
        ]
    );
    assert_eq!(column(&rows, "token_name")[3], None);
    let table = run_ok(&["analyze", USERS, "--keep-ids"], None);
    assert!(
        table.contains("client ids: user, token_name, client_ip → kept as logged (--keep-ids)\n"),
        "{table}"
    );
    let json = run_ok(&["analyze", USERS, "--keep-ids", "--format", "json"], None);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["client_ids"],
        serde_json::json!({"fields": ["user", "token_name", "client_ip"], "written_as": "kept"})
    );
}

/// Every string cell of a Parquet file.
fn parquet_strings(path: &Path) -> Vec<String> {
    let df = ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap();
    let mut out = vec![];
    for c in df.columns() {
        if let Ok(s) = c.str() {
            out.extend(s.iter().flatten().map(String::from));
        }
    }
    out
}

#[test]
fn raw_identifiers_never_reach_any_output_unless_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut texts: Vec<(String, String)> = vec![];
    for args in [
        vec!["analyze", USERS],
        vec!["analyze", USERS, "--format", "json"],
        vec!["analyze", USERS, "--by", "user,token_name,client_ip"],
        vec!["analyze", USERS, "--by", "user", "--format", "json"],
        vec!["explain", USERS, "--request-id", "ids-2"],
        vec![
            "explain",
            USERS,
            "--request-id",
            "ids-2",
            "--format",
            "json",
        ],
        vec!["explain", USERS, "--class", "normal"],
        vec!["throughput", USERS, "--by", "user"],
        vec!["compare", USERS, "--split", "channel=ch-east,ch-west"],
    ] {
        let o = run_with(&args, None);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        texts.push((format!("{args:?} stdout"), stdout(&o)));
        texts.push((format!("{args:?} stderr"), stderr(&o)));
    }
    for ext in ["csv", "jsonl"] {
        let bytes = write_rows(dir.path(), &format!("rows.{ext}"), &[], None);
        texts.push((ext.into(), String::from_utf8(bytes).unwrap()));
    }
    for ext in ["md", "html"] {
        let out = dir.path().join(format!("report.{ext}"));
        run_ok(&["report", USERS, "--out", out.to_str().unwrap()], None);
        texts.push((ext.into(), std::fs::read_to_string(&out).unwrap()));
    }
    write_rows(dir.path(), "rows.parquet", &[], None);
    let cells = parquet_strings(&dir.path().join("rows.parquet"));
    assert!(cells.len() > 20, "{cells:?}");
    texts.push(("parquet".into(), cells.join("\n")));
    let raw_bytes = std::fs::read(dir.path().join("rows.parquet")).unwrap();
    texts.push((
        "parquet bytes".into(),
        String::from_utf8_lossy(&raw_bytes).into(),
    ));

    for (what, text) in &texts {
        for raw in RAW {
            assert!(!text.contains(raw), "{what} holds `{raw}`:\n{text}");
        }
    }

    // The check would catch them: with --keep-ids the read ones are there.
    let kept = run_ok(&["analyze", USERS, "--by", "user", "--keep-ids"], None);
    assert!(kept.contains("u-alice-4821"), "{kept}");
    write_rows(dir.path(), "kept.parquet", &["--keep-ids"], None);
    let cells = parquet_strings(&dir.path().join("kept.parquet"));
    for raw in ["u-bob-9037", "bob-ci-key", "198.51.100.42"] {
        assert!(cells.iter().any(|c| c == raw), "{raw}: {cells:?}");
    }
    // `username` is never read: user_id comes first among the aliases of `user`.
    assert!(!cells.iter().any(|c| c == "Bob Marley"), "{cells:?}");
}

#[test]
fn by_user_groups_by_the_hashes() {
    let out = run_ok(
        &[
            "analyze", USERS, "--by", "user", "--format", "json", "--salt", "s3cret",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let groups: Vec<(serde_json::Value, u64)> = v["groups"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"][0].clone(), g["rows"].as_u64().unwrap()))
        .collect();
    let h = |v: &str| serde_json::Value::String(reference("s3cret", v));
    let mut want = vec![
        (h("u-alice-4821"), 2),
        (h("u-bob-9037"), 1),
        (h("u-carol-1170"), 1),
        (serde_json::Value::Null, 1),
    ];
    let mut got = groups.clone();
    let key = |(k, _): &(serde_json::Value, u64)| k.to_string();
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got, want);

    let table = run_ok(
        &["analyze", USERS, "--by", "user", "--salt", "s3cret"],
        None,
    );
    assert!(
        table.contains(&reference("s3cret", "u-alice-4821")),
        "{table}"
    );

    let o = run_with(
        &["throughput", USERS, "--by", "user", "--salt", "s3cret"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tp = stdout(&o);
    assert!(tp.contains(&reference("s3cret", "u-bob-9037")), "{tp}");
    // How the hashes were made is a note: on stderr.
    assert!(
        stderr(&o).contains(&format!(
            "tracediag: note: client ids: user, token_name, client_ip → salted HMAC-SHA256 (given salt, fingerprint {})",
            fingerprint("s3cret")
        )),
        "{}",
        stderr(&o)
    );
}

#[test]
fn salt_with_keep_ids_and_an_empty_salt_are_usage_errors() {
    for args in [
        vec!["analyze", USERS, "--salt", "s3cret", "--keep-ids"],
        vec![
            "report",
            USERS,
            "--out",
            "never.md",
            "--keep-ids",
            "--salt",
            "x",
        ],
        vec!["analyze", USERS, "--salt", ""],
    ] {
        let o = run_with(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{err}");
        assert!(!err.contains("s3cret"), "the salt is never printed: {err}");
    }
    assert!(!root().join("never.md").exists());
    // A salt from the environment is a standing default: the explicit --keep-ids wins,
    // and says so; the salt is never shown.
    let kept = run_ok(&["analyze", USERS, "--keep-ids"], Some("env-s3cret"));
    assert!(
        kept.contains("client ids: user, token_name, client_ip → kept as logged (--keep-ids)\n"),
        "{kept}"
    );
    assert!(!kept.contains("env-s3cret"), "{kept}");
}

#[test]
fn help_never_shows_the_salt_from_the_environment() {
    for cmd in ["analyze", "explain", "compare", "report", "throughput"] {
        let help = run_ok(&[cmd, "--help"], Some("env-s3cret"));
        assert!(help.contains("--salt <SECRET>"), "{cmd}: {help}");
        assert!(help.contains("--keep-ids"), "{cmd}: {help}");
        assert!(help.contains("TRACEDIAG_SALT"), "{cmd}: {help}");
        assert!(!help.contains("env-s3cret"), "{cmd}: {help}");
    }
}

#[test]
fn inputs_without_identifiers_say_nothing_and_stay_byte_identical() {
    for args in [
        vec!["analyze", "fixtures/traces/traces.jsonl"],
        vec![
            "analyze",
            "fixtures/traces/traces.jsonl",
            "--format",
            "json",
        ],
    ] {
        let a = run_ok(&args, None);
        assert!(
            !a.contains("client ids") && !a.contains("client_ids"),
            "{a}"
        );
        assert_eq!(a, run_ok(&args, None));
    }
}

#[test]
fn rules_cannot_use_an_identifier() {
    let dir = tempfile::tempdir().unwrap();
    let rules = std::fs::read_to_string(root().join("rules/gateway.toml")).unwrap();
    let bad = rules.replacen("when = \"\"\"", "when = \"\"\"user = 'x' OR ", 1);
    assert_ne!(bad, rules, "the table has a `when`");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, bad).unwrap();
    let err = fails(&["rules", "check", path.to_str().unwrap()]);
    assert!(
        err.contains("`user` is a client identifier: rules cannot use it"),
        "{err}"
    );
}
