//! The built-in file tools through the full pipeline: exact outputs of
//! `read_file`, `write_file`, `edit_file`, `list_dir` and `glob`, bad input
//! rejected before execution, and writes refused without a write grant.
//! `read_file` and the input checks live here, the others in submodules.

mod list;
mod write;

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::WriteMode;
use warden::pipeline::CallResult;
use warden::protocol::ErrorKind::{self, InvalidInput, NotFound, PermissionDenied};

use crate::support::*;

pub(crate) const RO: WriteMode = WriteMode::ReadOnly;
pub(crate) const RW: WriteMode = WriteMode::AllowWrite;

/// A sandbox whose calls all run under one write mode.
pub(crate) struct Ws {
    sb: Sandbox,
    write: WriteMode,
}

impl std::ops::Deref for Ws {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sb
    }
}

impl Ws {
    pub(crate) fn new(write: WriteMode) -> Self {
        Ws {
            sb: Sandbox::new(),
            write,
        }
    }

    pub(crate) fn run(&self, tool: &str, input: Value) -> CallResult {
        call(tool, input, &self.ws(), self.write)
    }

    /// The text of a successful call.
    #[track_caller]
    pub(crate) fn text(&self, tool: &str, input: Value) -> String {
        ok(&self.run(tool, input)).text.clone()
    }

    /// The message of a call that ran and failed with `kind`.
    #[track_caller]
    pub(crate) fn fail(&self, tool: &str, input: Value, kind: ErrorKind) -> String {
        let r = self.run(tool, input);
        assert!(!rejected(&r), "expected the call to run: {:?}", r.outcome);
        let msg = err(&r, kind);
        assert_no_host_paths(&msg, &self.sb);
        msg
    }

    /// The message of raw input rejected as invalid before running.
    #[track_caller]
    pub(crate) fn reject(&self, tool: &str, raw: &str) -> String {
        let r = call_raw(tool, raw, &self.ws(), self.write, Limits::default());
        assert!(rejected(&r), "expected a rejection, got {:?}", r.outcome);
        let msg = err(&r, InvalidInput);
        assert_no_host_paths(&msg, &self.sb);
        msg
    }

