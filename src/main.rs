//! The `tracediag` binary: everything lives in the library and `cli`.

mod cli;
mod progress;

fn main() {
    std::process::exit(cli::main());
}
