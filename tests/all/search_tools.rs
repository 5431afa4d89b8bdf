//! The built-in `grep` through the full pipeline: ripgrep-style output,
//! context, filters, what the walk skips, and errors.

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::WriteMode;
use warden::protocol::ErrorKind;

use crate::support::*;

/// The text of a successful `grep` in `sb`.
#[track_caller]
fn grep(sb: &Sandbox, input: Value) -> String {
    let r = call("grep", input, &sb.ws(), WriteMode::ReadOnly);
    let out = ok(&r);
    assert_no_host_paths(&out.text, sb);
    out.text.clone()
}

/// The message of a `grep` in `sb` that failed with `kind`.
#[track_caller]
fn grep_err(sb: &Sandbox, input: Value, kind: ErrorKind) -> String {
    let r = call("grep", input, &sb.ws(), WriteMode::ReadOnly);
    let msg = err(&r, kind);
    assert_no_host_paths(&msg, sb);
    msg
}

/// A small project: sources, an ignored build dir, hidden and binary files.
fn project() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("src/lib.rs", "fn main() {}\n// TODO: x\n");
    sb.write("src/a.txt", "todo later\nTODO now\n");
    sb.write("src/util/mod.rs", "pub fn helper() {}\n");
    sb.write("target/gen.rs", "TODO generated\n");
    sb.write("debug.log", "TODO in a log\n");
    sb.write(".gitignore", "target/\n*.log\n");
    sb.write(".hidden/h.rs", "TODO hidden\n");
    sb.write(".env", "TODO=dotfile\n");
    sb.write("bin.dat", b"TODO\0binary");
    sb
}

#[test]
fn regex_matches_in_path_line_text_format() {
    let sb = project();
    let r = call(
        "grep",
        json!({"pattern": "TODO"}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    assert_eq!(
        ok(&r).text,
        "src/a.txt:2:TODO now\nsrc/lib.rs:2:// TODO: x\n2 matches in 2 files; skipped 1 binary file\n"
    );
    assert_eq!(
        ok(&r).structured,
        Some(json!({"matches": 2, "files": 2, "truncated": false}))
    );
    assert_eq!(
        grep(&sb, json!({"pattern": r"fn \w+\(\)"})),
        "src/lib.rs:1:fn main() {}\nsrc/util/mod.rs:1:pub fn helper() {}\n2 matches in 2 files; skipped 1 binary file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "^TODO", "path": "src"})),
        "src/a.txt:2:TODO now\n1 match in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": r"\{\}$", "path": "src"})),
        "src/lib.rs:1:fn main() {}\nsrc/util/mod.rs:1:pub fn helper() {}\n2 matches in 2 files\n"
    );
}

#[test]
fn context_lines_and_separators() {
    let sb = Sandbox::new();
    let body: String = (1..=10).map(|i| format!("l{i}\n")).collect();
    sb.write("f.txt", &body);
    sb.write("g.txt", "zero\nl5\n");
    assert_eq!(
        grep(&sb, json!({"pattern": "^l(3|5|9)$", "context": 1})),
        "f.txt-2-l2\nf.txt:3:l3\nf.txt-4-l4\nf.txt:5:l5\nf.txt-6-l6\n--\n\
         f.txt-8-l8\nf.txt:9:l9\nf.txt-10-l10\n--\ng.txt-1-zero\ng.txt:2:l5\n4 matches in 2 files\n"
    );
    assert_eq!(
        grep(
            &sb,
            json!({"pattern": "^l(3|9)$", "after": 2, "path": "f.txt"})
        ),
        "f.txt:3:l3\nf.txt-4-l4\nf.txt-5-l5\n--\nf.txt:9:l9\nf.txt-10-l10\n2 matches in 1 file\n"
    );
    assert_eq!(
        grep(
            &sb,
            json!({"pattern": "^l(3|9)$", "context": 5, "before": 1, "after": 0, "path": "f.txt"})
        ),
        "f.txt-2-l2\nf.txt:3:l3\n--\nf.txt-8-l8\nf.txt:9:l9\n2 matches in 1 file\n"
    );
}

