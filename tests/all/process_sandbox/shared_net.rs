//! The one empty network namespace confined processes share: it is not
//! the host's, shows none of the host's sockets, and processes of
//! concurrent calls cannot reach each other's unix sockets through it; as
//! root and as an unprivileged user. (That it holds only a loopback and no
//! socket is checked from the host side, in `shared_net`'s unit test: the
//! child's fresh `/proc` is unreadable under Landlock.)

use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::Path;
use std::time::{Duration, Instant};

use warden::capability::FsAccess;
use warden::capability::process::ProcessGrant;

use super::{Sandbox, rerun, sh, stderr, stdout};

/// Two commands in a row are in one network namespace, not the host's.
fn namespaces_seen(grant: &ProcessGrant) {
    let script = "readlink /proc/self/ns/net";
    let (first, second) = (sh(grant, script), sh(grant, script));
    let (first, second) = (stdout(&first), stdout(&second));
    let host = std::fs::read_link("/proc/self/ns/net").unwrap();
    assert!(first.starts_with("net:["), "{first}");
    assert_ne!(first.trim(), host.to_str().unwrap(), "the host's namespace");
    assert_eq!(first, second, "each command got a namespace of its own");
}

#[test]
fn commands_share_one_empty_network_namespace_that_is_not_the_hosts() {
    let sb = Sandbox::new();
    namespaces_seen(&sb.grant(FsAccess::ReadWrite));
}

#[test]
fn the_shared_network_namespace_works_for_an_unprivileged_host() {
    // Under /tmp: `nobody` must reach the workspace.
    let sb = Sandbox::under_tmp();
    let perms = std::fs::Permissions::from_mode(0o777);
    std::fs::set_permissions(sb.root.path(), perms.clone()).unwrap();
    std::fs::set_permissions(&sb.workspace, perms).unwrap();
    rerun(
        "process_sandbox::shared_net::child_shared_namespace",
        &[
            ("WARDEN_TEST_CHILD", "1"),
            ("WARDEN_TEST_WORKSPACE", sb.workspace.to_str().unwrap()),
        ],
        true,
    );
}

#[test]
#[ignore = "run by the_shared_network_namespace_works_for_an_unprivileged_host"]
fn child_shared_namespace() {
    let Some(ws) = std::env::var_os("WARDEN_TEST_WORKSPACE") else {
        return;
    };
    assert!(!rustix::process::geteuid().is_root());
    namespaces_seen(&ProcessGrant::new(ws, FsAccess::ReadWrite).unwrap());
}

#[test]
fn the_hosts_sockets_are_not_visible_in_proc_net() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = format!(":{:04X}", tcp.local_addr().unwrap().port());
    let name = format!("warden-host-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _abstract = UnixListener::bind_addr(&addr).unwrap();
    let path = sb.root.path().join("host.sock");
    let _named = UnixListener::bind(&path).unwrap();
    let tables = "/proc/net/tcp /proc/net/tcp6 /proc/net/unix";
    // The host's own tables show all three.
    let host: String = tables
        .split(' ')
        .map(|t| std::fs::read_to_string(t.replace("/proc/net", "/proc/self/net")).unwrap())
        .collect();
    for seen in [&port, &name, &path.display().to_string()] {
        assert!(
            host.contains(seen.as_str()),
            "{seen} not in the host's tables"
        );
    }
    // Today Landlock keeps the child's fresh `/proc` unreadable; should it
    // ever be readable, the namespace still shows none of these.
    let r = sh(&grant, &format!("cat {tables}"));
    let child = stdout(&r);
    for seen in [&port, &name, &path.display().to_string()] {
        assert!(!child.contains(seen.as_str()), "{seen} seen: {child}");
    }
}

/// The script of the command that listens: on an abstract socket and on a
/// socket in its private `/tmp`, then reports every connection it accepts
/// until `done` appears in the workspace.
const LISTENER: &str = r#"
import os, socket, sys, time
name = sys.argv[1]
a = socket.socket(socket.AF_UNIX); a.bind("\0" + name); a.listen(8); a.setblocking(False)
p = socket.socket(socket.AF_UNIX); p.bind("/tmp/l.sock"); p.listen(8); p.setblocking(False)
own = socket.socket(socket.AF_UNIX); own.connect("\0" + name); a.accept()[0].close()
print("own-connection-ok", flush=True)
open("ready", "w").close()
end = time.time() + 15
while not os.path.exists("done") and time.time() < end:
    for s in (a, p):
        try:
            s.accept(); print("accepted", flush=True)
        except BlockingIOError:
            pass
    time.sleep(0.01)
"#;

/// The script of the command that tries to reach the listener's sockets.
const CLIENT: &str = r#"
import socket, sys
for what, addr in (("abstract", "\0" + sys.argv[1]), ("path", "/tmp/l.sock")):
    try:
        socket.socket(socket.AF_UNIX).connect(addr); print(what, "reached")
    except OSError as e:
        print(what, "refused", e.errno)
"#;

#[test]
fn concurrent_commands_cannot_reach_each_others_unix_sockets() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    std::fs::write(sb.workspace.join("listener.py"), LISTENER).unwrap();
    std::fs::write(sb.workspace.join("client.py"), CLIENT).unwrap();
    let name = format!("warden-call-{}", std::process::id());
    let listener = {
        let (grant, name) = (grant.clone(), name.clone());
        std::thread::spawn(move || sh(&grant, &format!("/usr/bin/python3 listener.py {name}")))
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !sb.workspace.join("ready").exists() {
        assert!(Instant::now() < deadline, "the listener never got ready");
        std::thread::sleep(Duration::from_millis(10));
    }
    let client = sh(&grant, &format!("/usr/bin/python3 client.py {name}"));
    std::fs::write(sb.workspace.join("done"), "").unwrap();
    let listener = listener.join().unwrap();
    let (heard, tried) = (stdout(&listener), stdout(&client));
    assert_eq!(heard, "own-connection-ok\n", "{}", stderr(&listener));
    assert!(
        tried.contains("abstract refused"),
        "{tried}{}",
        stderr(&client)
    );
    assert!(tried.contains("path refused"), "{tried}{}", stderr(&client));
    assert!(!Path::new("/tmp/l.sock").exists());
}
