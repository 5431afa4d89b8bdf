//! `grep` through the host's prefilter (`warden:tool/prefilter`) gives
//! exactly what it gives without one, and the interface refuses what a
//! hostile guest passes it with a typed error.
//!
//! The plain read path is reached with the same pattern made unusable for
//! a prefilter: `(?:P)|.\A` matches what `P` matches (`.\A` never matches),
//! but its matches may begin and end with anything, so `grep` asks the
//! host for no needles and reads every file into the guest.

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::{Grant, WriteMode};
use warden::policy::grant_from_declared;
use warden::protocol::ToolOutcome;

use crate::support::*;

/// A tree with matches of every kind spread among many files: upper and
/// lower case, a Kelvin sign that `(?i)k` matches, CRLF lines, binary files
/// with the needle inside and outside their first 8 KiB, files over one
/// host read (4 MiB) with the needle only at their end or across the end
/// of a file's first read (256 KiB) or of a host read, and files holding none of it.
fn tree() -> Sandbox {
    let sb = Sandbox::new();
    for d in 0..6 {
        for f in 0..40 {
            let mut text = String::new();
            for l in 0..30 {
                let line = match (d * 40 + f + l) % 23 {
                    0 => "let hash = compatibility_hash(&key);".to_string(),
                    1 => "    unreachable!(\"never\")".to_string(),
                    2 => "    UNREACHABLE in capitals\r".to_string(),
                    3 => format!("pub fn get_unchecked_{l}(i: usize) {{"),
                    4 => "fn from_utf8_unchecked(v: &[u8]) -> &str {".to_string(),
                    5 => "temperature 300 \u{212A} (kelvin)".to_string(),
                    6 => "pub struct ServerConfig {".to_string(),
                    _ => format!("ordinary line {l} of file {f}"),
                };
                text.push_str(&line);
                text.push('\n');
            }
            sb.write(&format!("d{d}/sub{}/f{f:02}.rs", f % 3), &text);
        }
    }
    sb.write("plain/none.txt", "nothing to see\n");
    sb.write("bin/head.dat", b"\0\0compatibility_hash\n");
    let mut late = vec![b'x'; 9000];
    late[10] = 0;
    late.extend_from_slice(b"\nunreachable\n");
    sb.write("bin/late_nul.dat", &late);
    let mut tail_nul = b"plain text head\n".to_vec();
    tail_nul.extend(vec![b'y'; 9000]);
    tail_nul.push(0);
    sb.write("bin/tail_nul.dat", &tail_nul);
    sb.write("bin/none.dat", b"\0nothing\0");
    let mut big = "padding line\n".repeat(5 * 1024 * 1024 / 13);
    big.push_str("compatibility_hash at the very end\n");
    sb.write("big/ends_with_it.txt", &big);
    sb.write(
        "big/without.txt",
        "padding line\n".repeat(5 * 1024 * 1024 / 13),
    );
    // The needle crosses the end of the host's first read (4 MiB).
    let mut straddles = "padding line\n".repeat((4 << 20) / 13);
    straddles.push_str(&"x".repeat((4 << 20) - 5 - straddles.len()));
    straddles.push_str("compatibility_hash\n");
    sb.write("big/straddles.txt", &straddles);
    // The needle crosses the end of a file's first read (256 KiB).
    let mut straddles_first = "padding line\n".repeat((256 << 10) / 13);
    straddles_first.push_str(&"x".repeat((256 << 10) - 5 - straddles_first.len()));
    straddles_first.push_str("compatibility_hash\n");
    straddles_first.push_str(&"padding line\n".repeat(1000));
    sb.write("big/straddles_first.txt", &straddles_first);
    sb
}

/// The input with its pattern made unusable for a prefilter.
fn unfiltered(input: &Value) -> Value {
    let mut plain = input.clone();
    let pattern = input["pattern"].as_str().unwrap();
    let pattern = if input["fixed_strings"] == json!(true) {
        regex::escape(pattern)
    } else {
        pattern.to_string()
    };
    plain["pattern"] = json!(format!("(?:{pattern})|.\\A"));
    plain["fixed_strings"] = json!(false);
    plain
}

fn grep_text(sb: &Sandbox, input: &Value) -> String {
    let r = call("grep", input.clone(), &sb.ws(), WriteMode::ReadOnly);
    ok(&r).text.clone()
}

#[test]
fn grep_gives_the_same_results_with_and_without_the_prefilter() {
    let sb = tree();
    let inputs = [
        json!({"pattern": "compatibility_hash", "fixed_strings": true, "max_matches": 5000}),
        json!({"pattern": "unreachable", "fixed_strings": true, "max_matches": 5000}),
        json!({"pattern": "unreachable", "case_insensitive": true, "max_matches": 5000}),
        json!({"pattern": "(?i)kelvin|\\bk\\b", "max_matches": 5000}),
        json!({"pattern": "K", "case_insensitive": true, "max_matches": 5000}),
        json!({"pattern": r"fn \w+_unchecked\(", "context": 2, "max_matches": 5000}),
        json!({"pattern": "compatibility_hash|ServerConfig|absent_word", "max_matches": 5000}),
        json!({"pattern": r"^\s*pub struct \w+Config", "before": 1, "after": 3, "max_matches": 5000}),
        json!({"pattern": "capitals$", "max_matches": 5000}),
        json!({"pattern": r"\d{3}", "max_matches": 300}),
        json!({"pattern": "unreachable", "fixed_strings": true, "max_matches": 7}),
        json!({"pattern": "line", "max_matches": 5000, "glob": "d1/**"}),
        json!({"pattern": "nothing", "max_matches": 5000}),
    ];
    for input in &inputs {
        let filtered = grep_text(&sb, input);
        let plain = grep_text(&sb, &unfiltered(input));
        assert_eq!(filtered, plain, "for {input}");
        assert!(
            !filtered.starts_with("no matches (0"),
            "{input}: {filtered}"
        );
    }
}