#[test]
fn case_insensitive_and_fixed_strings() {
    let sb = Sandbox::new();
    sb.write(
        "a.txt",
        "Hello World\nhello there\na.b literal\naxb not literal\n",
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "hello"})),
        "a.txt:2:hello there\n1 match in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "HELLO", "case_insensitive": true})),
        "a.txt:1:Hello World\na.txt:2:hello there\n2 matches in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "a.b"})),
        "a.txt:3:a.b literal\na.txt:4:axb not literal\n2 matches in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "a.b", "fixed_strings": true})),
        "a.txt:3:a.b literal\n1 match in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "(", "fixed_strings": true})),
        "no matches (1 file searched)\n"
    );
}

#[test]
fn max_matches_stops_with_a_message() {
    let sb = Sandbox::new();
    sb.write("a.txt", "x\nx\n");
    sb.write("b.txt", "x\n");
    let r = call(
        "grep",
        json!({"pattern": "x", "max_matches": 2}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    assert_eq!(
        ok(&r).text,
        "a.txt:1:x\na.txt:2:x\nstopped at max_matches=2 (2 matches in 1 file); narrow the search with path, \
         glob or a more specific pattern, or raise max_matches (up to 5000)\n"
    );
    assert_eq!(
        ok(&r).structured,
        Some(json!({"matches": 2, "files": 1, "truncated": true}))
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "x", "max_matches": 3})),
        "a.txt:1:x\na.txt:2:x\nb.txt:1:x\nstopped at max_matches=3 (3 matches in 2 files); narrow the search \
         with path, glob or a more specific pattern, or raise max_matches (up to 5000)\n"
    );
}

#[test]
fn glob_filters_include_and_exclude() {
    let sb = project();
    assert_eq!(
        grep(&sb, json!({"pattern": "fn|TODO", "glob": "*.rs"})),
        "src/lib.rs:1:fn main() {}\nsrc/lib.rs:2:// TODO: x\nsrc/util/mod.rs:1:pub fn helper() {}\n\
         3 matches in 2 files\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "TODO", "glob": ["!*.rs"]})),
        "src/a.txt:2:TODO now\n1 match in 1 file; skipped 1 binary file\n"
    );
    assert_eq!(
        grep(
            &sb,
            json!({"pattern": "fn", "glob": ["*.rs", "!src/util/**"]})
        ),
        "src/lib.rs:1:fn main() {}\n1 match in 1 file\n"
    );
    let msg = grep_err(
        &sb,
        json!({"pattern": "x", "glob": "a[b"}),
        ErrorKind::InvalidInput,
    );
    assert!(msg.starts_with("invalid glob `a[b`"), "{msg}");
}

#[test]
fn ignored_hidden_and_binary_files_are_skipped() {
    let sb = project();
    let all = grep(&sb, json!({"pattern": "TODO", "include_hidden": true}));
    assert_eq!(
        all,
        ".env:1:TODO=dotfile\n.hidden/h.rs:1:TODO hidden\nsrc/a.txt:2:TODO now\nsrc/lib.rs:2:// TODO: x\n\
         4 matches in 4 files; skipped 1 binary file\n"
    );
    assert!(
        !all.contains("target/") && !all.contains("debug.log"),
        "{all}"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "binary"})),
        "no matches (3 files searched); skipped 1 binary file\n"
    );
    // An ignored file is searched when named, and so is its directory.
    assert_eq!(
        grep(&sb, json!({"pattern": "TODO", "path": "target/gen.rs"})),
        "target/gen.rs:1:TODO generated\n1 match in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "TODO", "path": "debug.log"})),
        "debug.log:1:TODO in a log\n1 match in 1 file\n"
    );
}

