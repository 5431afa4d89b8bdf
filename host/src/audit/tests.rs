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

#[test]
fn an_untouched_log_verifies() {
    let (_d, path) = log_with(5);
    let v = verify(&std::fs::read(&path).unwrap());
    assert_eq!(v.valid, 5);
    assert_eq!(v.broken, None);
    assert!(!v.torn_tail);
}

#[test]
fn an_edited_record_is_named() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l[2] = l[2].replace("p2", "p9");
    write_lines(&path, &l);
    let v = verify(&std::fs::read(&path).unwrap());
    assert_eq!(v.valid, 3);
    let b = v.broken.unwrap();
    assert_eq!(b.line, 4, "the record after the edit no longer follows it");
    assert!(b.reason.contains("changed"), "{}", b.reason);
}

#[test]
fn a_deleted_record_is_named() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l.remove(1);
    write_lines(&path, &l);
    let b = verify(&std::fs::read(&path).unwrap()).broken.unwrap();
    assert_eq!((b.line, b.seq), (2, Some(3)));
    assert!(b.reason.contains("deleted"), "{}", b.reason);
}

#[test]
fn reordered_records_are_named() {
    let (_d, path) = log_with(5);
    let mut l = lines(&path);
    l.swap(1, 2);
    write_lines(&path, &l);
    let b = verify(&std::fs::read(&path).unwrap()).broken.unwrap();
    assert_eq!((b.line, b.seq), (2, Some(3)));
}

#[test]
fn a_torn_tail_is_cut_and_the_chain_goes_on() {
    let (_d, path) = log_with(3);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"seq\":4,\"time\":\"20");
    std::fs::write(&path, &bytes).unwrap();
    let v = verify(&bytes);
    assert_eq!((v.valid, v.torn_tail, v.broken.clone()), (3, true, None));

    let log = AuditLog::open(&path).unwrap();
    log.append(event(3)).unwrap();
    log.flush().unwrap();
    let v = verify(&std::fs::read(&path).unwrap());
    assert_eq!((v.valid, v.torn_tail, v.broken), (4, false, None));
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
    let v = verify(&std::fs::read(&path).unwrap());
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
    let v = verify(&std::fs::read(&path).unwrap());
    assert_eq!((v.valid, v.broken), (100, None));
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
    let secrets = ["sk-live-123".to_string()];
    log.record_call(
        &result,
        r#"{"path":"a","key":"sk-live-123"}"#,
        Some("s1"),
        &secrets,
    )
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
}
