//! The `tracediag` binary: everything lives in the library and `cli`.

mod cli;
mod progress;

/// mimalloc rather than the system allocator, which kept much of what polars freed:
/// analyze on a 10M-row log peaked at 3.5 GB with it, 2.7 GB with mimalloc.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::main());
}
