//! The command line: clap definitions (raw flags), their validation into library
//! options, dispatch, and the one place that prints. Exit codes: 0 done, 1 a finding
//! asked to fail on (`--strict`), 2 error, 128 + the signal when interrupted (130 Ctrl-C,
//! 143 SIGTERM).

use std::io::Write;
use std::path::{Path, PathBuf};

/// `eprintln!` that does not panic when stderr is closed (`tracediag … 2>&1 | head -2`
/// exited 101 with the error half written): a message nobody can read is dropped.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

use clap::{Args, Parser, Subcommand, ValueEnum};

/// A command's `--help` epilogue: its examples, then its exit codes (each line at most 80
/// columns). The codes are main's: 0 done, 1 a finding the user asked to fail on, 2 any
/// error (clap's usage errors included), 130 or 143 the Ctrl-C or SIGTERM handler.
macro_rules! after_help {
    ($examples:expr, $codes:expr) => {
        concat!(
            "Examples:\n",
            $examples,
            "\nExit codes:\n  0    done\n",
            $codes
        )
    };
}
macro_rules! exit_2 {
    () => {
        "  2    error: bad arguments, bad rule file, or input that is unreadable\n       or that nothing can be made of\n"
    };
}
macro_rules! exit_130 {
    () => {
        "  130  interrupted by Ctrl-C (143 by SIGTERM); no partial output is left\n"
    };
}

use crate::progress::Progress;
use tracediag::analyze::{self, Options};
use tracediag::catalogue::Catalogue;
use tracediag::error::{Error, Result};
use tracediag::ids::{IdPolicy, Salt};
use tracediag::monitor;
use tracediag::output;
use tracediag::peer::Definitions;
use tracediag::report::{self, Renderer};
use tracediag::ruleset::{tables, RuleSet};
use tracediag::source::{self, BadRowPolicy, InputFormat};
use tracediag::throughput;

#[derive(Debug, Parser)]
#[command(
    name = "tracediag",
    version,
    about = "Diagnose LLM API latency offline, from gateway request logs",
    long_about = "Reads per-request logs of API gateways, benchmark clients and inference servers \
(Parquet, CSV, JSON lines, JSON arrays), rebuilds each request's timeline, derives named latency \
metrics, and tags every request with a class from the ordered rule table of the clock its log \
has (rules/gateway.toml for the full gateway timeline; relay, gateway_coarse, upstream, engine \
and client for the others). Azure Monitor metric exports get a class per deployment and window \
from rules/azure.toml.",
    after_help = after_help!(
        "  tracediag analyze logs.parquet --by model,channel\n\
         \x20 tracediag explain logs.parquet --request-id req-42\n\
         \x20 tracediag rules --emit toml > my_rules.toml\n",
        concat!(
            "  1    analyze --strict or compare --strict found what it checks\n",
            exit_2!(),
            exit_130!()
        )
    )
)]
pub struct Cli {
    /// No progress indicator on stderr (it only ever shows on a terminal, for large inputs).
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Diagnose gateway request logs (class table, named-metric percentiles, data quality)
    /// or Azure Monitor metric exports (a class per deployment and window).
    #[command(after_help = after_help!(
        "  tracediag analyze logs.parquet --by model,channel\n\
         \x20 tracediag analyze 'logs/*.jsonl' --since 2026-11-02T10:00:00Z --out tagged.csv\n\
         \x20 tracediag analyze metrics/*.json --baseline last_week/*.json\n",
        concat!(
            "  1    --strict: a data-quality check flagged a row, or a bad row was skipped\n",
            exit_2!(),
            exit_130!()
        )
    ))]
    Analyze(AnalyzeArgs),
    /// Show the ordered rule table, or check a rule file.
    #[command(after_help = after_help!(
        "  tracediag rules --emit toml > my_rules.toml\n\
         \x20 tracediag rules --emit sql --dialect spark --table logs.requests > tagged.sql\n\
         \x20 tracediag rules check my_rules.toml\n",
        "  2    a rule file does not load or check (file:line:column), or bad arguments\n"
    ))]
    Rules(RulesArgs),
    /// Tokens and requests per minute (min / mean / p95 / max), per deployment or group.
    #[command(after_help = after_help!(
        "  tracediag throughput logs.parquet --by model\n\
         \x20 tracediag throughput metrics/*.json --format json\n",
        concat!(exit_2!(), exit_130!())
    ))]
    Throughput(ThroughputArgs),
    /// Compare two cohorts (two inputs, or one split by a label): contract first, then metrics.
    ///
    /// The cohorts are two inputs A and B, or one input set split by a label column's
    /// values. The workload contract is checked first; then p50/p95/p99 of every named
    /// metric side by side with the shift B − A (bootstrap interval, Mann–Whitney test),
    /// and the class mix.
    #[command(after_help = after_help!(
        "  tracediag compare before.parquet after.parquet\n\
         \x20 tracediag compare 'logs/*.parquet' --split channel=ch-east,ch-west\n\
         \x20 tracediag compare a.csv b.csv --strict --format markdown\n",
        concat!(
            "  1    --strict: the cohorts differ on the workload contract\n",
            exit_2!(),
            exit_130!()
        )
    ))]
    Compare(CompareArgs),
    /// Explain one request (timeline waterfall, rule evidence against the thresholds, its
    /// cohort's percentiles), or list the worst requests of a class.
    #[command(after_help = after_help!(
        "  tracediag explain logs.parquet --request-id req-42\n\
         \x20 tracediag explain logs.parquet --class action_text_gap --limit 3\n\
         \x20 tracediag explain logs.parquet --request-id req-42 --format markdown\n",
        concat!(exit_2!(), exit_130!())
    ))]
    Explain(ExplainArgs),
    /// Write the weekly latency report: one self-contained HTML file with inline SVG charts
    /// (--out report.html) or Markdown for a wiki (--out report.md).
    #[command(after_help = after_help!(
        "  tracediag report logs.parquet --out report.html\n\
         \x20 tracediag report 'logs/*.parquet' --out weekly.md --period day\n",
        concat!(exit_2!(), exit_130!())
    ))]
    Report(ReportArgs),
    /// Classify the events of recorded SSE streams; a timed capture becomes a gateway
    /// row (t3..t6, usage) for `analyze`.
    ///
    /// Reads response bodies of OpenAI Chat Completions, legacy Completions and Responses,
    /// Anthropic Messages and Gemini alt=sse (the API is told from the events). Without receive
    /// times: per stream, the API, the records of each kind (envelope, heartbeat,
    /// effective output, visible text, error), where output and text begin, the usage and
    /// the outcome. A capture whose lines begin with their receive time (`curl -sN … | ts
    /// '%.s'`) and which holds a `: sent <unix seconds>` line gives one JSON line per
    /// stream in the gateway schema instead, counted from the send time (t0).
    #[command(after_help = after_help!(
        "  tracediag sse body.sse --format json\n\
         \x20 tracediag sse capture.sse | tracediag analyze -\n\
         \x20 tracediag sse a.sse b.sse --out rows.jsonl\n",
        concat!(exit_2!(), exit_130!())
    ))]
    Sse(SseArgs),
    /// List the canonical input fields, their origins and accepted column names.
    #[command(after_help = after_help!(
        "  tracediag fields\n\
         \x20 tracediag fields --catalogue azure\n",
        "  2    bad arguments\n"
    ))]
    Fields {
        /// Which catalogue: gateway request logs or Azure Monitor windows.
        #[arg(long, value_enum, default_value = "gateway")]
        catalogue: CatalogueArg,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    #[command(after_help = after_help!(
        "  tracediag completions bash > /etc/bash_completion.d/tracediag\n\
         \x20 tracediag completions zsh > ~/.zfunc/_tracediag\n\
         \x20 tracediag completions fish > ~/.config/fish/completions/tracediag.fish\n",
        "  2    bad arguments\n"
    ))]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff): tracediag's, or one command's (tracediag-analyze, …).
    #[command(after_help = after_help!(
        "  tracediag man > ~/.local/share/man/man1/tracediag.1\n\
         \x20 tracediag man analyze > ~/.local/share/man/man1/tracediag-analyze.1\n",
        "  2    bad arguments, or no such command\n"
    ))]
    Man {
        /// The command whose page to print; tracediag's own page (listing them) when absent.
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
}

