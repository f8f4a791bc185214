//! The `tracediag` binary: everything lives in the library and `cli`.

mod cli;
mod progress;

/// polars' allocator (Cargo.toml says why).
#[global_allocator]
static ALLOCATOR: polars_ooc::Allocator = polars_ooc::Allocator;

fn main() {
    std::process::exit(cli::main());
}
