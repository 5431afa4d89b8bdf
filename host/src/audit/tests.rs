use super::*;

fn event(n: u64) -> AuditEvent {
    AuditEvent::PluginRemoved {
        name: format!("p{n}"),
        version: None,
        sha256: "00".into(),
    }
}

fn log_with(n: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    for i in 0..n {
        log.append(event(i)).unwrap();
    }
    log.flush().unwrap();
    (dir, path)
}

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn write_lines(path: &std::path::Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Verify the log at `path` (if there is one) against its anchor.
fn check(path: &std::path::Path) -> Verification {
    let log = std::fs::read(path).ok();
    let anchor = read_anchor(&anchor_path(path)).unwrap();
    verify(log.as_deref(), anchor.as_ref())
}

#[test]
fn an_untouched_log_verifies() {
    let (_d, path) = log_with(5);
    let v = check(&path);
    assert_eq!(v.valid, 5);
    assert_eq!(v.broken, None);
    assert!(!v.torn_tail);
    assert_eq!(v.anchor, AnchorCheck::Matches { records: 5 });
    assert!(v.intact());
}

#[test]
fn an_edited_record_is_named() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l[2] = l[2].replace("p2", "p9");
    write_lines(&path, &l);
    let v = check(&path);
    assert_eq!(v.valid, 2);
    let b = v.broken.unwrap();
    assert_eq!((b.line, b.seq), (3, Some(3)), "the edited line itself");
    assert!(b.reason.contains("changed"), "{}", b.reason);
}

#[test]
fn a_deleted_record_is_named() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l.remove(1);
    write_lines(&path, &l);
    let b = check(&path).broken.unwrap();
    assert_eq!((b.line, b.seq), (2, Some(3)));
    assert!(b.reason.contains("deleted"), "{}", b.reason);
}

#[test]
fn reordered_records_are_named() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l.swap(1, 2);
    write_lines(&path, &l);
    let b = check(&path).broken.unwrap();
    assert_eq!((b.line, b.seq), (2, Some(3)));
}

#[test]
fn a_torn_tail_is_cut_and_the_chain_goes_on() {
    let (_d, path) = log_with(3);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"seq\":4,\"time\":\"20");
    std::fs::write(&path, &bytes).unwrap();
    let v = check(&path);
    assert_eq!((v.valid, v.torn_tail, v.broken.clone()), (3, true, None));
    assert_eq!(v.anchor, AnchorCheck::Matches { records: 3 });

    let log = AuditLog::open(&path).unwrap();
    log.append(event(3)).unwrap();
    log.flush().unwrap();
    let v = check(&path);
    assert_eq!((v.valid, v.torn_tail, v.broken), (4, false, None));
    assert_eq!(v.anchor, AnchorCheck::Matches { records: 4 });
}

#[test]
fn a_last_record_or_torn_tail_longer_than_the_first_read_is_found() {
    let (_d, path) = log_with(2);
    let long = AuditEvent::PluginRemoved {
        name: "n".repeat(20_000),
        version: None,
        sha256: "00".into(),
    };
    // Each log starts with no cached head, as a new process does.
    let log = AuditLog::open(&path).unwrap();
    log.append(long).unwrap();
    log.flush().unwrap();
    drop(log);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(format!("{{\"seq\":4,\"time\":\"{}", "t".repeat(30_000)).as_bytes());
    std::fs::write(&path, &bytes).unwrap();

    let log = AuditLog::open(&path).unwrap();
    log.append(event(3)).unwrap();
    log.flush().unwrap();
    let v = check(&path);
    assert_eq!((v.valid, v.torn_tail, v.broken), (4, false, None));
}

#[test]
fn concurrent_writers_never_interleave() {
    let (_d, path) = log_with(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            let path = path.clone();
            s.spawn(move || {
                // Separate handles, as separate processes would have.
                let log = AuditLog::open(&path).unwrap();
                for i in 0..25 {
                    log.append(event(i)).unwrap();
                    if i % 5 == 0 {
                        log.flush().unwrap();
                    }
                }
            });
        }
    });
    let v = check(&path);
    assert_eq!((v.valid, v.broken), (100, None));
    assert_eq!(v.anchor, AnchorCheck::Matches { records: 100 });
}

