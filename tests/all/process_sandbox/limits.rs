//! Resource escapes: fork bombs, daemons that outlive the call, output
//! floods, commands that run past their deadline or their cancellation.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use warden::capability::FsAccess;
use warden::capability::process::{ProcessBound, ProcessGrant, ProcessLimits, StopReason, support};

use super::{Sandbox, alive_with, request, rerun, run, sh, stderr, stdout};

/// A fork bomb whose functions are named `tag` (to find its processes),
/// under a first process that stays up.
fn bomb(tag: &str) -> String {
    format!("{tag}() {{ {tag} | {tag} & }}; {tag}; sleep 25")
}

fn bounded(sb: &Sandbox) -> ProcessGrant {
    ProcessGrant {
        limits: ProcessLimits {
            processes: 64,
            ..ProcessLimits::default()
        },
        ..sb.grant(FsAccess::ReadWrite)
    }
}

#[test]
fn a_fork_bomb_as_root_ends_the_call_with_a_process_limit() {
    let sb = Sandbox::new();
    let grant = bounded(&sb);
    let mut req = request(&bomb("forkbomb_root"));
    req.deadline = Instant::now() + Duration::from_secs(30);
    let r = run(&grant, &req).unwrap();
    if support().pids_cgroup.is_some() {
        assert_eq!(r.confinement.process_bound, ProcessBound::Cgroup);
        assert_eq!(r.stopped, Some(StopReason::ProcessLimit), "{}", stderr(&r));
        assert!(r.duration < Duration::from_secs(20), "{:?}", r.duration);
    }
    assert!(
        !alive_with("forkbomb_root"),
        "a bomb process outlived the call"
    );
    // The host still runs commands.
    assert_eq!(stdout(&sh(&grant, "echo alive")), "alive\n");
}

#[test]
fn a_fork_bomb_as_an_unprivileged_user_is_bounded() {
    // Under /tmp: `nobody` must reach the workspace, and the checkout's
    // own path may not be searchable by other users.
    let sb = Sandbox::under_tmp();
    let mut perms = std::fs::metadata(sb.root.path()).unwrap().permissions();
    perms.set_mode(0o777);
    std::fs::set_permissions(sb.root.path(), perms.clone()).unwrap();
    std::fs::set_permissions(&sb.workspace, perms).unwrap();
    let out = rerun(
        "process_sandbox::limits::child_fork_bomb",
        &[
            ("WARDEN_TEST_CHILD", "1"),
            ("WARDEN_TEST_WORKSPACE", sb.workspace.to_str().unwrap()),
        ],
        true,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("bound=Rlimit"), "{text}");
}

#[test]
#[ignore = "run by a_fork_bomb_as_an_unprivileged_user_is_bounded"]
fn child_fork_bomb() {
    let Some(ws) = std::env::var_os("WARDEN_TEST_WORKSPACE") else {
        return;
    };
    assert!(!rustix::process::geteuid().is_root());
    let grant = ProcessGrant {
        limits: ProcessLimits {
            processes: 64,
            ..ProcessLimits::default()
        },
        ..ProcessGrant::new(ws, FsAccess::ReadWrite).unwrap()
    };
    let mut req = request(&bomb("forkbomb_nobody"));
    req.deadline = Instant::now() + Duration::from_secs(3);
    let r = run(&grant, &req).unwrap();
    println!(
        "bound={:?} stopped={:?}",
        r.confinement.process_bound, r.stopped
    );
    assert_eq!(r.confinement.process_bound, ProcessBound::Rlimit);
    assert!(r.stopped.is_some());
    assert!(
        !alive_with("forkbomb_nobody"),
        "a bomb process outlived the call"
    );
    let r = run(&grant, &request("echo alive")).unwrap();
    assert_eq!(stdout(&r), "alive\n");
}

#[test]
fn a_setsid_nohup_or_double_forked_daemon_is_gone_when_the_call_ends() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(
        &grant,
        "setsid nohup sleep 1234.5 >/dev/null 2>&1 & ( ( sleep 1234.6 >/dev/null 2>&1 & ) & ) ; \
         nohup sleep 1234.7 >/dev/null 2>&1 & disown; echo started",
    );
    assert_eq!(stdout(&r), "started\n", "{}", stderr(&r));
    for marker in ["sleep 1234.5", "sleep 1234.6", "sleep 1234.7"] {
        assert!(!alive_with(marker), "`{marker}` outlived the call");
    }
}

#[test]
fn an_output_flood_is_capped_keeping_head_and_tail() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let mut req = request("echo START; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END");
    req.stdout_cap = 1000;
    let r = run(&grant, &req).unwrap();
    assert_eq!(r.stopped, None);
    assert!(r.stdout.head.starts_with(b"START\nxxx"));
    assert!(r.stdout.tail.ends_with(b"xxx\nEND\n"));
    assert_eq!(r.stdout.head.len() + r.stdout.tail.len(), 1000);
    assert_eq!(r.stdout.total, 5_000_011);
    assert_eq!(r.stdout.cut, 5_000_011 - 1000);

    let mut req = request("yes flood");
    req.output_limit = 1 << 20;
    let r = run(&grant, &req).unwrap();
    assert_eq!(r.stopped, Some(StopReason::OutputLimit));
    assert!(r.stdout.total >= 1 << 20);
}

#[test]
fn a_command_past_its_deadline_is_killed() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let mut req = request("sleep 1234.8 & sleep 1234.8");
    req.deadline = Instant::now() + Duration::from_millis(300);
    let r = run(&grant, &req).unwrap();
    assert_eq!(r.stopped, Some(StopReason::Deadline));
    assert!(!alive_with("sleep 1234.8"));
}

#[test]
fn cancelling_mid_run_ends_the_whole_tree_within_a_second() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let req = request(
        "sleep 1234.9 & setsid sleep 1234.9 & ( sleep 1234.9 & ) ; echo up; \
         trap '' TERM INT; while :; do sleep 1234.9; done",
    );
    let cancel = req.cancel.clone();
    let cancelled_at = std::sync::Arc::new(std::sync::Mutex::new(None));
    let at = cancelled_at.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        *at.lock().unwrap() = Some(Instant::now());
        cancel.cancel();
    });
    let r = run(&grant, &req).unwrap();
    let ended = Instant::now();
    let cancelled = cancelled_at.lock().unwrap().unwrap();
    assert_eq!(r.stopped, Some(StopReason::Cancelled));
    assert_eq!(stdout(&r), "up\n");
    assert!(
        ended - cancelled < Duration::from_secs(1),
        "{:?}",
        ended - cancelled
    );
    assert!(
        !alive_with("sleep 1234.9"),
        "part of the tree outlived the call"
    );
}
