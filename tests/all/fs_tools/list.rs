//! `list_dir` and `glob`: sorted listings, hidden and ignored entries,
//! symlinks shown but never followed.

use serde_json::{Value, json};
use warden::protocol::ErrorKind::{InvalidInput, NotFound};

use super::{RO, Ws};
use crate::support::*;

#[test]
fn list_dir_sorted_tree_with_markers() {
    let t = Ws::new(RO);
    for file in [
        "b.txt",
        "a/x.rs",
        "a/deep/y.rs",
        "a/deep/deeper/z.rs",
        ".hidden",
        ".git/HEAD",
    ] {
        t.write(file, "");
    }
    t.symlink(t.canary(), "link");
    t.symlink("b.txt", "a/rel-link");
    let r = t.run("list_dir", json!({}));
    assert_eq!(ok(&r).text, "a/\nb.txt\nlink -> (symlink)\n");
    let expected = json!({"path": ".", "entries": 3, "truncated": false});
    assert_eq!(ok(&r).structured, Some(expected));
    assert_no_host_paths(&ok(&r).text, &t);
    assert_eq!(
        t.text("list_dir", json!({"path": "a", "depth": 2})),
        "deep/\n  deeper/\n  y.rs\nrel-link -> (symlink)\nx.rs\n"
    );
    assert_eq!(
        t.text(
            "list_dir",
            json!({"path": ".", "depth": 3, "include_hidden": true})
        ),
        ".git/\n.hidden\na/\n  deep/\n    deeper/\n    y.rs\n  rel-link -> (symlink)\n  x.rs\n\
         b.txt\nlink -> (symlink)\n"
    );
    t.assert_canaries_intact();
}

#[test]
fn list_dir_empty_and_errors() {
    let t = Ws::new(RO);
    t.write("e/.only-hidden", "");
    t.write("f.txt", "");
    std::fs::create_dir(t.ws().join("void")).unwrap();
    assert_eq!(
        t.text("list_dir", json!({"path": "e"})),
        "e: no entries (hidden entries skipped; set include_hidden=true to see them)\n"
    );
    let out = t.text("list_dir", json!({"path": "void", "include_hidden": true}));
    assert_eq!(out, "void: empty directory\n");
    let msg = t.fail("list_dir", json!({"path": "f.txt"}), InvalidInput);
    assert_eq!(
        msg,
        "f.txt: is a file, not a directory; use read_file to read it"
    );
    let msg = t.fail("list_dir", json!({"path": "nope"}), NotFound);
    assert_eq!(msg, "nope: no such file or directory");
}

// glob

fn glob_tree() -> Ws {
    let t = Ws::new(RO);
    for file in [
        "src/lib.rs",
        "src/a/mod.rs",
        "src/b.txt",
        "top.rs",
        "target/out.rs",
        "notes.log",
    ] {
        t.write(file, "");
    }
    t.write(".gitignore", "target/\n*.log\n");
    t.write(".cfg/x.rs", "");
    t
}

#[test]
fn glob_matches_sorted_and_respects_gitignore() {
    let t = glob_tree();
    let glob = |input: Value| t.text("glob", input);
    let r = t.run("glob", json!({"pattern": "**/*.rs"}));
    assert_eq!(ok(&r).text, "src/a/mod.rs\nsrc/lib.rs\ntop.rs\n");
    let expected = json!({"path": ".", "matches": 3, "truncated": false});
    assert_eq!(ok(&r).structured, Some(expected));
    assert_eq!(glob(json!({"pattern": "*.rs"})), "top.rs\n");
    assert_eq!(
        glob(json!({"pattern": "*.rs", "path": "src"})),
        "src/lib.rs\n"
    );
    assert_eq!(
        glob(json!({"pattern": "./src/*"})),
        "src/a/\nsrc/b.txt\nsrc/lib.rs\n"
    );
    let out = glob(json!({"pattern": "src/**/*.{rs,txt}"}));
    assert_eq!(out, "src/a/mod.rs\nsrc/b.txt\nsrc/lib.rs\n");
    assert_eq!(
        glob(json!({"pattern": "**/*.rs", "include_hidden": true})),
        ".cfg/x.rs\nsrc/a/mod.rs\nsrc/lib.rs\ntop.rs\n"
    );
    assert_eq!(
        glob(json!({"pattern": "*.log"})),
        "no files match `*.log` under . (ignored and hidden files skipped; \
         set include_hidden=true for hidden ones)"
    );
    let out = glob(json!({"pattern": "**/*.py", "path": "src", "include_hidden": true}));
    assert_eq!(out, "no files match `**/*.py` under src");
}

