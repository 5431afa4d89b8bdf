//! `warden completions SHELL` and `warden man`: shell completions and
//! man pages, generated from the clap definitions so they never drift.

use std::path::Path;

use clap::CommandFactory;

use super::{Cli, Exit, fail};

/// Print the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Exit {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "warden", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Exit::Success
}

/// Print the `warden(1)` man page, or write a page per command into `dir`.
pub fn man(dir: Option<&Path>) -> Exit {
    let command = Cli::command();
    if let Some(dir) = dir {
        return match clap_mangen::generate_to(command, dir) {
            Ok(()) => Exit::Success,
            Err(e) => {
                let msg = format!("cannot write man pages into {}: {e}", dir.display());
                fail(false, Exit::Failure, &msg)
            }
        };
    }
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(command).render(&mut page) {
        return fail(
            false,
            Exit::Failure,
            &format!("cannot render the man page: {e}"),
        );
    }
    out!("{}", String::from_utf8_lossy(&page));
    Exit::Success
}
