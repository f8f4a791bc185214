//! The `tracediag` binary: everything lives in the library and `cli`.

mod cli;
mod progress;

/// mimalloc rather than the system allocator, which kept much of what polars freed:
/// analyze on a 10M-row log peaked at 3.5 GB with it, 2.7 GB with mimalloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Groups polars' streaming group-by keeps in its table per thread (its default: 4,096).
/// The rows of a group that does not fit are held until the input ends, and a histogram
/// pass groups by class and bucket, thousands of groups per metric: with the default,
/// `analyze` on 100M requests held 11 GB by the end of its first pass, growing with the
/// rows; with 2^18 the pass stayed between 2.1 and 3.1 GB. The table is a few megabytes per
/// thread and group-by.
const HOT_TABLE_SIZE: &str = "262144";

fn main() {
    // Read by polars when each query starts; set before any thread does, and only where
    // the user has not set it.
    if std::env::var_os("POLARS_HOT_TABLE_SIZE").is_none() {
        std::env::set_var("POLARS_HOT_TABLE_SIZE", HOT_TABLE_SIZE);
    }
    std::process::exit(cli::main());
}
