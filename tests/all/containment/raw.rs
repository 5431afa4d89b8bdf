//! Raw attempts through the hostile fixture, which hands guest paths
//! straight to `std::fs`: the WASI layer alone must refuse.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use warden::capability::{PathGuard, ProtectedReads};

use super::*;

#[test]
fn raw_reads_outside_are_refused() {
    let sb = populated();
    let ro = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let canary = sb.canary().display().to_string();
    use ErrorKind::{NotFound, PermissionDenied};
    for (tool, path, kind) in [
        (
            "read_path",
            "/workspace/../outside/canary.txt",
            PermissionDenied,
        ),
        (
            "read_path",
            "/workspace/sub/../../outside/canary.txt",
            PermissionDenied,
        ),
        (
            "read_path",
            "/workspace/./../outside/canary.txt",
            PermissionDenied,
        ),
        (
            "read_path",
            "//workspace/../outside/canary.txt",
            PermissionDenied,
        ),
        (
            "read_path",
            "workspace/../outside/canary.txt",
            PermissionDenied,
        ),
        ("read_path", "../outside/canary.txt", NotFound),
        ("read_path", "/etc/passwd", NotFound),
        ("read_path", &canary, NotFound),
        ("list", "/", NotFound),
        ("list", "/workspace/..", PermissionDenied),
        ("list", "/workspace/../outside", PermissionDenied),
    ] {
        let r = raw(tool, json!({"path": path}), &ro);
        raw_refused(&r, kind);
    }
    // Positive control: the same tools do read inside.
    let r = raw("read_path", json!({"path": "/workspace/sub/b.txt"}), &ro);
    assert_eq!(ok_report(&r), "B\n");
    let r = raw("list", json!({"path": "/workspace"}), &ro);
    assert_eq!(ok_report(&r), "a.txt\nsub");
    sb.assert_canaries_intact();
}

/// The host lists a directory through the guest's own descriptor, from its
/// start each time; only the preopen (a path-only handle) is reopened.
#[test]
fn a_descriptor_listed_twice_lists_every_entry_both_times() {
    let sb = populated();
    // Enough long names that one listing takes several reads of the host's
    // buffer.
    let mut names: Vec<String> = (0..1500)
        .map(|i| format!("{i:04}-{}", "n".repeat(60)))
        .collect();
    for name in &names {
        sb.write(&format!("big/{name}"), "");
    }
    names.sort();
    let ro = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let r = raw("list_twice", json!({"path": ""}), &ro);
    assert_eq!(ok_report(&r), "a.txt\nbig\nsub\n--\na.txt\nbig\nsub");
    let r = raw("list_twice", json!({"path": "big"}), &ro);
    let once = names.join("\n");
    assert_eq!(ok_report(&r), format!("{once}\n--\n{once}"));
    let r = raw("list_twice", json!({"path": "sub"}), &ro);
    assert_eq!(ok_report(&r), "b.txt\n--\nb.txt");
}

