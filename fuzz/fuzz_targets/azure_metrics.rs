//! Azure Monitor metrics adapters: the metrics-JSON parser (then the windowing of what it
//! reads) and the Log Analytics `AzureMetrics` rows parser, on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tracediag::source::{azure, azure_logs, azure_windows};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(export) = azure::parse_metrics(&text, Path::new("fuzz.json")) {
        let _ = azure_windows::windows(&export.values);
    }
    if let Ok(export) = azure_logs::parse_azure_metrics_rows(&text, Path::new("fuzz.json")) {
        let _ = azure_windows::windows(&export.values);
    }
});
