//! The smaller edges of the command line: `--since` forms, data-directory
//! problems said once with their path, a file that is no component, a
//! misspelt config key, shell completions and the man page.

use std::process::Stdio;

use crate::support::*;

#[test]
fn since_takes_offsets_and_plain_dates() {
    catalog();
    let home = fresh_home();
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws().display().to_string();
    let read = [
        "tool",
        "call",
        "read_file",
        "-w",
        &ws,
        "--input",
        r#"{"path":"a.txt"}"#,
    ];
    let (code, _, err) = cli(home.path(), &read);
    assert_eq!(code, Some(0), "{err}");
    let shown = |since: &str| {
        let (code, out, err) = cli(home.path(), &["audit", "show", "--json", "--since", since]);
        assert_eq!(code, Some(0), "{since}: {err}");
        out.lines().count()
    };
    assert!(shown("2000-01-01") > 0);
    assert!(shown("2000-01-01T10:00:00+02:00") > 0);
    assert!(shown("2000-01-01T10:00:00Z") > 0);
    assert_eq!(shown("2999-01-01"), 0);
    assert_eq!(shown("2999-01-01T00:00:00-05:00"), 0);
    let (code, _, err) = cli(home.path(), &["audit", "show", "--since", "yesterday"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("RFC 3339") && err.contains("2026-11-22"),
        "{err}"
    );
}

#[test]
fn an_unreadable_plugins_directory_is_said_once_with_its_path() {
    catalog();
    let home = fresh_home();
    // A file where the directory should be: unreadable even for root.
    let plugins = home.path().join("plugins");
    std::fs::write(&plugins, "not a directory").unwrap();
    let (code, out, err) = cli(home.path(), &["tool", "list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("read_file"), "built-ins still listed: {out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&plugins.display().to_string()) && err.contains("warning"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_no_component_gets_one_line() {
    catalog();
    let home = fresh_home();
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.wasm");
    std::fs::write(&text, "(component)\nhello\n".repeat(50)).unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    for (file, reason) in [
        (&text, "not a WebAssembly file"),
        (&core, "a core WebAssembly module, not a component"),
    ] {
        let (code, _, err) = cli(home.path(), &["plugin", "install", file.to_str().unwrap()]);
        assert_ne!(code, Some(0));
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(reason), "{err}");
    }
}

#[test]
fn a_misspelt_config_key_is_named_and_no_value_is_quoted() {
    catalog();
    let home = fresh_home();
    std::fs::write(
        home.path().join("config.toml"),
        "[providers.openai]\nmodle = \"sk-SECRET-value\"\n",
    )
    .unwrap();
    let (code, _, err) = cli(home.path(), &["run", "--non-interactive", "hello"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("`modle`") && err.contains("config.toml:2"),
        "{err}"
    );
    assert!(!err.contains("SECRET"), "{err}");
}

#[test]
fn completions_and_man_pages_come_from_the_command_line_definition() {
    let home = fresh_home();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef warden"),
        ("fish", "complete -c warden"),
    ] {
        let (code, out, err) = cli(home.path(), &["completions", shell]);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains(marker), "{shell}: {out}");
        assert!(
            out.contains("sessions") && out.contains("workspace"),
            "{shell}"
        );
    }
    // The bash script parses.
    let (_, script, _) = cli(home.path(), &["completions", "bash"]);
    if let Ok(mut bash) = std::process::Command::new("bash")
        .arg("-n")
        .stdin(Stdio::piped())
        .spawn()
    {
        use std::io::Write;
        bash.stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        assert!(bash.wait().unwrap().success());
    }
    let (code, _, err) = cli(home.path(), &["completions", "tcsh"]);
    assert_eq!(code, Some(2), "{err}");

    let (code, page, err) = cli(home.path(), &["man"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        page.starts_with(".ie") || page.contains(".TH warden 1"),
        "{page}"
    );
    assert!(
        page.contains("completions") && page.contains("sandboxed WebAssembly"),
        "{page}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = cli(
        home.path(),
        &["man", "--out-dir", dir.path().to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{err}");
    for page in ["warden.1", "warden-tool.1", "warden-tool-call.1"] {
        assert!(dir.path().join(page).is_file(), "{page} missing");
    }
}