#[test]
fn named_hidden_dirs_and_crlf_files() {
    let sb = project();
    sb.write("crlf.txt", "foo\r\nbar\r\nfoo\r\n");
    assert_eq!(
        grep(&sb, json!({"pattern": "TODO", "path": ".hidden"})),
        ".hidden/h.rs:1:TODO hidden\n1 match in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "TODO", "path": "target"})),
        "target/gen.rs:1:TODO generated\n1 match in 1 file\n"
    );
    assert_eq!(
        grep(
            &sb,
            json!({"pattern": "foo$", "context": 1, "path": "crlf.txt"})
        ),
        "crlf.txt:1:foo\ncrlf.txt-2-bar\ncrlf.txt:3:foo\n2 matches in 1 file\n"
    );
    assert_eq!(
        grep(&sb, json!({"pattern": "TODO", "path": "bin.dat"})),
        "no matches (0 files searched); skipped 1 binary file\n"
    );
    let long = format!("{}needle{}\n", "é".repeat(600), "z".repeat(100));
    sb.write("long.txt", long);
    assert_eq!(
        grep(&sb, json!({"pattern": "needle", "path": "long.txt"})),
        format!(
            "long.txt:1:{}… [line truncated]\n1 match in 1 file\n",
            "é".repeat(500)
        )
    );
}

#[test]
fn symlinks_are_not_followed() {
    let sb = project();
    sb.symlink(sb.parent().join("outside"), "out-dir");
    sb.symlink(sb.canary(), "out-file");
    sb.symlink("src", "src-link");
    let text = grep(&sb, json!({"pattern": "canary|TODO"}));
    assert_eq!(
        text,
        "src/a.txt:2:TODO now\nsrc/lib.rs:2:// TODO: x\n2 matches in 2 files; skipped 1 binary file\n"
    );
    sb.assert_canaries_intact();
}