#[test]
fn glob_errors() {
    let t = glob_tree();
    let msg = t.fail("glob", json!({"pattern": "src/[a"}), InvalidInput);
    assert!(msg.starts_with("invalid glob pattern `src/[a`: "), "{msg}");
    assert!(msg.contains("unclosed character class"), "{msg}");
    let msg = t.fail(
        "glob",
        json!({"pattern": "*", "path": "top.rs"}),
        InvalidInput,
    );
    assert_eq!(
        msg,
        "top.rs: not a directory; give the directory to search in"
    );
    let msg = t.fail("glob", json!({"pattern": "*", "path": "nope"}), NotFound);
    assert_eq!(msg, "nope: no such file or directory");
}

/// A name that is not UTF-8 cannot cross WASI: its entry is left out, the
/// rest of its directory is still listed, walked and searched (it used to
/// hide the whole directory: `grep` found nothing in it and said nothing),
/// and the call says what was left out.
#[test]
fn a_name_that_is_not_utf8_hides_only_its_own_entry() {
    use std::os::unix::ffi::OsStrExt;
    let t = Ws::new(RO);
    t.write("d/a.txt", "needle a\n");
    t.write("d/z.txt", "needle z\n");
    let odd = t
        .ws()
        .join("d")
        .join(std::ffi::OsStr::from_bytes(b"odd\xff.txt"));
    std::fs::write(odd, "needle odd\n").unwrap();
    let top = t.ws().join(std::ffi::OsStr::from_bytes(b"top\xfe.txt"));
    std::fs::write(top, "needle top\n").unwrap();

    let listed = t.text("list_dir", json!({"depth": 2}));
    assert_eq!(
        listed,
        "[1 not shown: names that are not UTF-8, which WASI cannot name]\n\
         d/\n  [1 not shown: names that are not UTF-8, which WASI cannot name]\n  a.txt\n  z.txt\n"
    );
    // Said once, with the count, by each walker that met such a name (here
    // the search's plan lists both directories), however often it listed
    // one: a split search's plan lists the top again at each depth.
    let warned = |r: &warden::pipeline::CallResult| {
        let lines: Vec<&str> = r
            .report
            .as_ref()
            .unwrap()
            .logs
            .iter()
            .map(|l| l.message.as_str())
            .filter(|m| m.contains("not UTF-8"))
            .collect();
        lines.len() == 1
            && lines[0].starts_with("skipped 2 entries whose names are not UTF-8")
            && lines[0].contains("the first in ")
    };
    for workers in [1, 2] {
        let limits = warden::base::Limits {
            workers,
            ..warden::base::Limits::default()
        };
        let input = json!({"pattern": "needle"}).to_string();
        let r = call_raw("grep", &input, &t.ws(), RO, limits.clone());
        assert_eq!(
            ok(&r).text,
            "d/a.txt:1:needle a\nd/z.txt:1:needle z\n2 matches in 2 files\n",
            "{workers} workers"
        );
        assert!(warned(&r), "{workers} workers: {:?}", r.report);
    }
    let r = t.run("glob", json!({"pattern": "**/*.txt"}));
    assert_eq!(ok(&r).text, "d/a.txt\nd/z.txt\n");
    assert!(warned(&r), "{:?}", r.report);
}

/// In a split search the plan lists the top once more at each depth it
/// tries: a name that is not UTF-8 there is still said once, by the plan,
/// and one deeper down by the worker that walked it.
#[test]
fn a_split_search_says_each_name_that_is_not_utf8_once() {
    use std::os::unix::ffi::OsStrExt;
    let t = Ws::new(RO);
    for d in 0..3 {
        for s in 0..15 {
            t.write(&format!("d{d}/s{s:02}/m.txt"), "needle\n");
        }
    }
    for odd in [&b"top\xff.txt"[..], b"d1/s07/deep\xfe.txt"] {
        std::fs::write(t.ws().join(std::ffi::OsStr::from_bytes(odd)), "needle\n").unwrap();
    }
    let limits = warden::base::Limits {
        workers: 2,
        ..warden::base::Limits::default()
    };
    let input = json!({"pattern": "needle"}).to_string();
    let r = call_raw("grep", &input, &t.ws(), RO, limits);
    assert!(
        ok(&r).text.ends_with("45 matches in 45 files\n"),
        "{}",
        ok(&r).text
    );
    let logs = &r.report.as_ref().unwrap().logs;
    assert!(
        logs.iter()
            .any(|l| l.message.starts_with("grep: searched in") && !l.message.contains("one walk")),
        "the search was not split: {logs:?}"
    );
    let mut warnings: Vec<&str> = logs
        .iter()
        .map(|l| l.message.as_str())
        .filter(|m| m.contains("not UTF-8"))
        .collect();
    warnings.sort_unstable();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with("skipped 1 entry whose names are not UTF-8")
            && warnings[0].contains("the first in /workspace/d1/s07;"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("skipped 1 entry whose names are not UTF-8")
            && warnings[1].contains("the first in /workspace;"),
        "{warnings:?}"
    );
}