#[derive(Debug, Args)]
struct SseArgs {
    /// Recorded SSE bodies or timed captures, one stream per file (all timed or none).
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<PathBuf>,
    /// Untimed bodies: the summary's format on stdout (timed captures give JSON lines).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Timed captures: write the gateway rows here (.jsonl, .csv or .parquet) instead of
    /// stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

/// The formats of the postmortem commands (`compare`, `explain`): Markdown to paste into a
/// postmortem document beside the terminal table and JSON.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum PostmortemFormat {
    Table,
    Json,
    Markdown,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CatalogueArg {
    Gateway,
    Azure,
}

/// `--definitions`: whose definitions the peer figures follow.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum DefinitionsArg {
    /// NVIDIA AIPerf (profile_export.jsonl, its per-request CSV).
    Aiperf,
    /// vLLM benchmark_serving.py / vllm bench serve (--save-result JSON).
    Vllm,
    /// Ray LLMPerf (individual responses).
    Llmperf,
}

impl DefinitionsArg {
    fn definitions(self) -> Definitions {
        match self {
            DefinitionsArg::Aiperf => Definitions::Aiperf,
            DefinitionsArg::Vllm => Definitions::Vllm,
            DefinitionsArg::Llmperf => Definitions::Llmperf,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum InFormat {
    Parquet,
    Csv,
    Jsonl,
    Json,
    /// new-api / one-api `logs` rows (API JSON, JSON lines, CSV, Parquet).
    #[value(name = "new-api", alias = "one-api")]
    NewApi,
    /// Higress ai-statistics access logs (`ai_log`).
    Higress,
    /// LiteLLM spend-log rows (JSON or CSV).
    Litellm,
    /// OpenTelemetry OTLP JSON span exports (one row per GenAI span).
    #[value(alias = "otel")]
    Otlp,
    /// AIPerf `profile_export.jsonl` records.
    Aiperf,
    /// AIPerf per-request figures as CSV.
    AiperfCsv,
    /// vLLM `benchmark_serving.py --save-result` JSON (per-request arrays).
    Vllm,
    /// LLMPerf `*_individual_responses.json`.
    Llmperf,
    /// GenAI-Perf's per-request input (perf_analyzer's `profile_export.json`).
    GenaiPerf,
}

#[derive(Debug, Args)]
struct RuleArgs {
    /// Rule table for every input: a file, or the name of a shipped table (gateway, relay,
    /// gateway_coarse, upstream, engine, client). Without it each input gets the shipped
    /// table of the clock its log has.
    #[arg(long, value_name = "FILE|NAME")]
    rules: Option<PathBuf>,
    /// Override a rule parameter, e.g. --set header_slow_ms=3000 (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

/// How inputs are read, on every command that reads logs.
#[derive(Debug, Args, Clone, Default)]
struct ReadArgs {
    /// Read every input as this format instead of detecting it.
    #[arg(long, value_enum)]
    input_format: Option<InFormat>,
    #[command(flatten)]
    window: WindowArgs,
    /// A row that cannot be read whole (broken JSON line, ragged or non-UTF-8 CSV record,
    /// duplicated key, `other` that is not JSON) or holds a value not of its field's type:
    /// keep it with the unreadable parts null (flagged), skip it (counted), or stop with an
    /// error naming file, line and column (exit 2).
    #[arg(long, value_enum, default_value = "keep", value_name = "POLICY")]
    on_bad_row: OnBadRow,
    #[command(flatten)]
    ids: IdArgs,
    #[command(flatten)]
    columns: ColumnArgs,
}

/// The user's own column names, on every command that reads logs and on `rules --emit sql`.
#[derive(Debug, Args, Clone, Default)]
struct ColumnArgs {
    /// Read a catalogue field from a column named your own way: FIELD=COLUMN[:UNIT], e.g.
    /// --map first_sse_event_ms=ttft_ms --map total_handler_ms=latency_s:s (repeatable).
    /// COLUMN is a name, a dotted path into a struct (other.timing.ttft) or a path inside a
    /// JSON-string column (other.ttft); UNIT (s, ms, us or ns) converts a time to ms, or
    /// reads a timestamp as Unix time in that unit. Replaces the field's automatic mapping.
    #[arg(long = "map", value_name = "FIELD=COLUMN[:UNIT]")]
    map: Vec<String>,
    /// The same mapping from a TOML file: a [map] table of `field = "column"` or
    /// `field = { column = "…", unit = "s" }`. --map replaces its entry for a field.
    #[arg(long, value_name = "FILE.toml")]
    schema: Option<PathBuf>,
}

impl ColumnArgs {
    fn column_map(&self) -> Result<source::columns::ColumnMap> {
        source::columns::ColumnMap::from_args(&self.map, self.schema.as_deref())
    }
}

/// Reading back a query's result, on the commands that classify (`throughput` reads only
/// the canonical columns, which a result holds as well).
#[derive(Debug, Args, Clone, Default)]
struct SqlResultArgs {
    /// The inputs are what `rules --emit sql` wrote on an engine (Parquet or CSV): take
    /// each request's metrics, class and classes from them instead of computing them,
    /// after checking they are those of the rule table (exit 2 otherwise).
    #[arg(long)]
    from_sql_result: bool,
}

impl SqlResultArgs {
    fn options(&self, opts: Options) -> Options {
        Options {
            from_sql_result: self.from_sql_result,
            ..opts
        }
    }
}

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
enum OnBadRow {
    Error,
    Skip,
    #[default]
    Keep,
}

impl ReadArgs {
    /// The gateway-log read options for these inputs (window checked).
    fn options(&self, inputs: Vec<PathBuf>, by: Vec<String>) -> Result<Options> {
        let (since, until) = self.window.bounds()?;
        Ok(Options {
            inputs,
            input_format: input_format(self.input_format),
            by,
            since,
            until,
            on_bad_row: match self.on_bad_row {
                OnBadRow::Error => BadRowPolicy::Error,
                OnBadRow::Skip => BadRowPolicy::Skip,
                OnBadRow::Keep => BadRowPolicy::Keep,
            },
            ids: Some(self.ids.policy()?),
            from_sql_result: false,
            definitions: None,
            columns: self.columns.column_map()?,
        })
    }
}

/// An incident window, on every command that reads logs.
#[derive(Debug, Args, Clone, Default)]
struct WindowArgs {
    /// Keep what happened at or after this UTC time (2026-11-02T10:00:00Z, or a date).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Keep what happened before this UTC time.
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
}

impl WindowArgs {
    fn bounds(&self) -> Result<(Option<i64>, Option<i64>)> {
        let since = self
            .since
            .as_deref()
            .map(analyze::parse_instant)
            .transpose()?;
        let until = self
            .until
            .as_deref()
            .map(analyze::parse_instant)
            .transpose()?;
        if let (Some(s), Some(u)) = (since, until) {
            if s >= u {
                return Err(Error::Usage("--since must be earlier than --until".into()));
            }
        }
        Ok((since, until))
    }
}

/// Client identifiers (user, token name, client address), on every command that reads
/// gateway logs: written only as salted hashes unless --keep-ids.
#[derive(Args, Clone, Default)]
struct IdArgs {
    /// Hash client identifiers with this secret: the same salt gives the same hashes in
    /// every run, so outputs can be joined. Also read from TRACEDIAG_SALT. Without either,
    /// a random salt per run (reported by its fingerprint, never itself).
    #[arg(long, value_name = "SECRET", conflicts_with = "keep_ids")]
    salt: Option<String>,
    /// Write client identifiers as logged instead of as salted hashes (TRACEDIAG_SALT is
    /// then not used).
    #[arg(long)]
    keep_ids: bool,
}

/// The environment variable that stands in for `--salt`.
const SALT_ENV: &str = "TRACEDIAG_SALT";

/// Never shows the salt.
impl std::fmt::Debug for IdArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdArgs")
            .field("salt", &self.salt.as_ref().map(|_| "<hidden>"))
            .field("keep_ids", &self.keep_ids)
            .finish()
    }
}

impl IdArgs {
    fn policy(&self) -> Result<IdPolicy> {
        // clap refuses --salt with --keep-ids; a salt from the environment is a standing
        // default, so the explicit --keep-ids wins over it.
        if self.keep_ids {
            return Ok(IdPolicy::Keep);
        }
        if let Some(secret) = &self.salt {
            return Salt::given(secret).map(IdPolicy::Salted);
        }
        match std::env::var_os(SALT_ENV) {
            // Empty counts as unset, as clap counted an empty variable.
            Some(v) if !v.is_empty() => match v.to_str() {
                Some(secret) => Salt::given(secret).map(IdPolicy::Salted),
                None => Err(Error::Usage(format!(
                    "{SALT_ENV} is not valid UTF-8: expected a text secret"
                ))),
            },
            _ => Salt::random().map(IdPolicy::Salted),
        }
    }
}

#[derive(Debug, Args)]
struct AnalyzeArgs {
    /// Log files, directories (every log file below; key=value folders become columns) or
    /// glob patterns (Parquet, CSV, JSON lines, JSON arrays).
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<String>,
    /// Also summarise per group of these label columns (or partition keys of a
    /// key=value folder tree), e.g. --by model,channel.
    #[arg(long, value_delimiter = ',', value_name = "COLUMNS")]
    by: Vec<String>,
    /// Write one row per request (.parquet, .csv or .jsonl).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
    /// Exit 1 when any data-quality check flags a row or a bad row was skipped (for
    /// pipelines); the report is still printed and written. A --by column no input has
    /// is then an error (exit 2) instead of a warning.
    #[arg(long)]
    strict: bool,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Also compute a benchmark tool's own figures from its per-request file, by its
    /// definitions (first-token rule, ITL, std, which records count), beside tracediag's.
    #[arg(long, value_enum, value_name = "TOOL")]
    definitions: Option<DefinitionsArg>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    sql: SqlResultArgs,
    /// Azure Monitor exports: take each deployment's baseline from this export (the median
    /// of its windows) instead of the deployment's own earlier windows. Files or globs;
    /// repeatable.
    #[arg(long, value_name = "FILE")]
    baseline: Vec<String>,
    /// Azure Monitor exports: how many earlier windows the default baseline spans.
    #[arg(long, value_name = "N", default_value_t = 60)]
    baseline_windows: usize,
    #[command(flatten)]
    rule_args: RuleArgs,
}

#[derive(Debug, Args)]
struct ThroughputArgs {
    /// Azure Monitor metric exports, or gateway request logs (files or globs).
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<String>,
    /// Gateway logs: group by these label columns (default: model).
    #[arg(long, value_delimiter = ',', value_name = "COLUMNS")]
    by: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    #[command(flatten)]
    read: ReadArgs,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// Two inputs A and B (each a file or a quoted glob); with --split, the log files or
    /// globs to split.
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<String>,
    /// Split one input set by a label column's values instead: COLUMN=A,B, e.g.
    /// --split channel=ch-east,ch-west.
    #[arg(long, value_name = "COLUMN=A,B")]
    split: Option<String>,
    /// Output format (markdown: to paste into a postmortem).
    #[arg(long, value_enum, default_value = "table")]
    format: PostmortemFormat,
    /// Exit with code 1 when the cohorts differ on the workload contract (the comparison
    /// is still printed).
    #[arg(long)]
    strict: bool,
    /// Seed of the bootstrap resampling (the same seed gives the same intervals).
    #[arg(long, value_name = "N", default_value_t = tracediag::compare::DEFAULT_SEED)]
    seed: u64,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    sql: SqlResultArgs,
    #[command(flatten)]
    rule_args: RuleArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["request_id", "class"])))]
