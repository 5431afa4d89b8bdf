//! The write quota at the WASI boundary: whichever way a plugin writes
//! (descriptor writes, a write past the end, output streams, appends,
//! zeroes, splices, growing a file, std through wasi-libc), a call never
//! puts more bytes into its directories than its quota, its workers
//! included. The write that does not fit is cut or refused with `quota`,
//! and the outcome says the quota stopped the call and how to raise it.

use std::path::Path;

use serde_json::{Value, json};
use warden::base::Limits;
use warden::capability::FsAccess;
use warden::protocol::{ErrorKind, ToolOutcome};
use warden::runtime::CallReport;

use crate::support::*;

/// The quota the tests give a call.
const QUOTA: u64 = 1 << 20;

/// What a hostile plugin tries to write.
const TWO_GIB: u64 = 2 << 30;

/// Every way `write_flood` writes.
const PATHS: &[&str] = &[
    "write",
    "hole",
    "stream",
    "blocking_stream",
    "append",
    "zeroes",
    "splice",
    "set_size",
    "std",
];

fn quota(bytes: u64) -> Limits {
    Limits {
        write_bytes: bytes,
        ..Limits::default()
    }
}

/// A workspace holding a 64 KiB file to splice from.
fn workspace() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("source.bin", vec![b's'; 64 << 10]);
    sb
}

fn flood(sb: &Sandbox, via: &str, bytes: u64, limits: &Limits) -> CallReport {
    let input = json!({"path": "big.bin", "via": via, "bytes": bytes, "source": "source.bin"});
    let grant = ws_grant(&sb.ws(), FsAccess::ReadWrite);
    call_plugin(&hostile(), "write_flood", input, &grant, limits)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[test]
fn no_write_path_puts_more_than_the_quota_on_disk() {
    for via in PATHS {
        let sb = workspace();
        let r = flood(&sb, via, TWO_GIB, &quota(QUOTA));
        let on_disk = size(&sb.ws().join("big.bin"));
        // The exact bound: each write reserves its bytes before it is made,
        // so nothing passes the quota, not even the write in flight.
        assert!(on_disk <= QUOTA, "{via}: {on_disk} bytes on disk");
        if *via == "hole" {
            assert_eq!(
                on_disk, 0,
                "the hole alone passes the quota: nothing is written"
            );
        } else {
            assert_eq!(
                on_disk, QUOTA,
                "{via}: writes are cut at the quota, not before"
            );
        }
        let message = outcome_err(&r.outcome, ErrorKind::LimitExceeded);
        assert!(
            message.contains("write quota of 1048576 bytes (limit write-bytes)")
                && message.contains("--limit write-bytes=N"),
            "{via}: {message}"
        );
        // The guest was told `quota`. wasi-libc turns every stream error
        // into `EIO`, so std only learns that the write failed.
        let told = if *via == "std" { "Std: " } else { ": quota]" };
        assert!(message.contains(told), "{via}: {message}");
    }
}

#[test]
fn writing_exactly_the_quota_succeeds() {
    for via in PATHS {
        let sb = workspace();
        let r = flood(&sb, via, QUOTA, &quota(QUOTA));
        match &r.outcome {
            ToolOutcome::Success(out) => {
                assert!(out.text.starts_with("wrote"), "{via}: {}", out.text);
            }
            other => panic!("{via}: {other:?}"),
        }
        assert_eq!(size(&sb.ws().join("big.bin")), QUOTA, "{via}");
    }
}

#[test]
fn workers_share_their_call_s_quota() {
    let sb = workspace();
    let tasks: Vec<Value> = ["write", "stream", "append", "std"]
        .iter()
        .enumerate()
        .map(|(i, via)| json!({"op": "flood", "path": format!("w{i}.bin"), "via": via, "bytes": TWO_GIB}))
        .collect();
    let grant = ws_grant(&sb.ws(), FsAccess::ReadWrite);
    let r = call_plugin(
        &hostile(),
        "fan_out",
        json!({"tasks": tasks}),
        &grant,
        &quota(QUOTA),
    );
    let written: u64 = (0..4)
        .map(|i| size(&sb.ws().join(format!("w{i}.bin"))))
        .sum();
    assert!(written <= QUOTA, "the workers wrote {written} bytes in all");
    assert_eq!(r.workers, 4);
    let message = outcome_err(&r.outcome, ErrorKind::LimitExceeded);
    assert!(
        message.contains("write quota of 1048576 bytes"),
        "{message}"
    );
}

#[test]
fn the_cli_sets_the_quota_and_the_outcome_names_it() {
    let home = home_with_installed("warden-quota-", warden::test_plugins::HOSTILE);
    let sb = workspace();
    let ws = sb.ws().display().to_string();
    let input = json!({"path": "big.bin", "via": "std", "bytes": TWO_GIB}).to_string();
    let (code, out, err) = cli(
        &home,
        &[
            "tool",
            "call",
            "write_flood",
            "-w",
            &ws,
            "--policy",
            "workspace-write",
            "--json",
            "--limit",
            "write-bytes=65536",
            "--input",
            &input,
        ],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["outcome"]["kind"], "limit_exceeded", "{doc}");
    let message = doc["outcome"]["message"].as_str().unwrap();
    assert!(message.contains("write quota of 65536 bytes"), "{message}");
    assert_eq!(size(&sb.ws().join("big.bin")), 65536);
}
