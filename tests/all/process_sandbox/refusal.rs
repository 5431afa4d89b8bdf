//! Missing confinement: a kernel without a layer, or a host that cannot
//! bound processes, is refused unless a weaker mode is named.

use warden::capability::FsAccess;
use warden::capability::process::{ConfinementMode, ProcessBound, ProcessError, ProcessGrant};

use super::{Sandbox, request, rerun, run};

#[test]
fn a_kernel_without_landlock_is_refused() {
    rerun(
        "process_sandbox::refusal::child_refused_without_landlock",
        &[("WARDEN_SIMULATE_NO_LANDLOCK", "1")],
        false,
    );
}

#[test]
#[ignore = "run by a_kernel_without_landlock_is_refused"]
fn child_refused_without_landlock() {
    if std::env::var_os("WARDEN_SIMULATE_NO_LANDLOCK").is_none() {
        return;
    }
    let sb = Sandbox::new();
    for mode in [ConfinementMode::Full, ConfinementMode::UnboundedProcesses] {
        let grant = ProcessGrant {
            mode,
            ..sb.grant(FsAccess::ReadWrite)
        };
        let err = run(&grant, &request("echo ran > ran.txt")).unwrap_err();
        assert!(matches!(err, ProcessError::Unavailable { .. }), "{err}");
        assert!(err.to_string().contains("Landlock"), "{err}");
    }
    assert!(!sb.workspace.join("ran.txt").exists());
}

#[test]
fn root_without_a_pids_cgroup_is_refused_unless_unbounded_processes_is_named() {
    if !rustix::process::geteuid().is_root() {
        return;
    }
    rerun(
        "process_sandbox::refusal::child_root_without_cgroup",
        &[("WARDEN_SIMULATE_NO_CGROUP", "1")],
        false,
    );
}

#[test]
#[ignore = "run by root_without_a_pids_cgroup_is_refused_unless_unbounded_processes_is_named"]
fn child_root_without_cgroup() {
    if std::env::var_os("WARDEN_SIMULATE_NO_CGROUP").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let full = sb.grant(FsAccess::ReadWrite);
    let err = run(&full, &request("echo ran > ran.txt")).unwrap_err();
    assert!(err.to_string().contains("number of processes"), "{err}");
    assert!(!sb.workspace.join("ran.txt").exists());
    let weaker = ProcessGrant {
        mode: ConfinementMode::UnboundedProcesses,
        ..full
    };
    let r = run(&weaker, &request("echo ran > ran.txt")).unwrap();
    assert!(r.exit.success());
    assert_eq!(r.confinement.process_bound, ProcessBound::Unbounded);
    assert!(sb.workspace.join("ran.txt").exists());
}