fn hostile_call(input: Value) -> ToolOutcome {
    let plugin = hostile();
    let sb = Sandbox::new();
    sb.write("notes.txt", "a note\n");
    sb.write("sub/inner.txt", "inner\n");
    let caps = &plugin.meta.manifest.capabilities;
    let grant: Grant = grant_from_declared(caps, &sb.ws(), WriteMode::ReadOnly).0;
    call_plugin(&plugin, "prefilter_read", input, &grant, &Limits::default()).outcome
}

#[track_caller]
fn text_of(outcome: &ToolOutcome) -> &str {
    match outcome {
        ToolOutcome::Success(out) => &out.text,
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn prefilter_refuses_directories_forged_handles_and_needle_floods() {
    // What a well-behaved call gets.
    let found = hostile_call(json!({"path": "notes.txt", "needles": ["note"]}));
    assert_eq!(text_of(&found), "bytes 7 end true");
    let absent = hostile_call(json!({"path": "notes.txt", "needles": ["zzz"]}));
    assert_eq!(text_of(&absent), "absent 7 end true nul false");
    // A directory is refused as `read` refuses it.
    let dir = hostile_call(json!({"path": "sub", "needles": ["inner"]}));
    assert_eq!(text_of(&dir), "error read bad-descriptor");
    // Too many needles, an empty one, one too long: a typed refusal.
    for needles in [
        json!({"needles": ["ab"], "repeat": 65}),
        json!({"needles": ["ab"], "repeat": 100_000}),
        json!({"needles": [""]}),
        json!({"needles": ["x".repeat(257)]}),
        json!({"needles": []}),
    ] {
        let mut input = json!({"path": "notes.txt"});
        input
            .as_object_mut()
            .unwrap()
            .extend(needles.as_object().unwrap().clone());
        let refused = hostile_call(input.clone());
        assert_eq!(text_of(&refused), "error bad-needles", "{input}");
    }
    // A handle the guest never opened never reaches the host: the call
    // fails, and the next one is served.
    let forged = hostile_call(json!({"path": "notes.txt", "needles": ["note"], "forged": true}));
    assert!(!matches!(forged, ToolOutcome::Success(_)), "{forged:?}");
    let again = hostile_call(json!({"path": "notes.txt", "needles": ["note"]}));
    assert_eq!(text_of(&again), "bytes 7 end true");
}

/// A file read in several host reads is gathered in one buffer of its
/// size: growing it by doubling held about three copies of a 45 MiB file at
/// once, more than an 80 MiB memory limit, with or without the prefilter.
#[test]
fn a_large_file_is_searched_within_a_memory_limit_near_its_size() {
    let sb = Sandbox::new();
    let mut text = "needle on the first line\n".to_string();
    text.push_str(&format!("{}\n", "x".repeat(99)).repeat(45 * 1024 * 1024 / 100));
    text.push_str("needle on the last line\n");
    sb.write("big.txt", &text);
    let limits = Limits {
        memory_bytes: 80 << 20,
        ..Limits::default()
    };
    let literal = json!({"pattern": "needle", "fixed_strings": true});
    for input in [unfiltered(&literal), literal] {
        let r = call_raw(
            "grep",
            &input.to_string(),
            &sb.ws(),
            WriteMode::ReadOnly,
            limits.clone(),
        );
        let text = &ok(&r).text;
        assert!(
            text.contains("big.txt:1:needle on the first line"),
            "{input}: {text}"
        );
        assert!(text.contains("needle on the last line"), "{input}: {text}");
    }
}

/// A binary file is known by its first read, which is all that is read of
/// it: one over the 64 MiB size limit counts as binary, not as too large,
/// with or without the prefilter and whether or not its head holds the
/// needle.
#[test]
fn a_binary_file_is_judged_by_its_first_read_whatever_its_size() {
    let sb = Sandbox::new();
    sb.write("text.txt", "a needle here\n");
    sb.write("needle_head.bin", b"\0needle\n");
    for name in ["needle_head.bin", "all_nul.bin"] {
        // Sparse: 65 MiB of NULs after what was written, no disk used.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(sb.ws().join(name))
            .unwrap();
        file.set_len(65 << 20).unwrap();
    }
    let literal = json!({"pattern": "needle", "fixed_strings": true});
    for input in [unfiltered(&literal), literal] {
        let text = grep_text(&sb, &input);
        assert_eq!(
            text, "text.txt:1:a needle here\n1 match in 1 file; skipped 2 binary files\n",
            "{input}"
        );
    }
}
