//! The process grant: off unless granted, layered field by field, every
//! value validated, `~` expanded when the policy loads.

use std::path::PathBuf;

use super::*;
use crate::capability::process::ConfinementMode;
use crate::policy::default_limits;
use crate::policy::process::{Expand, expand};

#[test]
fn processes_are_not_granted_unless_a_layer_says_so() {
    let p = policy("name = 'p'\n");
    let spec = p.grant_for("shell", "shell").process;
    assert!(!spec.enabled);
    assert_eq!(spec.limits, default_limits());
    assert_eq!(spec.confinement, ConfinementMode::Full);
    assert!(spec.toolchains.is_empty() && spec.env.is_empty());
}

#[test]
fn process_fields_layer_like_other_grants() {
    let p = policy(
        "name = 'p'\n\
         [grants.default.process]\nenabled = true\ncpu_seconds = 10\nenv = ['RUST_LOG']\n\
         [grants.plugin.shell.process]\nopen_files = 64\ntoolchains = ['/opt/venv']\n\
         [grants.tool.shell.process]\ncpu_seconds = 20\nfile_size_mib = 2\nconfinement = 'unbounded-processes'\n",
    );
    let shell = p.grant_for("shell", "shell").process;
    assert!(shell.enabled);
    assert_eq!(shell.limits.cpu_seconds, 20);
    assert_eq!(shell.limits.open_files, 64);
    assert_eq!(shell.limits.file_size, 2 << 20);
    assert_eq!(shell.limits.address_space, default_limits().address_space);
    assert_eq!(shell.env, ["RUST_LOG"]);
    assert_eq!(shell.toolchains[0].path, Some(PathBuf::from("/opt/venv")));
    assert_eq!(shell.confinement, ConfinementMode::UnboundedProcesses);
    let other = p.grant_for("other", "tool").process;
    assert!(other.enabled);
    assert_eq!(other.limits.cpu_seconds, 10);
    assert_eq!(other.limits.open_files, default_limits().open_files);
    assert!(other.toolchains.is_empty());
    assert_eq!(other.confinement, ConfinementMode::Full);
}

#[test]
fn a_tilde_is_expanded_when_the_policy_loads() {
    assert_eq!(
        expand("~/.cargo", Some("/home/u")).unwrap(),
        "/home/u/.cargo"
    );
    assert_eq!(
        expand("~/.cargo", Some("/home/u/")).unwrap(),
        "/home/u/.cargo"
    );
    assert_eq!(expand("~", Some("/home/u")).unwrap(), "/home/u");
    assert_eq!(expand("/opt/venv", None).unwrap(), "/opt/venv");
    assert_eq!(expand("~/.cargo", None), Err(Expand::NoHome));
    assert_eq!(expand("~/.cargo", Some("relative")), Err(Expand::NoHome));
    for (written, home, problem) in [
        (
            "~bob/.cargo",
            Some("/home/u"),
            "only `~` and `~/…` are expanded",
        ),
        ("venv", None, "must be an absolute path"),
        ("/", None, "whole filesystem"),
        ("~", Some("/"), "whole filesystem"),
        ("/opt/../etc", None, "written plainly"),
        ("/opt/venv/", None, "written plainly"),
    ] {
        let Err(Expand::Bad(e)) = expand(written, home) else {
            panic!("{written} is refused");
        };
        assert!(e.contains(problem), "{written}: {e}");
    }
    // Through the file, with the process's own $HOME.
    if let Ok(home) = std::env::var("HOME")
        && home.starts_with('/')
        && home.len() > 1
    {
        let p = policy("name = 'p'\n[grants.default.process]\ntoolchains = ['~/.rustup']\n");
        let dir = &p.grant_for("a", "b").process.toolchains[0];
        assert_eq!(dir.written, "~/.rustup");
        assert_eq!(
            dir.path,
            Some(PathBuf::from(format!(
                "{}/.rustup",
                home.trim_end_matches('/')
            )))
        );
    }
}

#[test]
fn bad_process_values_are_located() {
    let e = error("name = 'p'\n[grants.default.process]\ntoolchains = ['venv']\n");
    assert!(
        e.starts_with("test.toml:3:14: toolchain directory `venv` must be an absolute path"),
        "{e}"
    );
    let e = error("name = 'p'\n[grants.default.process]\nenv = ['A=B']\n");
    assert!(
        e.starts_with("test.toml:3:7: `A=B` in `env` is not a variable name"),
        "{e}"
    );
    let e = error("name = 'p'\n[grants.default.process]\ncpu_seconds = 0\n");
    assert!(e.starts_with("test.toml:3:15: must be at least 1"), "{e}");
    let e = error("name = 'p'\n[grants.default.process]\naddress_space_mib = 9999999999\n");
    assert!(
        e.starts_with("test.toml:3:21: must be between 1 and 1048576 MiB"),
        "{e}"
    );
    let e = error("name = 'p'\n[grants.default.process]\nconfinement = 'none'\n");
    assert!(
        e.starts_with(
            "test.toml:3:15: unknown variant `none`, expected `full` or `unbounded-processes`"
        ),
        "{e}"
    );
    let e = error("name = 'p'\n[grants.default.process]\nenable = true\n");
    assert!(
        e.starts_with("test.toml:3:1: unknown field `enable`"),
        "{e}"
    );
}