#[test]
fn a_queued_call_is_recorded_in_full_without_its_output() {
    use crate::pipeline::{CallResult, Stage};
    use crate::protocol::{ToolOutcome, ToolOutput};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    let output = "x".repeat(5000) + "sk-live-123";
    let result = CallResult {
        call_id: "c1".into(),
        tool: "read_file".into(),
        plugin: Some("fs".into()),
        origin: Some(crate::plugin::PluginOrigin::Uninstalled {
            path: "/dev/fs.wasm".into(),
            sha256: "ab".repeat(32),
        }),
        stage: Stage::Executed,
        outcome: ToolOutcome::Success(ToolOutput {
            text: output,
            structured: None,
            truncated: false,
        }),
        grant: None,
        decision: None,
        approval: None,
        grant_cuts: Vec::new(),
        report: None,
    };
    crate::base::secrets::register("sk-live-123");
    log.record_call(&result, r#"{"path":"a","key":"sk-live-123"}"#, Some("s1"))
        .unwrap();
    log.flush().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains("sk-live-123") && !text.contains("xxxx"),
        "{text}"
    );
    let record: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let call = &record["event"];
    assert_eq!(call["type"], "tool_call");
    assert_eq!(call["call_id"], "c1");
    assert_eq!(call["session_id"], "s1");
    assert_eq!(call["outcome"], "success");
    assert_eq!(call["output_bytes"], 5011);
    assert_eq!(call["arguments"]["path"], "a");
    assert_eq!(call["origin"]["type"], "uninstalled");
    assert_eq!(call["origin"]["path"], "/dev/fs.wasm");
}

#[test]
fn a_truncated_tail_is_found_against_the_anchor() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l.truncate(3);
    write_lines(&path, &l);
    let v = check(&path);
    assert_eq!(
        (v.valid, v.broken.clone()),
        (3, None),
        "the chain alone holds"
    );
    assert_eq!(
        v.anchor,
        AnchorCheck::Truncated {
            anchored: 5,
            records: 3
        }
    );
    assert!(!v.intact());
}

#[test]
fn an_edited_last_record_is_named_by_the_anchor() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l[4] = l[4].replace("p4", "p9");
    write_lines(&path, &l);
    let v = check(&path);
    assert_eq!((v.valid, v.broken.clone()), (5, None));
    assert_eq!(v.anchor, AnchorCheck::Rewritten { line: 5 });
    assert!(!v.intact());
}

#[test]
fn a_deleted_log_is_found_by_its_anchor() {
    let (_d, path) = log_with(2);
    std::fs::remove_file(&path).unwrap();
    let v = check(&path);
    assert_eq!(v.anchor, AnchorCheck::LogMissing { anchored: 2 });
    assert!(!v.intact());
}

#[test]
fn an_anchor_behind_the_log_is_no_break() {
    let (_d, path) = log_with(3);
    let anchor = read_anchor(&anchor_path(&path)).unwrap().unwrap();
    let log = AuditLog::open(&path).unwrap();
    log.append(event(3)).unwrap();
    log.flush().unwrap();
    drop(log);
    // As a crash between the log's sync and the anchor's update leaves it.
    std::fs::write(anchor_path(&path), serde_json::to_vec(&anchor).unwrap()).unwrap();
    let v = check(&path);
    assert_eq!(
        v.anchor,
        AnchorCheck::Behind {
            anchored: 3,
            records: 4
        }
    );
    assert!(v.intact());
}

#[test]
fn a_log_shorter_than_its_anchor_is_not_written_to() {
    let (_d, path) = log_with(4);
    let mut l = lines(&path);
    l.truncate(2);
    write_lines(&path, &l);
    let err = AuditLog::open(&path).err().unwrap().to_string();
    assert!(
        err.contains("holds 2 records but its anchor says 4"),
        "{err}"
    );
    assert_eq!(
        lines(&path).len(),
        2,
        "nothing was appended to hide the cut"
    );
}

#[test]
fn the_log_and_anchor_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit/audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    log.append(event(0)).unwrap();
    log.flush().unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&anchor_path(&path)), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
}

