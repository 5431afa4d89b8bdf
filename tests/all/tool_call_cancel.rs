//! Ctrl-C on `warden tool call`, on a real terminal (a pty): the running
//! guest is cancelled, the command exits 4, and the call's audit record
//! says `cancelled`.

use std::process::Command;
use std::time::{Duration, Instant};

use rexpect::process::WaitStatus;
use rexpect::session::spawn_command;

use crate::support::*;

#[test]
fn ctrl_c_on_tool_call_cancels_the_guest_and_records_it() {
    let home = fresh_home();
    let (code, _, err) = cli(
        home.path(),
        &["plugin", "install", warden::test_plugins::HOSTILE],
    );
    assert_eq!(code, Some(0), "{err}");
    let ws = tempfile::tempdir().unwrap();
    let policy = crate::agent::auto_policy(ws.path());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.env("WARDEN_HOME", home.path())
        .env_remove("RUST_LOG")
        .args(["tool", "call", "spin", "--timeout-ms", "25000", "--policy"])
        .arg(&policy)
        .arg("-w")
        .arg(ws.path());
    let mut p = spawn_command(cmd, Some(20_000)).unwrap();
    // Long enough for the guest to be spinning.
    std::thread::sleep(Duration::from_millis(1500));
    let pressed = Instant::now();
    p.send_control('c').unwrap();
    let rest = p.exp_eof().unwrap();
    let code = match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("warden did not exit normally: {other:?}\n{rest}"),
    };
    assert_eq!(code, 4, "{rest}");
    assert!(rest.contains("spin cancelled"), "{rest}");
    assert!(
        pressed.elapsed() < Duration::from_secs(10),
        "it waited for the deadline: {:?}",
        pressed.elapsed()
    );
    let (calls, shown) = audited_calls(home.path(), "spin");
    assert_eq!(calls.len(), 1, "{shown}");
    assert_eq!(calls[0]["outcome"], "cancelled", "{shown}");
}