#[test]
fn a_read_only_grant_refuses_every_change() {
    let sb = populated();
    let ro = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let before = snapshot(&sb.ws());
    for (tool, input) in [
        (
            "write_path",
            json!({"path": "/workspace/new.txt", "content": "x"}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/a.txt", "content": "x"}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/a.txt", "content": "x", "truncate": false}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/a.txt", "content": "x", "append": true}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/../outside/canary.txt", "content": "x"}),
        ),
        ("open_truncate", json!({"path": "/workspace/a.txt"})),
        (
            "rename",
            json!({"from": "/workspace/a.txt", "to": "/workspace/b.txt"}),
        ),
        (
            "rename",
            json!({"from": "/workspace/a.txt", "to": "/workspace/../x"}),
        ),
        (
            "hard_link",
            json!({"from": "/workspace/a.txt", "to": "/workspace/h.txt"}),
        ),
        (
            "hard_link",
            json!({"from": "/workspace/a.txt", "to": "/workspace/../outside/h"}),
        ),
        (
            "hard_link",
            json!({"from": "/workspace/../outside/canary.txt", "to": "/workspace/h"}),
        ),
        (
            "symlink",
            json!({"target": "a.txt", "link": "/workspace/s"}),
        ),
        (
            "symlink",
            json!({"target": "../outside/canary.txt", "link": "/workspace/s"}),
        ),
        ("remove", json!({"path": "/workspace/a.txt"})),
        ("remove", json!({"path": "/workspace/sub"})),
        ("set_len", json!({"path": "/workspace/a.txt", "len": 0})),
        ("set_len", json!({"path": "/workspace/a.txt", "len": 4096})),
        ("mkdir", json!({"path": "/workspace/d"})),
        ("mkdir", json!({"path": "/workspace/sub/d"})),
    ] {
        let r = raw(tool, input.clone(), &ro);
        raw_refused(&r, ErrorKind::PermissionDenied);
        assert_eq!(
            snapshot(&sb.ws()),
            before,
            "{tool} {input} changed the workspace"
        );
        sb.assert_canaries_intact();
    }
    assert_eq!(sb.read("a.txt"), "A\n");
}