struct ExplainArgs {
    /// Log files, directories (every log file below; key=value folders become columns) or
    /// glob patterns (Parquet, CSV, JSON lines, JSON arrays).
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<String>,
    /// Explain this request: every row with this id, in input order.
    #[arg(long, value_name = "ID")]
    request_id: Option<String>,
    /// List the worst requests of this class, by its rule's look_at figure.
    #[arg(long, value_name = "CLASS")]
    class: Option<String>,
    /// With --class: how many requests to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    limit: usize,
    /// With --request-id, on a log of more rows than this: the request's cohort is looked
    /// for among this many rows of its file around it, not in the whole log.
    #[arg(long, value_name = "N", default_value_t = source::COHORT_ROWS,
          value_parser = clap::value_parser!(u64).range(1..))]
    cohort_rows: u64,
    /// Output format (markdown: to paste into a postmortem).
    #[arg(long, value_enum, default_value = "table")]
    format: PostmortemFormat,
    #[command(flatten)]
    rule_args: RuleArgs,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    sql: SqlResultArgs,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Log files, directories (every log file below; key=value folders become columns) or
    /// glob patterns (Parquet, CSV, JSON lines, JSON arrays).
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<String>,
    /// The report file: .html (self-contained, inline SVG charts) or .md (tables).
    #[arg(long, required = true, value_name = "FILE")]
    out: PathBuf,
    /// Replace --out if it exists.
    #[arg(long)]
    force: bool,
    /// Period of the trend and the charts over time, in UTC (default: from the span — hour
    /// under 2 days, day under 8 weeks, week beyond).
    #[arg(long, value_parser = ["week", "day", "hour"])]
    period: Option<String>,
    /// The report's title (its heading and, in HTML, the page title).
    #[arg(long, value_name = "TEXT", default_value = tracediag::weekly::DEFAULT_TITLE)]
    title: String,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    sql: SqlResultArgs,
    #[command(flatten)]
    rule_args: RuleArgs,
}

