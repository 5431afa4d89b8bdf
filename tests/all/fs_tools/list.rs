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