#[test]
fn a_read_write_grant_still_stays_inside() {
    let sb = populated();
    let rw = ws_grant(&sb.ws(), FsAccess::ReadWrite);
    let before = snapshot(&sb.ws());
    for (tool, input) in [
        (
            "rename",
            json!({"from": "/workspace/a.txt", "to": "/workspace/../x"}),
        ),
        (
            "rename",
            json!({"from": "/workspace/a.txt", "to": "/workspace/../outside/canary.txt"}),
        ),
        (
            "rename",
            json!({"from": "/workspace/../outside/canary.txt", "to": "/workspace/stolen"}),
        ),
        (
            "rename",
            json!({"from": "/workspace/sub", "to": "/workspace/../ws-evil/sub"}),
        ),
        (
            "hard_link",
            json!({"from": "/workspace/a.txt", "to": "/workspace/../outside/h"}),
        ),
        (
            "hard_link",
            json!({"from": "/workspace/../outside/canary.txt", "to": "/workspace/h"}),
        ),
        (
            "symlink",
            json!({"target": "a.txt", "link": "/workspace/../outside/l"}),
        ),
        (
            "symlink",
            json!({"target": "/workspace/a.txt", "link": "/workspace/s"}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/../outside/canary.txt", "content": "x"}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/../outside/new.txt", "content": "x"}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/../new.txt", "content": "x"}),
        ),
        (
            "open_truncate",
            json!({"path": "/workspace/../outside/canary.txt"}),
        ),
        (
            "set_len",
            json!({"path": "/workspace/../outside/canary.txt", "len": 0}),
        ),
        (
            "remove",
            json!({"path": "/workspace/../outside/canary.txt"}),
        ),
        ("remove", json!({"path": "/workspace/../ws-evil"})),
        ("remove", json!({"path": "/workspace/.."})),
        ("mkdir", json!({"path": "/workspace/../outside/d"})),
        ("mkdir", json!({"path": "/workspace/../d"})),
    ] {
        let r = raw(tool, input.clone(), &rw);
        raw_refused(&r, ErrorKind::PermissionDenied);
        assert_eq!(
            snapshot(&sb.ws()),
            before,
            "{tool} {input} changed the workspace"
        );
        sb.assert_canaries_intact();
    }

    // Positive controls: the same operations work inside the workspace.
    let r = raw(
        "write_path",
        json!({"path": "/workspace/new.txt", "content": "new"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "wrote 3 bytes");
    assert_eq!(sb.read("new.txt"), "new");
    let r = raw(
        "rename",
        json!({"from": "/workspace/a.txt", "to": "/workspace/sub/a.txt"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "renamed");
    assert!(!sb.exists("a.txt"));
    assert_eq!(sb.read("sub/a.txt"), "A\n");
    let r = raw(
        "hard_link",
        json!({"from": "/workspace/new.txt", "to": "/workspace/h.txt"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "linked");
    let r = raw(
        "symlink",
        json!({"target": "sub/a.txt", "link": "/workspace/s"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "symlinked");
    let r = raw("read_path", json!({"path": "/workspace/s"}), &rw);
    assert_eq!(ok_report(&r), "A\n");
    let r = raw("mkdir", json!({"path": "/workspace/d"}), &rw);
    assert_eq!(ok_report(&r), "created");
    sb.assert_canaries_intact();
}

#[test]
fn nothing_is_inherited_from_the_host_process() {
    let sb = populated();
    let ro = ws_grant(&sb.ws(), FsAccess::ReadOnly);
    let r = raw("read_env", json!({}), &ro);
    let report: Value = serde_json::from_str(ok_report(&r)).unwrap();
    assert_eq!(report["vars"], json!([]), "{report}");
    assert_eq!(report["args"], json!([]), "{report}");
    assert!(
        report["preopens_root_listing"].is_string(),
        "`/` was listable: {report}"
    );
    assert_sealed(ok_report(&r), &sb);
}

#[test]
fn no_filesystem_grant_links_no_filesystem() {
    let sb = populated();
    let none = Grant::none();
    for (tool, input) in [
        ("read_path", json!({"path": "/workspace/a.txt"})),
        (
            "read_path",
            json!({"path": sb.canary().display().to_string()}),
        ),
        (
            "write_path",
            json!({"path": "/workspace/x", "content": "x"}),
        ),
        ("list", json!({"path": "/"})),
    ] {
        let r = raw(tool, input, &none);
        let message = raw_refused(&r, ErrorKind::PermissionDenied);
        assert!(message.contains("wasi:filesystem"), "{message}");
    }
    // The instance itself still runs: only the interface is missing.
    assert_eq!(ok_report(&raw("ok", json!({}), &none)), "ok");
    sb.assert_canaries_intact();
}

#[test]
fn sockets_are_never_linked() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let own = listener.local_addr().unwrap().to_string();
    let sb = Sandbox::new();
    for grant in [Grant::none(), ws_grant(&sb.ws(), FsAccess::ReadWrite)] {
        for addr in ["127.0.0.1:9", own.as_str()] {
            let r = raw("connect", json!({"addr": addr}), &grant);
            let message = raw_refused(&r, ErrorKind::PermissionDenied);
            assert!(message.contains("wasi:sockets"), "{message}");
        }
    }
    assert_eq!(
        listener.accept().map_err(|e| e.kind()).err(),
        Some(std::io::ErrorKind::WouldBlock),
        "a guest connection reached the host"
    );
}

/// A FIFO, a socket and a symlink to the FIFO in the workspace: opening
/// one, for reading or writing, fails at once under every kind of grant. A
/// blocking open of the FIFO would wait for its other end in a system call
/// the call's deadline cannot cut short.
#[test]
fn fifos_and_sockets_are_refused_at_once_never_waited_on() {
    use std::os::unix::net::UnixListener;
    let sb = populated();
    let fifo = sb.ws().join("pipe");
    make_fifo(&fifo);
    sb.symlink("pipe", "via");
    let _socket = UnixListener::bind(sb.ws().join("sock")).unwrap();
    let _compiled = hostile();
    let unreadable = PathGuard::new(vec!["sub/**".into()], ProtectedReads::Refused).unwrap();
    let grants = [
        guarded_grant(&sb.ws(), FsAccess::ReadWrite, None),
        ws_grant(&sb.ws(), FsAccess::ReadWrite),
        guarded_grant(&sb.ws(), FsAccess::ReadWrite, Some(unreadable)),
        ws_grant(&sb.ws(), FsAccess::ReadOnly),
    ];
    let started = Instant::now();
    let _unblock = Unblock::after(Duration::from_secs(10), fifo);
    for grant in &grants {
        for (tool, path) in [
            ("read_path", "pipe"),
            ("read_path", "via"),
            ("read_path", "sock"),
            ("write_path", "pipe"),
            ("write_path", "via"),
        ] {
            let input = json!({"path": format!("/workspace/{path}"), "content": "x"});
            let r = raw(tool, input, grant);
            let message = raw_refused(&r, ErrorKind::Io);
            assert!(
                message.contains("(kind: Unsupported)"),
                "{tool} {path}: {message}"
            );
        }
        let r = raw("read_path", json!({"path": "/workspace/a.txt"}), grant);
        assert_eq!(ok_report(&r), "A\n");
    }
    // Setting times through the symlink (wasmtime would open the FIFO for
    // writing to do it) or on the FIFO itself never opens it.
    for grant in &grants[..3] {
        for path in ["via", "pipe"] {
            let r = raw("touch_at", json!({"path": path}), grant);
            assert_eq!(ok_report(&r), "times set", "{path}");
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    sb.assert_canaries_intact();
}

/// A protected FIFO or socket is refused as protected, and recorded, by
/// its own name and through a symlink alike; where it is not protected
/// against the use, it stays `unsupported`.
#[test]
fn protected_special_files_are_refused_as_protected_through_symlinks_too() {
    use std::os::unix::net::UnixListener;
    use warden::capability::{BoundaryDenial, FsOp};
    let sb = populated();
    let fifo = sb.ws().join("sub/pipe");
    make_fifo(&fifo);
    let _socket = UnixListener::bind(sb.ws().join("sub/sock")).unwrap();
    sb.symlink("sub/pipe", "via_pipe");
    sb.symlink("sub/sock", "via_sock");
    let _compiled = hostile();
    let guard = |reads| PathGuard::new(vec!["sub/**".into()], reads).unwrap();
    let sealed = guarded_grant(
        &sb.ws(),
        FsAccess::ReadWrite,
        Some(guard(ProtectedReads::Refused)),
    );
    let readable = guarded_grant(
        &sb.ws(),
        FsAccess::ReadWrite,
        Some(guard(ProtectedReads::Allowed)),
    );
    let _unblock = Unblock::after(Duration::from_secs(10), fifo);
    for (grant, tool, protected) in [
        (&sealed, "read_path", true),
        (&sealed, "write_path", true),
        (&readable, "write_path", true),
        (&readable, "read_path", false),
    ] {
        for (path, real) in [
            ("sub/pipe", "sub/pipe"),
            ("via_pipe", "sub/pipe"),
            ("sub/sock", "sub/sock"),
            ("via_sock", "sub/sock"),
        ] {
            let input = json!({"path": format!("/workspace/{path}"), "content": "x"});
            let r = raw(tool, input, grant);
            let denial = BoundaryDenial {
                op: FsOp::Open,
                path: real.to_string(),
            };
            if protected {
                raw_refused(&r, ErrorKind::PermissionDenied);
                assert!(
                    r.boundary_denials.contains(&denial),
                    "{tool} {path}: {:?}",
                    r.boundary_denials
                );
            } else {
                let message = raw_refused(&r, ErrorKind::Io);
                assert!(
                    message.contains("(kind: Unsupported)"),
                    "{tool} {path}: {message}"
                );
                assert!(r.boundary_denials.is_empty(), "{:?}", r.boundary_denials);
            }
        }
    }
    sb.assert_canaries_intact();
}

/// Make a FIFO at `path`.
fn make_fifo(path: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// Should an open of a FIFO block after all, this opens it for reading and
/// writing (which never waits, and ends any open waiting on it) every 50 ms
/// from `after` on, until dropped: the test then fails on its time instead
/// of hanging.
struct Unblock(Arc<AtomicBool>);

impl Unblock {
    fn after(after: Duration, fifo: PathBuf) -> Unblock {
        let done = Arc::new(AtomicBool::new(false));
        let finished = done.clone();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            while !finished.load(Ordering::Relaxed) {
                let _ = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&fifo);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Unblock(done)
    }
}

impl Drop for Unblock {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