#[derive(Debug, Args)]
struct RulesArgs {
    #[command(subcommand)]
    action: Option<RulesAction>,
    #[command(flatten)]
    rule_args: RuleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Print the table in another language instead of the summary: `toml` is the rule
    /// file itself, byte for byte (the shipped rules/gateway.toml, or the --rules file once
    /// it checks; --set does not apply: edit the copy's values); `sql` is one query that
    /// computes the metrics, class, classes and data-quality flags per request (with
    /// --dialect; --set applies).
    #[arg(long, value_enum, value_name = "LANGUAGE", conflicts_with = "format")]
    emit: Option<Emit>,
    /// The SQL engine of --emit sql.
    #[arg(long, value_enum, requires = "emit")]
    dialect: Option<SqlDialect>,
    /// The table --emit sql reads: a name (`logs.requests`) or any table expression
    /// (`read_parquet('s3://bucket/logs/*.parquet')` in DuckDB).
    #[arg(long, value_name = "NAME", requires = "emit")]
    table: Option<String>,
    /// With --emit sql: the analyze summary (per class count, share, failures and
    /// p50/p95/p99 of end-to-end and every named metric) instead of the per-request rows.
    #[arg(long, requires = "emit")]
    summary: bool,
    /// With --emit sql: the table's own column names, read as the catalogue fields they
    /// hold.
    #[command(flatten)]
    columns: ColumnArgs,
    /// With --emit sql: a sample of the table (one Parquet part, a few JSON lines); the
    /// query maps the table's columns as `analyze` maps this file's (aliases, nested and
    /// JSON-string timing, Unix-time stamps, a new-api log), with NULL for the fields it
    /// lacks, and without --rules uses the table `analyze` would pick for it.
    #[arg(long, value_name = "FILE", requires = "emit")]
    like: Option<PathBuf>,
}

/// What `rules --emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// The rule file's TOML source.
    Toml,
    /// The rule table as one SQL query (needs --dialect).
    Sql,
}

/// The engines `rules --emit sql` writes for.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum SqlDialect {
    Duckdb,
    Spark,
    Trino,
}

#[derive(Debug, Subcommand)]
enum RulesAction {
    /// Load and type-check rule files; exit 2 with a pointed error if one is bad.
    #[command(after_help = after_help!(
        "  tracediag rules check my_rules.toml\n\
         \x20 tracediag rules check rules/*.toml\n",
        "  2    a file does not load or check (file:line:column), or bad arguments\n"
    ))]
    Check {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

/// The tables a command that reads logs classifies them by: every shipped table (each
/// input gets the one of its clock), or the one `--rules` names.
fn load_rules(args: &RuleArgs) -> Result<RuleSet> {
    load_rules_or(args, tables::shipped)
}

/// `--rules`: a file, or a shipped table's name (a bare word that names no file).
fn named_or_file(p: &Path) -> Result<RuleSet> {
    let text = p.to_string_lossy();
    let bare = !p.exists() && !text.contains(['/', '.', '\\']);
    if bare {
        tables::shipped_table(&text)
    } else {
        RuleSet::load(p)
    }
}

/// The user's rule file or named table, or the given default; then the `--set` overrides.
fn load_rules_or(args: &RuleArgs, default: fn() -> Result<RuleSet>) -> Result<RuleSet> {
    let mut rules = match &args.rules {
        Some(p) => named_or_file(p)?,
        None => default()?,
    };
    for s in &args.set {
        let (name, value) = s
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--set {s}: expected NAME=VALUE")))?;
        let v: f64 = value
            .trim()
            .parse()
            .map_err(|_| Error::Usage(format!("--set {s}: `{value}` is not a number")))?;
        rules.set_param(name.trim(), v)?;
    }
    Ok(rules)
}

/// An interrupted run leaves no partial output: outputs are renamed into place only when
/// complete, and the temporary file of a write in progress is removed here. The exit code
/// is the shell's for the signal, 128 + its number: 130 for Ctrl-C, 143 for SIGTERM.
#[cfg(unix)]
fn on_interrupt() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            output::remove_partial();
            source::spool::remove_all();
            std::process::exit(128 + signal);
        }
    });
}