#[test]
fn after_a_record_fails_to_be_written_every_reservation_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    log.append(event(0)).unwrap();
    log.flush().unwrap();
    assert!(log.reserve(RECORD_ROOM).is_ok());
    // The anchor can no longer be replaced: the next commit fails.
    let anchor = anchor_path(&path);
    std::fs::remove_file(&anchor).unwrap();
    std::fs::create_dir(&anchor).unwrap();
    std::fs::write(anchor.join("keep"), "x").unwrap();
    log.append(event(1)).unwrap();
    // The writer's failure reaches the next reservation, not only the next
    // record, and stays: nothing runs unrecorded after it.
    let mut tries = 0;
    while log.reserve(RECORD_ROOM).is_ok() {
        tries += 1;
        assert!(tries < 2000, "the failed write never reached a reservation");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for _ in 0..3 {
        let err = log.reserve(RECORD_ROOM).unwrap_err().to_string();
        assert!(err.contains("no call runs until the log"), "{err}");
    }
    // Even once the cause is gone: the chain's head is not trusted again.
    std::fs::remove_dir_all(&anchor).unwrap();
    assert!(log.reserve(RECORD_ROOM).is_err());
}

#[test]
fn room_is_reserved_ahead_so_the_next_calls_allocate_nothing() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    let blocks = || std::fs::metadata(&path).unwrap().blocks();
    let opened = blocks();
    assert!(
        opened * 512 >= RECORD_ROOM,
        "nothing reserved: {opened} blocks"
    );
    for i in 0..10 {
        log.reserve(RECORD_ROOM + 4096).unwrap();
        log.append(event(i)).unwrap();
        log.flush().unwrap();
    }
    // Each reservation found its room among the blocks the log held.
    assert_eq!(blocks(), opened);
}

/// The anchor file's inode, length and anchor.
fn anchor_state(path: &std::path::Path) -> (u64, u64, Anchor) {
    use std::os::unix::fs::MetadataExt;
    let anchor = anchor_path(path);
    let meta = std::fs::symlink_metadata(&anchor).unwrap();
    (
        meta.ino(),
        meta.len(),
        read_anchor(&anchor).unwrap().unwrap(),
    )
}

#[test]
fn the_anchor_is_moved_in_place_with_no_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    log.append(event(0)).unwrap();
    log.flush().unwrap();
    let (ino, len, first) = anchor_state(&path);
    assert_eq!(len, ANCHOR_BYTES as u64);
    assert_eq!(first.records, 1);
    log.append(event(1)).unwrap();
    log.flush().unwrap();
    let (ino_after, len_after, second) = anchor_state(&path);
    assert_eq!(
        (ino_after, len_after),
        (ino, len),
        "the anchor was replaced"
    );
    assert_eq!(second.records, 2);
    drop(log);
    assert!(check(&path).intact());
}

#[test]
fn an_anchor_with_a_second_name_is_replaced_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    log.append(event(0)).unwrap();
    log.flush().unwrap();
    let other = dir.path().join("other.json");
    std::fs::hard_link(anchor_path(&path), &other).unwrap();
    let before = std::fs::read(&other).unwrap();
    log.append(event(1)).unwrap();
    log.flush().unwrap();
    assert_eq!(std::fs::read(&other).unwrap(), before);
    assert_eq!(anchor_state(&path).2.records, 2);
}

#[test]
fn a_linked_anchor_is_replaced_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    log.append(event(0)).unwrap();
    log.flush().unwrap();
    // A copy of the anchor elsewhere, and the anchor a link to it.
    let elsewhere = dir.path().join("elsewhere.json");
    std::fs::copy(anchor_path(&path), &elsewhere).unwrap();
    let before = std::fs::read(&elsewhere).unwrap();
    std::fs::remove_file(anchor_path(&path)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, anchor_path(&path)).unwrap();
    log.append(event(1)).unwrap();
    log.flush().unwrap();
    assert_eq!(std::fs::read(&elsewhere).unwrap(), before);
    let meta = std::fs::symlink_metadata(anchor_path(&path)).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(anchor_state(&path).2.records, 2);
}
