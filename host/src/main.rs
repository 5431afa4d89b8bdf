//! The `warden` binary: parses the command line and exits with the code
//! the command decided (see `warden::cli::Exit`).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = warden::cli::Cli::parse();
    warden::cli::run(cli).into()
}