#[cfg(not(unix))]
fn on_interrupt() {
    let _ = ctrlc::set_handler(|| {
        output::remove_partial();
        source::spool::remove_all();
        std::process::exit(130);
    });
}

/// `tracediag completions SHELL`: clap_complete's script from the definitions above.
fn completions(shell: clap_complete::Shell) -> Result<()> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "tracediag", &mut out);
    emit(&String::from_utf8_lossy(&out))
}

/// `tracediag man [COMMAND]`: clap_mangen's page of tracediag (its commands listed), or
/// of one command as `tracediag-COMMAND` (its options and examples).
fn man_page(command: Option<&str>) -> Result<()> {
    use clap::CommandFactory;
    let top = Cli::command();
    let page = match command {
        None => top,
        Some(name) => {
            let names = || {
                top.get_subcommands()
                    .map(|c| c.get_name())
                    .filter(|n| *n != "help")
            };
            let Some(sub) = top.find_subcommand(name).filter(|_| name != "help") else {
                let mut msg = format!("man {name}: no such command");
                if let Some(n) = tracediag::ruleset::types::nearest(name, names()) {
                    msg.push_str(&format!("; did you mean `{n}`?"));
                }
                msg.push_str(&format!(
                    " (the commands: {})",
                    names().collect::<Vec<_>>().join(", ")
                ));
                return Err(Error::Usage(msg));
            };
            let full = format!("tracediag-{name}");
            sub.clone()
                .name(full.clone())
                .bin_name(full)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(|e| Error::Usage(format!("cannot write the manual page: {e}")))?;
    emit(&String::from_utf8_lossy(&out))
}

/// The width terminal text is laid out for: `COLUMNS` when set to a number (how a test or a
/// script asks for a width), else the terminal's when stdout is one; otherwise the fixed
/// layout, so a file or a pipe gets the same text wherever it runs.
fn width() -> report::Width {
    match std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<u16>().ok())
    {
        Some(n) if n > 0 => report::Width::fit(n),
        _ => report::Width::of_stdout(),
    }
}

fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error worth reporting.
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Usage(format!("cannot write to stdout: {e}"))),
    }
}

/// Print a run's notes, warnings and bad-row list on stderr (stdout holds the results):
/// each heading after `tracediag: `, its detail lines indented under it.
fn diagnose(diagnostics: &[report::diagnostics::Diagnostic]) {
    for d in diagnostics {
        say!("tracediag: {}", d.heading);
        for l in &d.detail {
            say!("{l}");
        }
    }
}

/// Write `--out` and say so on stderr (stdout holds the summary).
fn write_rows(
    mut df: polars::prelude::DataFrame,
    path: &Path,
    fmt: output::OutFormat,
) -> Result<()> {
    output::write(&mut df, path, fmt)?;
    say!(
        "tracediag: wrote {} rows to {}",
        df.height(),
        path.display()
    );
    Ok(())
}

/// Returns the exit code: 0, or 1 with `--strict` when data-quality findings exist.
fn analyze_cmd(a: AnalyzeArgs) -> Result<i32> {
    let inputs = source::expand(&a.inputs)?;
    let metrics: Vec<bool> = inputs
        .iter()
        .map(|p| a.read.input_format.is_none() && monitor::is_metrics_export(p))
        .collect();
    if metrics.iter().any(|m| *m) {
        if !metrics.iter().all(|m| *m) {
            return Err(Error::Usage(
                "the inputs mix Azure Monitor metric exports and gateway request logs: analyze them in separate runs".into(),
            ));
        }
        return monitor_cmd(a, inputs).map(|()| 0);
    }
    if !a.baseline.is_empty() {
        return Err(Error::Usage(
            "--baseline applies to Azure Monitor metric exports only".into(),
        ));
    }
    let rules = load_rules(&a.rule_args)?;
    let out_format = match &a.out {
        Some(p) => Some(output::check_target(p, &inputs, a.force)?),
        None => None,
    };
    let by =
        a.by.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    let opts = Options {
        definitions: a.definitions.map(DefinitionsArg::definitions),
        ..a.sql.options(a.read.options(inputs, by)?)
    };
    let progress = Progress::start("analysing", &opts.inputs);
    let analysis = analyze::run(&rules, &opts)?;
    drop(progress);
    // Under --strict a grouping by a column no input has is an error, not one "(none)" group.
    if let Some(c) = analysis
        .summary
        .groups
        .iter()
        .flat_map(|g| g.absent.first())
        .next()
        .filter(|_| a.strict)
    {
        return Err(Error::Usage(format!(
            "{}: --strict refuses to group by it",
            analyze::absent_column_sentence(&format!("--by {c}"), c)
        )));
    }
    if let (Some(path), Some(fmt)) = (&a.out, out_format) {
        output::sink(&analysis.plan, &analysis.plan.rules, path, fmt)?;
        say!(
            "tracediag: wrote {} rows to {}",
            analysis.summary.rows,
            path.display()
        );
    }
    let text = match a.format {
        Format::Table => report::Terminal(width()).render(&analysis.summary),
        Format::Json => report::json::render(&analysis.summary),
    };
    emit(&text)?;
    diagnose(&report::diagnostics::summary(&analysis.summary));
    let mut flagged: Vec<String> = analysis
        .summary
        .quality
        .iter()
        .filter(|q| q.count > 0)
        .map(|q| format!("{} {}", q.check, q.count))
        .collect();
    if let Some(b) = analysis.summary.bad_rows.as_ref().filter(|b| b.skipped > 0) {
        flagged.push(format!("skipped bad rows {}", b.skipped));
    }
    if a.strict && !flagged.is_empty() {
        say!(
            "tracediag: --strict: data-quality findings ({}): exit code 1",
            flagged.join(", ")
        );
        return Ok(1);
    }
    Ok(0)
}

