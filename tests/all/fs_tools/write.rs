//! `write_file` and `edit_file`: what they report, what they refuse, and
//! that nothing changes without a write grant.

use serde_json::json;
use warden::protocol::ErrorKind::{InvalidInput, NotFound, PermissionDenied};

use super::{RO, RW, Ws};
use crate::support::*;

#[test]
fn write_file_creates_parents_then_overwrites() {
    let t = Ws::new(RW);
    let r = t.run(
        "write_file",
        json!({"path": "a/b/new.txt", "content": "hello"}),
    );
    assert_eq!(ok(&r).text, "created a/b/new.txt (5 bytes)");
    let expected = json!({"path": "a/b/new.txt", "bytes": 5, "created": true});
    assert_eq!(ok(&r).structured, Some(expected));
    assert_eq!(t.read("a/b/new.txt"), "hello");
    let out = t.text("write_file", json!({"path": "a/b/new.txt", "content": "é"}));
    assert_eq!(out, "overwrote a/b/new.txt (2 bytes)");
    assert_eq!(t.read("a/b/new.txt"), "é");
    let out = t.text("write_file", json!({"path": "one.txt", "content": "1"}));
    assert_eq!(out, "created one.txt (1 byte)");
    let out = t.text("write_file", json!({"path": "e.txt", "content": ""}));
    assert_eq!(out, "created e.txt (0 bytes)");
    assert_eq!(t.read("e.txt"), "");
    t.assert_canaries_intact();
}

#[test]
fn write_file_refusals() {
    let t = Ws::new(RW);
    t.write("d/f.txt", "keep");
    let input = json!({"path": "nope/x.txt", "content": "x", "create_dirs": false});
    let msg = t.fail("write_file", input, NotFound);
    assert_eq!(
        msg,
        "nope/x.txt: parent directory nope does not exist; set create_dirs=true to create it"
    );
    assert!(!t.exists("nope"));
    let msg = t.fail(
        "write_file",
        json!({"path": "d", "content": "x"}),
        InvalidInput,
    );
    assert_eq!(msg, "d: is a directory; give a file path");
    let msg = t.fail(
        "write_file",
        json!({"path": ".", "content": "x"}),
        InvalidInput,
    );
    assert_eq!(msg, "path names the workspace root; give a file path");
    assert_eq!(t.read("d/f.txt"), "keep");
}

#[test]
fn writes_without_a_write_grant_are_refused() {
    let t = Ws::new(RO);
    t.write("a.txt", "alpha\nbeta\n");
    let refused = |path: &str, msg: &str| {
        let want = format!("{path}: the sandbox refused the write: this call may only read");
        assert!(msg.starts_with(&want), "{msg}");
    };
    let msg = t.fail(
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
        PermissionDenied,
    );
    refused("a.txt", &msg);
    let msg = t.fail(
        "write_file",
        json!({"path": "new.txt", "content": "x"}),
        PermissionDenied,
    );
    refused("new.txt", &msg);
    let msg = t.fail(
        "write_file",
        json!({"path": "n/new.txt", "content": "x"}),
        PermissionDenied,
    );
    refused("n", &msg);
    let input = json!({"path": "a.txt", "old_string": "beta", "new_string": "gamma"});
    let msg = t.fail("edit_file", input, PermissionDenied);
    refused("a.txt", &msg);

    assert_eq!(t.read("a.txt"), "alpha\nbeta\n");
    assert_eq!(
        t.names(),
        ["a.txt"],
        "no file, directory or temp file may appear"
    );
    t.assert_canaries_intact();
}

// edit_file

#[test]
fn edit_file_replaces_once_and_shows_a_diff() {
    let t = Ws::new(RW);
    let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    t.write("src/f.txt", &body);
    let r = t.run(
        "edit_file",
        json!({"path": "src/f.txt", "old_string": "line 5\n", "new_string": "five\n"}),
    );
    let out = ok(&r);
    assert_eq!(
        out.text,
        "src/f.txt: replaced 1 occurrence\n--- a/src/f.txt\n+++ b/src/f.txt\n@@ -2,7 +2,7 @@\n \
         line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n"
    );
    let lines: Vec<&str> = out.text.lines().collect();
    assert!(lines.contains(&"-line 5") && lines.contains(&"+five"));
    let expected = json!({"path": "src/f.txt", "replacements": 1});
    assert_eq!(out.structured, Some(expected));
    assert_eq!(t.read("src/f.txt"), body.replace("line 5\n", "five\n"));
    assert!(!t.exists("src/.f.txt.warden-tmp"));
}

#[test]
fn edit_file_replace_all() {
    let t = Ws::new(RW);
    t.write("f.txt", "x x\nx\n");
    let input =
        json!({"path": "f.txt", "old_string": "x", "new_string": "yy", "replace_all": true});
    assert_eq!(
        t.text("edit_file", input),
        "f.txt: replaced 3 occurrences\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-x x\n-x\n+yy yy\n+yy\n"
    );
    assert_eq!(t.read("f.txt"), "yy yy\nyy\n");
}

#[test]
fn edit_file_refuses_bad_edits_and_leaves_the_file() {
    let t = Ws::new(RW);
    t.write("f.txt", "x x x\n");
    let edit = |path: &str, old: &str, new: &str| {
        t.fail(
            "edit_file",
            json!({"path": path, "old_string": old, "new_string": new}),
            InvalidInput,
        )
    };
    let msg = edit("f.txt", "x", "y");
    assert!(
        msg.starts_with("f.txt: old_string matches 3 times; "),
        "{msg}"
    );
    assert!(msg.contains("replace_all=true"), "{msg}");
    let msg = edit("f.txt", "zzz", "y");
    assert!(
        msg.starts_with("f.txt: old_string not found. It must match the file exactly"),
        "{msg}"
    );
    assert!(msg.contains("read_file") && !msg.contains("CRLF"), "{msg}");
    assert!(edit("f.txt", "", "y").starts_with("old_string is empty; "));
    let msg = edit("f.txt", "x x", "x x");
    assert_eq!(
        msg,
        "old_string and new_string are identical; there is nothing to change"
    );
    let input = json!({"path": "gone.txt", "old_string": "a", "new_string": "b"});
    assert_eq!(
        t.fail("edit_file", input, NotFound),
        "gone.txt: no such file or directory"
    );
    assert_eq!(t.read("f.txt"), "x x x\n");

    t.write("crlf.txt", "one\r\ntwo\r\n");
    let msg = edit("crlf.txt", "one\ntwo", "z");
    assert!(
        msg.ends_with("The file uses CRLF line endings: write \\r\\n in old_string."),
        "{msg}"
    );
    t.write("bin.dat", b"\xff\xfe");
    let msg = edit("bin.dat", "a", "b");
    assert_eq!(
        msg,
        "bin.dat: not UTF-8 text; edit_file only edits text files"
    );
    assert_eq!(
        t.names(),
        ["bin.dat", "crlf.txt", "f.txt"],
        "no temp file may linger"
    );
}

#[test]
fn edit_file_keeps_the_executable_bit() {
    use std::os::unix::fs::PermissionsExt;
    let t = Ws::new(RW);
    t.write("run.sh", "#!/bin/sh\necho hi\n");
    let path = t.ws().join("run.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.text(
        "edit_file",
        json!({"path": "run.sh", "old_string": "hi", "new_string": "bye"}),
    );
    assert_eq!(t.read("run.sh"), "#!/bin/sh\necho bye\n");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o755
    );
}
