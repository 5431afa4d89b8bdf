use super::*;

fn imports(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn declared(fs: FsNeed, network: &[&str]) -> DeclaredCapabilities {
    DeclaredCapabilities {
        filesystem: fs,
        network: network.iter().map(|s| s.parse().unwrap()).collect(),
        processes: false,
        interaction: false,
        memory: false,
    }
}

fn codes(f: &[Finding]) -> Vec<(&'static str, Severity)> {
    f.iter().map(|f| (f.code, f.severity)).collect()
}

#[test]
fn reach_is_read_from_imports() {
    let r = Reach::of(&imports(&[
        "wasi:filesystem/types@0.2.6",
        "wasi:http/outgoing-handler@0.2.6",
        "wasi:clocks/monotonic-clock@0.2.6",
        "wasi:cli/stdout@0.2.6",
        "wasi:cli/exit@0.2.6",
        "wasi:random/random@0.2.6",
        "warden:tool/host@0.1.0",
        "evil:thing/x",
    ]));
    assert!(r.filesystem && r.http && !r.sockets && !r.environment);
    assert_eq!(r.baseline, ["clocks", "exit", "random", "stdio"]);
    assert_eq!(r.unknown, ["evil:thing/x"]);
}

#[test]
fn importing_more_than_declared_warns_declaring_more_notes() {
    let r = Reach::of(&imports(&[
        "wasi:sockets/tcp@0.2.6",
        "wasi:http/outgoing-handler@0.2.6",
    ]));
    assert_eq!(
        codes(&findings(&declared(FsNeed::Read, &[]), &r)),
        [
            ("undeclared-http", Severity::Warning),
            ("raw-sockets", Severity::Warning),
            ("unused-filesystem", Severity::Note),
        ]
    );
    let fs = Reach::of(&imports(&["wasi:filesystem/preopens@0.2.6"]));
    assert_eq!(
        codes(&findings(
            &declared(FsNeed::None, &["https://a.example:443"]),
            &fs
        )),
        [
            ("undeclared-filesystem", Severity::Warning),
            ("unused-network", Severity::Note),
        ]
    );
    assert!(findings(&declared(FsNeed::ReadWrite, &[]), &fs).is_empty());
}
