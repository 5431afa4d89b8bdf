use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = warden::cli::Cli::parse();
    warden::cli::run(cli).into()
}
