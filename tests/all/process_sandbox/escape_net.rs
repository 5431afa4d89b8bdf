//! Network escapes against a loopback listener the test owns: every client
//! fails, and the listener sees no connection.

use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use warden::capability::FsAccess;

use super::{Sandbox, sh, stderr};

/// A listener on 127.0.0.1 counting the connections it accepts, for as
/// long as the returned guard lives.
fn listener() -> (u16, Arc<AtomicUsize>, Arc<std::sync::atomic::AtomicBool>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (c, s) = (count.clone(), stop.clone());
    std::thread::spawn(move || {
        while !s.load(Ordering::SeqCst) {
            if l.accept().is_ok() {
                c.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
    (port, count, stop)
}

#[test]
fn curl_nc_dev_tcp_python_and_name_lookups_reach_nothing() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let (port, count, stop) = listener();
    // The listener works from the host.
    drop(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(count.load(Ordering::SeqCst), 1);

    let mut attempts = vec![
        format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        format!(
            "/usr/bin/python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\""
        ),
        format!("/usr/bin/python3 -c \"import socket; s=socket.socket(socket.AF_INET6); s.connect(('::1', {port}))\""),
        "getent hosts localhost.invalid example.com".to_string(),
        "/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 53))\"".to_string(),
        "/usr/bin/python3 -c \"import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)\"".to_string(),
    ];
    if Path::new("/usr/bin/curl").exists() {
        attempts.push(format!("curl -sS -m 3 http://127.0.0.1:{port}/"));
    }
    for nc in ["/usr/bin/nc", "/bin/nc"] {
        if Path::new(nc).exists() {
            attempts.push(format!("echo hi | {nc} -w 2 127.0.0.1 {port}"));
        }
    }
    for attempt in &attempts {
        let r = sh(&grant, attempt);
        assert!(!r.exit.success(), "`{attempt}` succeeded: {}", stderr(&r));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "the sandbox reached the listener"
    );
}

#[test]
fn unix_sockets_inside_the_sandbox_still_work() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(
        &grant,
        "/usr/bin/python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2).decode())\"",
    );
    assert_eq!(super::stdout(&r), "ok\n", "{}", stderr(&r));
}