fn monitor_cmd(a: AnalyzeArgs, inputs: Vec<PathBuf>) -> Result<()> {
    if a.definitions.is_some() {
        return Err(Error::Usage(
            "--definitions reads a benchmark tool's per-request export; these are Azure Monitor metric exports".into(),
        ));
    }
    if a.sql.from_sql_result {
        return Err(Error::Usage(
            "--from-sql-result reads what `rules --emit sql` wrote over gateway request logs; these are Azure Monitor metric exports".into(),
        ));
    }
    if !a.by.is_empty() {
        return Err(Error::Usage(
            "--by applies to gateway request logs; an Azure Monitor summary is per deployment already".into(),
        ));
    }
    if !a.read.columns.map.is_empty() || a.read.columns.schema.is_some() {
        return Err(Error::Usage(
            "--map and --schema name a request log's columns; these are Azure Monitor metric exports".into(),
        ));
    }
    let rules = load_rules_or(&a.rule_args, RuleSet::azure)?;
    let (since, until) = a.read.window.bounds()?;
    let baseline = if a.baseline.is_empty() {
        vec![]
    } else {
        source::expand(&a.baseline)?
    };
    let mut all = inputs.clone();
    all.extend(baseline.iter().cloned());
    let out_format = match &a.out {
        Some(p) => Some(output::check_target(p, &all, a.force)?),
        None => None,
    };
    let opts = monitor::Options {
        inputs,
        baseline,
        baseline_windows: a.baseline_windows.max(1),
        since,
        until,
        ..Default::default()
    };
    let progress = Progress::start("diagnosing", &opts.inputs);
    let analysis = monitor::run(&rules, &opts)?;
    drop(progress);
    if let (Some(path), Some(fmt)) = (&a.out, out_format) {
        write_rows(monitor::project(&analysis.frame, &rules, fmt)?, path, fmt)?;
    }
    emit(&match a.format {
        Format::Table => report::monitor::terminal(&analysis.summary, width()),
        Format::Json => report::json::render(&analysis.summary),
    })?;
    diagnose(&report::diagnostics::monitor(&analysis.summary));
    Ok(())
}

fn input_format(f: Option<InFormat>) -> Option<InputFormat> {
    f.map(|f| match f {
        InFormat::Parquet => InputFormat::Parquet,
        InFormat::Csv => InputFormat::Csv,
        InFormat::Jsonl => InputFormat::JsonLines,
        InFormat::Json => InputFormat::JsonArray,
        InFormat::NewApi => InputFormat::NewApi,
        InFormat::Higress => InputFormat::Higress,
        InFormat::Litellm => InputFormat::LiteLlm,
        InFormat::Otlp => InputFormat::Otlp,
        InFormat::Aiperf => InputFormat::Aiperf,
        InFormat::AiperfCsv => InputFormat::AiperfCsv,
        InFormat::Vllm => InputFormat::Vllm,
        InFormat::Llmperf => InputFormat::Llmperf,
        InFormat::GenaiPerf => InputFormat::GenaiPerf,
    })
}

fn throughput_cmd(a: ThroughputArgs) -> Result<()> {
    let inputs = source::expand(&a.inputs)?;
    let by: Vec<String> =
        a.by.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    let opts = a.read.options(inputs, by)?;
    let progress = Progress::start("counting", &opts.inputs);
    let t = throughput::run(&opts)?;
    drop(progress);
    emit(&match a.format {
        Format::Table => report::throughput::terminal(&t, width()),
        Format::Json => report::json::render(&t),
    })?;
    diagnose(&report::diagnostics::throughput(&t));
    Ok(())
}

/// `compare`: 0 done, 1 with `--strict` when the cohorts differ on the workload contract.
fn compare_cmd(a: CompareArgs) -> Result<i32> {
    use tracediag::compare::{self, CohortInput, Cohorts};
    let cohorts = match &a.split {
        Some(s) => {
            let (column, values) = compare::parse_split(s)?;
            Cohorts::Split {
                inputs: source::expand(&a.inputs)?,
                column,
                values,
            }
        }
        None => match a.inputs.as_slice() {
            [x, y] => Cohorts::Pair(
                CohortInput {
                    name: x.clone(),
                    inputs: source::expand(std::slice::from_ref(x))?,
                },
                CohortInput {
                    name: y.clone(),
                    inputs: source::expand(std::slice::from_ref(y))?,
                },
            ),
            other => {
                return Err(Error::Usage(format!(
                    "compare takes two inputs A and B (each a file or a quoted glob), or one input set with --split COLUMN=A,B; got {}",
                    report::plural(other.len() as u64, "input")
                )))
            }
        },
    };
    let paths: Vec<&PathBuf> = match &cohorts {
        Cohorts::Pair(x, y) => x.inputs.iter().chain(&y.inputs).collect(),
        Cohorts::Split { inputs, .. } => inputs.iter().collect(),
    };
    if a.read.input_format.is_none() {
        if let Some(p) = paths.iter().find(|p| monitor::is_metrics_export(p)) {
            return Err(Error::Usage(format!(
                "{}: an Azure Monitor metric export; compare reads gateway request logs",
                p.display()
            )));
        }
    }
    let rules = load_rules(&a.rule_args)?;
    let read = a.sql.options(a.read.options(vec![], vec![])?);
    let all: Vec<PathBuf> = paths.iter().map(|p| (*p).clone()).collect();
    let progress = Progress::start("comparing", &all);
    let c = compare::run(
        &rules,
        &compare::Options {
            cohorts,
            read,
            seed: a.seed,
            resamples: compare::DEFAULT_RESAMPLES,
        },
    )?;
    drop(progress);
    emit(&match a.format {
        PostmortemFormat::Table => report::compare::terminal(&c, width()),
        PostmortemFormat::Json => report::json::render(&c),
        PostmortemFormat::Markdown => report::compare::markdown(&c),
    })?;
    diagnose(&report::diagnostics::compare(&c));
    let warnings = c.contract.warnings.len();
    Ok(if a.strict && warnings > 0 {
        say!(
            "tracediag: --strict: the cohorts differ on the workload contract ({})",
            report::plural(warnings as u64, "warning")
        );
        1
    } else {
        0
    })
}

fn explain_cmd(a: ExplainArgs) -> Result<()> {
    use tracediag::explain::{self, Target};
    let target = match (a.request_id, a.class) {
        (Some(id), None) => Target::Request {
            id,
            cohort_rows: a.cohort_rows,
        },
        (None, Some(class)) => Target::Class {
            class,
            limit: a.limit,
        },
        _ => unreachable!("clap requires exactly one of --request-id and --class"),
    };
    let rules = load_rules(&a.rule_args)?;
    let opts = a
        .sql
        .options(a.read.options(source::expand(&a.inputs)?, vec![])?);
    let progress = Progress::start("reading", &opts.inputs);
    let e = explain::run(&rules, &opts, &target)?;
    drop(progress);
    emit(&match a.format {
        PostmortemFormat::Table => report::explain::terminal(&e, width()),
        PostmortemFormat::Json => report::json::render(&e),
        PostmortemFormat::Markdown => report::explain::markdown(&e),
    })?;
    diagnose(&report::diagnostics::explain(&e));
    Ok(())
}