#[test]
fn errors_are_clear() {
    let sb = project();
    let r = call(
        "grep",
        json!({"pattern": "a(b"}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    assert!(!rejected(&r));
    let msg = err(&r, ErrorKind::InvalidInput);
    assert!(msg.starts_with("invalid regex: "), "{msg}");
    assert!(msg.contains("unclosed group"), "{msg}");
    assert_no_host_paths(&msg, &sb);
    let msg = grep_err(&sb, json!({"pattern": "[z-a]"}), ErrorKind::InvalidInput);
    assert!(msg.contains("invalid character class range"), "{msg}");

    let msg = grep_err(
        &sb,
        json!({"pattern": "x", "path": "missing"}),
        ErrorKind::NotFound,
    );
    assert_eq!(msg, "missing: no such file or directory");
    let msg = grep_err(
        &sb,
        json!({"pattern": "x", "path": "../outside"}),
        ErrorKind::PermissionDenied,
    );
    assert_eq!(msg, "../outside: path escapes the workspace");

    let ws = sb.ws();
    for (raw, needle) in [
        (r#"{"pattern": "#, "input is not valid JSON"),
        (r#"{}"#, r#""pattern" is a required property"#),
        (r#"{"pattern": 1}"#, "input.pattern: "),
        (r#"{"pattern": "x", "context": 11}"#, "input.context: "),
        (
            r#"{"pattern": "x", "max_matches": 0}"#,
            "input.max_matches: ",
        ),
        (r#"{"pattern": "x", "glob": 3}"#, "input.glob: "),
        (r#"{"pattern": "x", "regex": true}"#, "regex"),
    ] {
        let r = call_raw("grep", raw, &ws, WriteMode::ReadOnly, Limits::default());
        assert!(rejected(&r), "{raw} should be rejected: {:?}", r.outcome);
        let msg = err(&r, ErrorKind::InvalidInput);
        assert!(msg.contains(needle), "{raw}: {msg}");
        assert_no_host_paths(&msg, &sb);
    }
}

/// `input` run with one worker at a time (one walk) and with the default
/// (the search split across workers): the same text and results.
#[track_caller]
fn assert_split_matches_single(sb: &Sandbox, input: Value) {
    let run = |workers: u32| {
        let limits = Limits {
            workers,
            ..Limits::default()
        };
        let r = call_raw(
            "grep",
            &input.to_string(),
            &sb.ws(),
            WriteMode::ReadOnly,
            limits,
        );
        let report = r.report.as_ref().unwrap();
        let logs: Vec<String> = report.logs.iter().map(|l| l.message.clone()).collect();
        (ok(&r).clone(), report.workers, logs)
    };
    let (single, none, _) = run(1);
    let (split, workers, logs) = run(Limits::default().workers);
    assert_eq!(none, 0, "one worker at a time: one walk, no fan-out");
    if warden::runtime::parallelism() >= 2 {
        assert!(workers >= 2, "the default splits the search: {workers}");
        // One number per round of tasks (a task that runs past its budget
        // hands its rest to another round): together, every worker.
        let [log] = logs.as_slice() else {
            panic!("one log line: {logs:?}");
        };
        let rounds = log
            .strip_prefix("grep: searched in ")
            .and_then(|l| l.strip_suffix(" workers"))
            .unwrap_or_else(|| panic!("the split was used, not a fallback: {log}"));
        let total: u64 = rounds.split(" + ").map(|n| n.parse::<u64>().unwrap()).sum();
        assert_eq!(total, workers, "{log}");
    }
    assert_eq!(split.text, single.text, "input {input}");
    assert_eq!(split.structured, single.structured, "input {input}");
}

#[test]
fn a_search_split_across_workers_prints_what_one_walk_prints() {
    let sb = project();
    for i in 0..60 {
        let body: String = (0..20)
            .map(|l| {
                if (i * 3 + l) % 11 == 0 {
                    format!("TODO {i} {l}\n")
                } else {
                    format!("line {i} {l}\n")
                }
            })
            .collect();
        sb.write(&format!("pkg{}/m{i:02}.rs", i % 5), body);
    }
    sb.write("pkg3/blob.bin", b"TODO\0\0");
    sb.write("pkg4/.gitignore", "m*4.rs\n");
    for input in [
        json!({"pattern": "TODO"}),
        json!({"pattern": "TODO", "context": 2}),
        json!({"pattern": "TODO", "max_matches": 9}),
        json!({"pattern": "TODO", "max_matches": 9, "after": 1}),
        json!({"pattern": "TODO", "include_hidden": true, "glob": "!pkg2/**"}),
        json!({"pattern": "TODO", "path": "pkg1"}),
        json!({"pattern": "absent"}),
    ] {
        assert_split_matches_single(&sb, input);
    }
}

#[test]
fn files_of_every_size_around_the_read_sizes_are_searched_whole() {
    // The first read asks 256 KiB; one read returns at most 4 MiB; an
    // empty file ends at once. A match on the last line of each shows the
    // whole file was read, whichever way the reads fell.
    let sb = project();
    let line = format!("{}\n", "x".repeat(63));
    for (name, size) in [
        ("empty.txt", 0),
        ("first_read.txt", 256 * 1024),
        ("first_read_and_one.txt", 256 * 1024 + 64),
        ("max_read.txt", 4 * 1024 * 1024),
        ("over_max_read.txt", 6 * 1024 * 1024 + 64),
    ] {
        let mut body = line.repeat(size / 64);
        if size > 0 {
            body.truncate(body.len() - line.len());
            body.push_str(&format!("needle {:>56}\n", name.len()));
        }
        assert_eq!(body.len(), size / 64 * 64, "{name}");
        sb.write(&format!("sizes/{name}"), body);
    }
    let text = grep(&sb, json!({"pattern": "needle", "path": "sizes"}));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    for (shown, lines_in) in [
        ("sizes/first_read.txt", 4096),
        ("sizes/first_read_and_one.txt", 4097),
        ("sizes/max_read.txt", 65536),
        ("sizes/over_max_read.txt", 98305),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{shown}:{lines_in}:needle"))),
            "{shown} line {lines_in}: {text}"
        );
    }
}

/// `glob` with one worker at a time (one walk) and with the default (the
/// walk split across workers): the same paths.
#[test]
fn a_glob_split_across_workers_lists_what_one_walk_lists() {
    let sb = project();
    for i in 0..80 {
        sb.write(&format!("pkg{}/src/m{i:02}.rs", i % 6), "");
        sb.write(&format!("pkg{}/src/deep/n{i:02}/mod.rs", i % 4), "");
    }
    sb.write("pkg2/.gitignore", "m*2.rs\n");
    for input in [
        json!({"pattern": "**/*.rs"}),
        json!({"pattern": "**/mod.rs"}),
        json!({"pattern": "src/**", "path": "pkg1"}),
        json!({"pattern": "**/*.rs", "include_hidden": true}),
        json!({"pattern": "*"}),
    ] {
        let run = |workers: u32| {
            let limits = Limits {
                workers,
                ..Limits::default()
            };
            let r = call_raw(
                "glob",
                &input.to_string(),
                &sb.ws(),
                WriteMode::ReadOnly,
                limits,
            );
            let workers = r.report.as_ref().unwrap().workers;
            (ok(&r).clone(), workers)
        };
        let (single, none) = run(1);
        let (split, workers) = run(Limits::default().workers);
        assert_eq!(none, 0, "one worker at a time: one walk");
        // The whole project is large enough to split; `pkg1` alone is not.
        if warden::runtime::parallelism() >= 2 && input.get("path").is_none() {
            assert!(workers >= 2, "the default splits the walk: {workers}");
        }
        assert!(single.text.lines().count() > 1, "{input}: {}", single.text);
        assert_eq!(split.text, single.text, "input {input}");
        assert_eq!(split.structured, single.structured, "input {input}");
    }
}

/// Files the grant refuses to read and directories it refuses to open are
/// skipped, as ripgrep skips what it cannot read, and the summary counts
/// them: "no matches" must not hide that part of the tree went unread.
/// One walk and a split search count alike; `glob`, which reads no file,
/// counts the directories.
#[test]
fn what_cannot_be_read_is_counted_in_the_summary() {
    use warden::capability::{FsAccess, PathGuard, ProtectedReads};
    let sb = Sandbox::new();
    // Enough directories at the top that a split search's plan lists no
    // deeper: the refused one is a subtree that only a worker tries to open.
    for i in 0..40 {
        sb.write(&format!("d{i:02}/m.rs"), format!("fn f{i}() {{}}\n"));
    }
    sb.write("src/hit.rs", "needle here\n");
    sb.write("secret.txt", "needle secret\n");
    sb.write("vault/inner.txt", "needle vaulted\n");
    let globs = vec!["secret.txt".into(), "vault".into(), "vault/**".into()];
    let guard = PathGuard::new(globs, ProtectedReads::Refused).unwrap();
    let grant = guarded_grant(&sb.ws(), FsAccess::ReadOnly, Some(guard));
    let (entry, _) = catalog().find_tool("grep").unwrap();
    let search = catalog().load(entry).unwrap();
    let grep = |input: Value, workers: u32| {
        let limits = Limits {
            workers,
            ..Limits::default()
        };
        let r = call_plugin(&search, "grep", input, &grant, &limits);
        match r.outcome {
            warden::protocol::ToolOutcome::Success(out) => out.text,
            other => panic!("{other:?}"),
        }
    };
    for workers in [1, 2] {
        let text = grep(json!({"pattern": "needle"}), workers);
        assert_eq!(
            text,
            "src/hit.rs:1:needle here\n1 match in 1 file; could not read 2 files or directories \
             (permissions or the sandbox)\n",
            "{workers} workers"
        );
        assert!(
            !text.contains("secret") && !text.contains("vaulted"),
            "{text}"
        );
        // A search that stops early says so, not what it might have missed.
        let stopped = grep(json!({"pattern": "f", "max_matches": 2}), workers);
        assert!(!stopped.contains("could not read"), "{stopped}");
    }
    let (entry, _) = catalog().find_tool("glob").unwrap();
    let fs = catalog().load(entry).unwrap();
    let r = call_plugin(
        &fs,
        "glob",
        json!({"pattern": "**/*.txt"}),
        &grant,
        &Limits::default(),
    );
    let warden::protocol::ToolOutcome::Success(out) = r.outcome else {
        panic!("{:?}", r.outcome);
    };
    assert_eq!(
        out.text,
        "secret.txt\n[could not read 1 directory (permissions or the sandbox)]\n"
    );
}
