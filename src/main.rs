//! The `tracediag` binary: everything lives in the library and `cli`.

mod cli;
mod progress;

/// mimalloc rather than the system allocator: it returns freed memory, so the peak
/// is what a query holds at once (README, Performance).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::main());
}