fn rules_cmd(a: RulesArgs) -> Result<()> {
    if a.emit != Some(Emit::Sql) && (!a.columns.map.is_empty() || a.columns.schema.is_some()) {
        return Err(Error::Usage(
            "--map and --schema go with --emit sql (or with the commands that read logs)".into(),
        ));
    }
    if a.emit != Some(Emit::Sql) && a.like.is_some() {
        return Err(Error::Usage("--like goes with --emit sql".into()));
    }
    match a.action {
        Some(RulesAction::Check { .. }) if a.emit.is_some() => Err(Error::Usage(
            "--emit prints one table; `rules check` prints none: use one or the other".into(),
        )),
        Some(RulesAction::Check { files }) => {
            let mut text = String::new();
            for f in files {
                let r = RuleSet::load(&f)?;
                text.push_str(&format!(
                    "{}: ok — table `{}`, {} rules, {} metrics, {} parameters\n",
                    f.display(),
                    r.name,
                    r.rules.len(),
                    r.metrics.len(),
                    r.params.len()
                ));
            }
            emit(&text)
        }
        None if a.emit == Some(Emit::Toml) => {
            if !a.rule_args.set.is_empty() {
                return Err(Error::Usage(
                    "--set cannot be used with --emit toml: the file is printed as it is; edit the copy's values".into(),
                ));
            }
            if a.dialect.is_some() || a.table.is_some() || a.summary {
                return Err(Error::Usage(
                    "--dialect, --table and --summary go with --emit sql, not --emit toml".into(),
                ));
            }
            // The table is checked before it is printed: what is emitted always loads.
            let rules = load_rules_or(&a.rule_args, RuleSet::gateway)?;
            emit(&rules.text)
        }
        None if a.emit == Some(Emit::Sql) => {
            use tracediag::ruleset::sql::{self, Dialect};
            let dialect = match a.dialect {
                Some(SqlDialect::Duckdb) => Dialect::DuckDb,
                Some(SqlDialect::Spark) => Dialect::Spark,
                Some(SqlDialect::Trino) => Dialect::Trino,
                None => {
                    return Err(Error::Usage(
                        "--emit sql needs --dialect duckdb, spark or trino".into(),
                    ))
                }
            };
            let table = a.table.as_deref().unwrap_or(sql::DEFAULT_TABLE);
            let columns = a.columns.column_map()?;
            let (rules, source) = match &a.like {
                Some(file) => like_source(&a.rule_args, dialect, table, file, &columns)?,
                None => (
                    load_rules_or(&a.rule_args, RuleSet::gateway)?,
                    sql::Source::table(&sql::mapped_table(dialect, table, &columns)),
                ),
            };
            emit(&if a.summary {
                sql::summary_query_from(&rules, dialect, &source)?
            } else {
                sql::rows_query_from(&rules, dialect, &source)?
            })
        }
        None => {
            let rules = load_rules_or(&a.rule_args, RuleSet::gateway)?;
            emit(&match a.format {
                Format::Table => report::rules::render_rules(&rules, width()),
                Format::Json => report::rules::rules_json(&rules),
            })
        }
    }
}

/// `rules --emit sql --like FILE`: the sample read as `analyze` reads it, the rule table
/// (`--rules`, else the one `analyze` picks for the sample's clock) and the query's source
/// that maps the table's columns as the sample's are mapped.
fn like_source(
    rule_args: &RuleArgs,
    dialect: tracediag::ruleset::sql::Dialect,
    table: &str,
    file: &Path,
    columns: &source::columns::ColumnMap,
) -> Result<(RuleSet, tracediag::ruleset::sql::Source)> {
    let sample = source::like::sample(file, columns)?;
    let rules = match rule_args.rules {
        Some(_) => load_rules_or(rule_args, RuleSet::gateway)?,
        None => {
            let found = sample.mapping.found().map(|(n, _)| n.to_string()).collect();
            load_rules(rule_args)?.choose(&[found]).0
        }
    };
    let added = tracediag::ruleset::sql::added_columns(&rules);
    let source = tracediag::ruleset::like::source(dialect, table, &sample, &added)?;
    Ok((rules, source))
}

fn report_cmd(a: ReportArgs) -> Result<()> {
    use tracediag::weekly::{self, Period, ReportFormat};
    let inputs = source::expand(&a.inputs)?;
    if a.read.input_format.is_none() && inputs.iter().any(|p| monitor::is_metrics_export(p)) {
        return Err(Error::Usage(
            "report reads gateway request logs; Azure Monitor metric exports have `analyze` and `throughput`".into(),
        ));
    }
    let format = weekly::check_target(&a.out, &inputs, a.force)?;
    let rules = load_rules(&a.rule_args)?;
    let period = a.period.as_deref().map(|p| match p {
        "week" => Period::Week,
        "day" => Period::Day,
        _ => Period::Hour,
    });
    let opts = a.sql.options(a.read.options(inputs, vec![])?);
    let progress = Progress::start("reporting on", &opts.inputs);
    let (analysis, mut data) = weekly::run(&rules, &opts, period)?;
    data.title = a.title.trim().to_string();
    drop(progress);
    let text = match format {
        ReportFormat::Html => report::html::render(&analysis.summary, &data),
        ReportFormat::Markdown => report::markdown::render(&analysis.summary, &data),
    };
    weekly::write_text(&a.out, &text)?;
    diagnose(&report::diagnostics::summary(&analysis.summary));
    say!(
        "tracediag: wrote the report ({}, {} of one {}) to {}",
        report::plural(analysis.summary.rows, "request"),
        report::plural(data.periods.len() as u64, "period"),
        data.period.name(),
        a.out.display()
    );
    Ok(())
}

