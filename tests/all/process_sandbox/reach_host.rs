//! Reaching the host process: tracing it, signalling it, reading its
//! environment; and the child's own environment.

use warden::capability::FsAccess;

use super::{Sandbox, rerun, sh, stderr, stdout};

#[test]
fn ptrace_signals_and_proc_environ_of_the_host_all_fail() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let host = std::process::id();
    let attempts = [
        format!("kill -0 {host}"),
        format!("kill -TERM {host}"),
        format!("cat /proc/{host}/environ"),
        format!("ls /proc/{host}/"),
        format!(
            "/usr/bin/python3 -c \"import ctypes, sys; l = ctypes.CDLL(None, use_errno=True); \
             sys.exit(0 if l.ptrace(16, {host}, 0, 0) == 0 else 1)\""
        ),
        "/usr/bin/python3 -c \"import ctypes, sys; l = ctypes.CDLL(None, use_errno=True); \
             sys.exit(0 if l.ptrace(16, 1, 0, 0) == 0 else 1)\""
            .to_string(),
        format!("strace -p {host} -e trace=none"),
    ];
    for attempt in &attempts {
        let r = sh(&grant, attempt);
        assert!(!r.exit.success(), "`{attempt}` succeeded: {}", stdout(&r));
    }
    // The process sees only its own namespace: it is pid 1.
    assert_eq!(stdout(&sh(&grant, "echo $$")), "1\n");
}

#[test]
fn the_childs_environment_holds_no_provider_key_even_when_the_hosts_does() {
    rerun(
        "process_sandbox::reach_host::child_environment_without_keys",
        &[
            ("OPENAI_API_KEY", "sk-CANARY-openai"),
            ("ANTHROPIC_API_KEY", "sk-CANARY-anthropic"),
            ("WORK_OPENAI_KEY", "sk-CANARY-work"),
            ("WARDEN_TEST_CHILD", "1"),
        ],
        false,
    );
}

#[test]
#[ignore = "run by the_childs_environment_holds_no_provider_key_even_when_the_hosts_does"]
fn child_environment_without_keys() {
    if std::env::var_os("WARDEN_TEST_CHILD").is_none() {
        return;
    }
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(&grant, "env; cat /proc/self/environ /proc/1/environ");
    let seen = stdout(&r);
    assert!(!seen.contains("CANARY"), "{seen}");
    assert!(seen.contains("HOME=/tmp/home"), "{seen}\n{}", stderr(&r));
    let leaky = warden::capability::process::ProcessGrant {
        env: vec!["OPENAI_API_KEY".into()],
        ..grant
    };
    let err = super::run(&leaky, &super::request("true")).unwrap_err();
    assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
}