    /// The sorted names at the top of the workspace.
    pub(crate) fn names(&self) -> Vec<String> {
        let entries = std::fs::read_dir(self.ws()).unwrap();
        let mut names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

// read_file

#[test]
fn read_file_numbers_lines_and_windows() {
    let t = Ws::new(RO);
    t.write(
        "dir/n.txt",
        (1..=10).map(|i| format!("l{i}\n")).collect::<String>(),
    );
    t.write("crlf.txt", "one\r\ntwo");
    assert_eq!(
        t.text("read_file", json!({"path": "crlf.txt"})),
        "     1\tone\n     2\ttwo\n"
    );
    let r = t.run(
        "read_file",
        json!({"path": "dir/n.txt", "offset": 4, "limit": 2}),
    );
    assert_eq!(
        ok(&r).text,
        "     4\tl4\n     5\tl5\n[showed lines 4-5 of 10; call read_file with offset=6 to continue]\n"
    );
    let expected = json!({"path": "dir/n.txt", "start_line": 4, "end_line": 5, "total_lines": 10,
        "truncated": true});
    assert_eq!(ok(&r).structured, Some(expected));
    let input = json!({"path": "./dir/../dir/n.txt", "offset": 9});
    assert_eq!(t.text("read_file", input), "     9\tl9\n    10\tl10\n");
    let msg = t.fail(
        "read_file",
        json!({"path": "dir/n.txt", "offset": 11}),
        InvalidInput,
    );
    assert_eq!(
        msg,
        "dir/n.txt: offset 11 is past the end of the file, which has 10 lines"
    );
}

#[test]
fn read_file_empty_and_long_lines() {
    let t = Ws::new(RO);
    t.write("empty.txt", "");
    assert_eq!(
        t.text("read_file", json!({"path": "empty.txt"})),
        "empty.txt: empty file (0 bytes)"
    );
    t.write("long.txt", format!("{}\nshort\n", "é".repeat(2500)));
    let cut = format!(
        "     1\t{}… [line truncated]\n     2\tshort\n",
        "é".repeat(2000)
    );
    assert_eq!(t.text("read_file", json!({"path": "long.txt"})), cut);
    t.write("exact.txt", format!("{}\n", "a".repeat(2000)));
    let whole = format!("     1\t{}\n", "a".repeat(2000));
    assert_eq!(t.text("read_file", json!({"path": "exact.txt"})), whole);
}

#[test]
fn read_file_decodes_across_the_sniff_boundary_and_refuses_late_binary() {
    let t = Ws::new(RO);
    // "é" straddles byte 8192, the end of the binary sniff.
    let mut body = format!("{}\n", "x".repeat(99)).repeat(81);
    body.push_str(&format!("{}é\nend\n", "y".repeat(91)));
    assert_eq!(body.find('é'), Some(8191));
    t.write("split.txt", &body);
    let expected = format!("    82\t{}é\n    83\tend\n", "y".repeat(91));
    assert_eq!(
        t.text("read_file", json!({"path": "split.txt", "offset": 82})),
        expected
    );

    let mut late = "ok\n".repeat(4000).into_bytes();
    late.extend(b"bad \xff here\n");
    t.write("late.txt", late);
    let msg = t.fail(
        "read_file",
        json!({"path": "late.txt", "offset": 3999}),
        InvalidInput,
    );
    assert_eq!(
        msg,
        "late.txt: binary file (12011 bytes, invalid UTF-8 at line 4001); read_file only shows text"
    );

    // An absolute path inside the workspace is accepted and shown relative.
    let abs = t.ws().join("split.txt").display().to_string();
    let r = t.run("read_file", json!({"path": abs, "offset": 83}));
    assert_eq!(ok(&r).text, "    83\tend\n");
    assert_eq!(ok(&r).structured.as_ref().unwrap()["path"], "split.txt");
}

#[test]
fn read_file_stops_at_the_output_cap_on_a_huge_file() {
    let t = Ws::new(RO);
    // 300,000 lines of 40 bytes; each numbered line is 48 bytes, so 5461 fit in 256 KiB.
    let x = "x".repeat(33);
    t.write(
        "huge.txt",
        (1..=300_000)
            .map(|i| format!("{i:06} {x}\n"))
            .collect::<String>(),
    );

    let out = t.text("read_file", json!({"path": "huge.txt"}));
    assert_eq!(out.lines().count(), 2001);
    assert!(out.starts_with(&format!("     1\t000001 {x}\n")));
    let tail = format!(
        "  2000\t002000 {x}\n[showed lines 1-2000 of 300000; call read_file with offset=2001 to continue]\n"
    );
    assert!(out.ends_with(&tail), "{}", &out[out.len() - 200..]);

    let r = t.run(
        "read_file",
        json!({"path": "huge.txt", "offset": 100, "limit": 10000}),
    );
    let out = ok(&r);
    assert!(
        !out.truncated,
        "the plugin, not the host, must cut the output"
    );
    let marker = "[truncated at 256 KiB: showed lines 100-5560 of 300000; \
                  call read_file with offset=5561 to continue]\n";
    assert!(
        out.text.ends_with(marker),
        "{}",
        &out.text[out.text.len() - 200..]
    );
    assert!(out.text.ends_with(&format!("  5560\t005560 {x}\n{marker}")));
    assert_eq!(out.text.len() - marker.len(), 5461 * 48);
    assert!(out.text.len() - marker.len() <= 256 * 1024);
    let s = out.structured.as_ref().unwrap();
    assert_eq!(
        (&s["end_line"], &s["total_lines"]),
        (&json!(5560), &json!(300_000))
    );

    let out = t.text("read_file", json!({"path": "huge.txt", "offset": 299_999}));
    assert_eq!(out, format!("299999\t299999 {x}\n300000\t300000 {x}\n"));
}

#[test]
fn read_file_refuses_missing_binary_and_directories() {
    let t = Ws::new(RO);
    t.write("bin.dat", b"ab\0cd");
    t.write("latin1.txt", b"caf\xe9 au lait");
    t.write("d/x.txt", "x");
    let msg = t.fail("read_file", json!({"path": "d/nope.txt"}), NotFound);
    assert_eq!(msg, "d/nope.txt: no such file or directory");
    let msg = t.fail("read_file", json!({"path": "bin.dat"}), InvalidInput);
    assert_eq!(
        msg,
        "bin.dat: binary file (5 bytes); read_file only shows text"
    );
    let msg = t.fail("read_file", json!({"path": "latin1.txt"}), InvalidInput);
    assert!(
        msg.starts_with("latin1.txt: binary file (12 bytes"),
        "{msg}"
    );
    let msg = t.fail("read_file", json!({"path": "d"}), InvalidInput);
    assert_eq!(msg, "d: is a directory; use list_dir to see its entries");
}

// input checks

#[test]
fn bad_input_is_rejected_before_running() {
    let t = Ws::new(RW);
    t.write("a.txt", "a\n");
    let msg = t.reject("read_file", r#"{"path":"#);
    assert!(msg.starts_with("input is not valid JSON: "), "{msg}");
    assert_eq!(
        t.reject("read_file", r#"["a.txt"]"#),
        "input must be a JSON object"
    );

    let msg = t.reject("read_file", r#"{"path": 5}"#);
    assert!(
        msg.starts_with("input does not match the schema of read_file: "),
        "{msg}"
    );
    assert!(
        msg.contains(r#"input.path: 5 is not of type "string""#),
        "{msg}"
    );
    let msg = t.reject("read_file", "{}");
    assert!(msg.contains(r#""path" is a required property"#), "{msg}");
    let msg = t.reject("read_file", r#"{"path": "a.txt", "bogus": 1}"#);
    assert!(msg.contains("bogus"), "{msg}");
    let msg = t.reject("read_file", r#"{"path": "a.txt", "offset": 0}"#);
    assert!(
        msg.contains("input.offset: 0 is less than the minimum of 1"),
        "{msg}"
    );
    let msg = t.reject("read_file", r#"{"path": "a.txt", "limit": 10001}"#);
    assert!(msg.contains("input.limit: "), "{msg}");
    let msg = t.reject("write_file", r#"{"path": "a.txt"}"#);
    assert!(msg.contains(r#""content" is a required property"#), "{msg}");
    let msg = t.reject(
        "edit_file",
        r#"{"path": "a.txt", "old_string": "a", "new_string": 1}"#,
    );
    assert!(msg.contains("input.new_string: "), "{msg}");
    let msg = t.reject("list_dir", r#"{"depth": 6}"#);
    assert!(msg.contains("input.depth: "), "{msg}");
    let msg = t.reject("glob", r#"{"pattern": "*", "hidden": true}"#);
    assert!(msg.contains("hidden"), "{msg}");
    assert_eq!(t.read("a.txt"), "a\n");
}

#[test]
fn paths_outside_the_workspace_are_refused_without_host_paths() {
    let t = Ws::new(RW);
    let canary = t.canary().display().to_string();
    for path in [
        "../outside/canary.txt",
        canary.as_str(),
        "../ws-evil/canary.txt",
    ] {
        let msg = t.fail("read_file", json!({"path": path}), PermissionDenied);
        assert!(msg.contains("workspace"), "{msg}");
        t.fail(
            "write_file",
            json!({"path": path, "content": "x"}),
            PermissionDenied,
        );
    }
    t.assert_canaries_intact();
}