/// `sse`: the untimed summary on stdout, or the timed captures' gateway rows (stdout or
/// `--out`); each stream's notes on stderr.
fn sse_cmd(a: SseArgs) -> Result<()> {
    use tracediag::sse;
    let out_format = match &a.out {
        Some(p) => Some(output::check_target(p, &a.inputs, a.force)?),
        None => None,
    };
    let streams = a
        .inputs
        .iter()
        .map(|p| sse::read(p))
        .collect::<Result<Vec<_>>>()?;
    let timed = streams.iter().find(|s| s.timing.is_some());
    let untimed = streams.iter().find(|s| s.timing.is_none());
    if let (Some(t), Some(u)) = (timed, untimed) {
        return Err(Error::Usage(format!(
            "{} has receive times and {} has none: read timed captures and bodies in separate runs",
            t.file, u.file
        )));
    }
    for s in &streams {
        for n in &s.notes {
            say!("tracediag: note: {}: {n}", s.file);
        }
    }
    if timed.is_some() {
        if a.format.is_some() {
            return Err(Error::Usage(
                "--format applies to bodies without receive times; timed captures give gateway rows as JSON lines (or --out)".into(),
            ));
        }
        let df = sse::rows::frame(&streams)?;
        return match (&a.out, out_format) {
            (Some(path), Some(fmt)) => write_rows(df, path, fmt),
            _ => {
                let mut df = df;
                emit(&sse::rows::json_lines(&mut df)?)
            }
        };
    }
    if a.out.is_some() {
        return Err(Error::Usage(
            "--out writes the gateway rows of timed captures; these bodies have no receive times (see `tracediag sse --help`)".into(),
        ));
    }
    emit(&match a.format.unwrap_or(Format::Table) {
        Format::Table => sse::report::terminal(&streams, width()),
        Format::Json => sse::report::json(&streams),
    })
}

/// Groups polars' streaming group-by keeps in its table per thread (its default: 4,096).
/// The rows of a group that does not fit are held until the input ends, and `compare`'s
/// first pass groups each token count and inflight value by cohort and value, many
/// thousands of groups: on 100M requests `compare --split` peaked at 3.27 GB with the
/// default and 1.53 GB with 2^18 (2026-12-05; 3.16 GB with the default once its last pass
/// kept values without a group-by; `analyze`, whose percentiles use no group-by, and
/// `throughput` the same with either). The table is a few megabytes per thread and
/// group-by.
const HOT_TABLE_SIZE: &str = "262144";

/// Parquet row groups polars' reader fetches and decodes ahead of the queries reading
/// them (its default on this machine: 10), a million rows of every column the plan reads
/// each: `analyze` on 100M requests peaked at 3.05 GB of anonymous memory with the
/// default, 2.75 GB with 2 and 2.2 GB with 1, in about the same time. Not for `explain`,
/// whose lookup reads the id column alone and wants it read ahead: on 100M requests it
/// took 4.0 s with the default and 5.3 s with 1.
const ROW_GROUP_PREFETCH: &str = "1";

/// Columns polars' Parquet reader decodes per task: one (its default is about 16M values a
/// task, so the 17 columns of a row group of a million requests that `analyze` reads were
/// decoded by one task). With one column a task, both threads decode a row group, the
/// first rows reach the queries sooner and no thread waits for another's row group: 10M
/// `analyze` in 4.50-4.85 s against 4.89-5.12 s, four runs each in turns (2026-12-05).
/// Given as the values a task aims at, so one value means a column a task.
const DECODE_VALUES_PER_TASK: &str = "1";

/// The polars settings this tool chooses, each only where the user has not set it. polars
/// reads them when a query starts; they are set before any query runs, while no other
/// thread reads the environment.
fn polars_settings(command: &Command) {
    let mut settings = vec![
        ("POLARS_HOT_TABLE_SIZE", HOT_TABLE_SIZE),
        (
            "POLARS_PARQUET_DECODE_TARGET_VALUES_PER_THREAD",
            DECODE_VALUES_PER_TASK,
        ),
    ];
    if !matches!(command, Command::Explain(_)) {
        settings.push(("POLARS_ROW_GROUP_PREFETCH_SIZE", ROW_GROUP_PREFETCH));
    }
    for (name, value) in settings {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
}

/// Run the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    polars_settings(&cli.command);
    crate::progress::set_quiet(cli.quiet);
    // An interrupted run leaves no partial output: outputs are renamed into place only
    // when complete, and the temporary file of a write in progress is removed here.
    on_interrupt();
    let result = match cli.command {
        Command::Analyze(a) => match analyze_cmd(a) {
            Ok(0) => Ok(()),
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Rules(a) => rules_cmd(a),
        Command::Throughput(a) => throughput_cmd(a),
        Command::Compare(a) => match compare_cmd(a) {
            Ok(0) => Ok(()),
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Explain(a) => explain_cmd(a),
        Command::Report(a) => report_cmd(a),
        Command::Sse(a) => sse_cmd(a),
        Command::Completions { shell } => completions(shell),
        Command::Man { command } => man_page(command.as_deref()),
        Command::Fields { catalogue } => emit(&report::rules::fields_terminal(
            match catalogue {
                CatalogueArg::Gateway => Catalogue::Gateway,
                CatalogueArg::Azure => Catalogue::Azure,
            },
            width(),
        )),
    };
    match result {
        Ok(()) => 0,
        Err(Error::Rule(e)) => {
            say!("{e}");
            2
        }
        Err(e) => {
            say!("tracediag: error: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command and subcommand, with the words that call it.
    fn commands() -> Vec<(Vec<String>, clap::Command)> {
        fn walk(
            path: Vec<String>,
            cmd: &clap::Command,
            out: &mut Vec<(Vec<String>, clap::Command)>,
        ) {
            out.push((path.clone(), cmd.clone()));
            for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
                let mut p = path.clone();
                p.push(sub.get_name().to_string());
                walk(p, sub, out);
            }
        }
        let mut out = vec![];
        walk(vec![], &Cli::command(), &mut out);
        out
    }

    /// Split an example line as a shell would (single quotes only; `>` ends it).
    fn words(line: &str) -> Vec<String> {
        let line = line.split(" > ").next().unwrap_or(line);
        let mut out = vec![];
        let mut word = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => {
                    if !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
        out
    }

    #[test]
    fn every_help_has_examples_that_parse_and_the_exit_codes() {
        for (path, cmd) in commands() {
            let text = cmd
                .get_after_help()
                .unwrap_or_else(|| panic!("`{}` has no examples", path.join(" ")))
                .to_string();
            let (examples, codes) = text.split_once("\nExit codes:\n").unwrap();
            assert!(
                codes.starts_with("  0    done\n") && codes.contains("\n  2    "),
                "{text}"
            );
            let calls: Vec<&str> = examples.lines().skip(1).filter(|l| !l.is_empty()).collect();
            assert!((2..=3).contains(&calls.len()), "{text}");
            for call in calls {
                let argv = words(call.trim());
                assert_eq!(argv[0], "tracediag", "{call}");
                // Each subcommand's examples call that subcommand.
                assert!(argv[1..].starts_with(&path), "{call} under {path:?}");
                if let Err(e) = Cli::try_parse_from(&argv) {
                    panic!("example `{call}` does not parse: {e}");
                }
            }
            for line in text.lines() {
                assert!(line.chars().count() <= 80, "over 80 columns: {line}");
            }
        }
    }
}
