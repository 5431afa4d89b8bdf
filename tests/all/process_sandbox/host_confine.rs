//! Host confinement asked for too late: refused, since threads already
//! running would stay outside the domain. (The domain itself is tested in
//! `tests/host_confine`, a binary whose main thread is its only thread.)

use warden::capability::FsAccess;
use warden::capability::process::{HostPaths, ProcessError, confine_host};

use super::Sandbox;

#[test]
fn confining_the_host_after_threads_started_is_refused() {
    let sb = Sandbox::new();
    let err = confine_host(&HostPaths {
        workspace: Some((sb.workspace.clone(), FsAccess::ReadWrite)),
        data_dir: sb.root.path().join("data"),
        ..HostPaths::default()
    })
    .unwrap_err();
    assert!(
        matches!(err, ProcessError::HostThreads(n) if n > 1),
        "{err}"
    );
    // Nothing was confined: this thread still reads outside the workspace.
    assert!(std::fs::read_dir(sb.root.path()).is_ok());
}
