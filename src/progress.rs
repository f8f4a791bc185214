//! The progress indicator on stderr: a spinner naming what is being read, shown only when
//! the inputs are large enough to take more than a moment, only on a terminal (indicatif
//! draws nothing when stderr is redirected), and never with `--quiet`. The pipeline is one
//! polars plan collected at once, so there is no honest percentage to show.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs smaller than this finish before a spinner would be worth seeing.
const WORTH_SHOWING_BYTES: u64 = 16 * 1024 * 1024;

/// `--quiet`, set once by the command line before any command runs.
static QUIET: AtomicBool = AtomicBool::new(false);

pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// A spinner for `what` over `inputs`, or nothing; cleared when dropped.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn start(what: &str, inputs: &[PathBuf]) -> Progress {
        let quiet = QUIET.load(Ordering::Relaxed);
        let bytes: u64 = inputs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        if quiet || bytes < WORTH_SHOWING_BYTES {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
        );
        bar.set_message(format!(
            "{what} {} file{} ({:.0} MB)…",
            inputs.len(),
            if inputs.len() == 1 { "" } else { "s" },
            bytes as f64 / 1e6
        ));
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress(Some(bar))
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
