//! Shared test fixtures: one warm catalog for the process, sandboxes with
//! canary files outside the workspace, and helpers to call tools.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use warden::base::{CancelToken, Limits};
use warden::capability::{FsAccess, FsGrant, Grant, PathGuard, WriteMode};
use warden::home::Home;
use warden::pipeline::{self, CallResult, Invocation, Stage};
use warden::plugin::Catalog;
use warden::protocol::{ErrorKind, ToolOutcome, ToolOutput};
use warden::runtime::{CallReport, CallRequest, LoadedPlugin};

/// A data directory shared by every test in this process, so each
/// component is compiled once.
pub fn shared_home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("warden-test-home-")
            .tempdir()
            .unwrap();
        dir.keep()
    })
}

/// A data directory of its own (for a config file or an installed plugin)
/// that shares [`shared_home`]'s cache of compiled components.
pub fn fresh_home() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("warden-home-")
        .tempdir()
        .unwrap();
    let cache = shared_home().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::os::unix::fs::symlink(&cache, dir.path().join("cache")).unwrap();
    dir
}

/// A data directory that lives for the whole test run, with `component`
/// installed by the real binary (callers keep it in a `OnceLock`).
pub fn home_with_installed(prefix: &str, component: &str) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .unwrap()
        .keep();
    let out = warden(&dir)
        .args(["plugin", "install", component])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The `tool_call` events `warden audit show --tool TOOL` prints for
/// `home`, with the text shown (for assertion messages).
pub fn audited_calls(home: &Path, tool: &str) -> (Vec<Value>, String) {
    let out = warden(home)
        .args(["audit", "show", "--tool", tool, "--json"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{shown}");
    let calls = shown
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .filter(|e| e["type"] == "tool_call")
        .collect();
    (calls, shown)
}

/// A data directory with a copy of [`shared_home`]'s compile cache, for a
/// test that damages cache entries: the shared ones are mapped into memory
/// by other tests running at the same time, and writing over them in place
/// would crash those with SIGBUS.
pub fn home_with_own_cache() -> tempfile::TempDir {
    catalog();
    let home = tempfile::Builder::new()
        .prefix("warden-home-")
        .tempdir()
        .unwrap();
    let cache = home.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    for e in std::fs::read_dir(shared_home().join("cache")).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && !e.file_name().to_string_lossy().starts_with('.') {
            std::fs::copy(e.path(), cache.join(e.file_name())).unwrap();
        }
    }
    home
}

/// The catalog (built-in plugins) over [`shared_home`].
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| Catalog::open(&Home::at(shared_home().to_path_buf())).unwrap())
}

/// The hostile fixture plugin, loaded into the shared runtime.
pub fn hostile() -> Arc<LoadedPlugin> {
    static P: OnceLock<Arc<LoadedPlugin>> = OnceLock::new();
    P.get_or_init(|| load_fixture(warden::test_plugins::HOSTILE))
        .clone()
}

/// The echo example plugin (no capabilities).
pub fn echo() -> Arc<LoadedPlugin> {
    static P: OnceLock<Arc<LoadedPlugin>> = OnceLock::new();
    P.get_or_init(|| load_fixture(warden::test_plugins::ECHO))
        .clone()
}

/// The netprobe fixture: raw `wasi:http` requests.
pub fn netprobe() -> Arc<LoadedPlugin> {
    static P: OnceLock<Arc<LoadedPlugin>> = OnceLock::new();
    P.get_or_init(|| load_fixture(warden::test_plugins::NETPROBE))
        .clone()
}

fn load_fixture(path: &str) -> Arc<LoadedPlugin> {
    let wasm = std::fs::read(path).unwrap();
    catalog().runtime().load(&wasm, None).unwrap()
}

/// A workspace in a temp dir, with canary files beside it that no call may
/// read or change: `../outside/canary.txt` and `../<ws-name>-evil/canary.txt`.
pub struct Sandbox {
    root: tempfile::TempDir,
}

pub const CANARY: &str = "canary: must stay unread and unchanged\n";

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("warden-sb-")
            .tempdir()
            .unwrap();
        std::fs::create_dir(root.path().join("ws")).unwrap();
        for dir in ["outside", "ws-evil"] {
            std::fs::create_dir(root.path().join(dir)).unwrap();
            std::fs::write(root.path().join(dir).join("canary.txt"), CANARY).unwrap();
        }
        Sandbox { root }
    }

    /// The workspace directory (canonical).
    pub fn ws(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("ws")).unwrap()
    }

    /// The directory holding the workspace and the canaries.
    pub fn parent(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path()).unwrap()
    }

    /// Absolute path of the canary outside the workspace.
    pub fn canary(&self) -> PathBuf {
        self.parent().join("outside/canary.txt")
    }

    /// Write `content` at workspace-relative `rel`, creating parents.
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.ws().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws().join(rel)).unwrap()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.ws().join(rel).symlink_metadata().is_ok()
    }

    /// Create a symlink at workspace-relative `link` pointing to `target`.
    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) {
        std::os::unix::fs::symlink(target, self.ws().join(link)).unwrap();
    }

    /// Panic if any canary was changed, or any new file appeared outside the workspace.
    pub fn assert_canaries_intact(&self) {
        for dir in ["outside", "ws-evil"] {
            let d = self.parent().join(dir);
            let names: Vec<_> = std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(
                names,
                vec![std::ffi::OsString::from("canary.txt")],
                "files appeared in {dir}"
            );
            assert_eq!(
                std::fs::read_to_string(d.join("canary.txt")).unwrap(),
                CANARY,
                "{dir}/canary.txt changed"
            );
        }
        let top: Vec<_> = std::fs::read_dir(self.parent())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(top.len(), 3, "files appeared beside the workspace: {top:?}");
    }
}

/// Call a built-in tool through the full pipeline.
pub fn call(tool: &str, input: Value, ws: &Path, write: WriteMode) -> CallResult {
    call_raw(tool, &input.to_string(), ws, write, Limits::default())
}

/// Call a built-in tool with raw input text and explicit limits.
pub fn call_raw(
    tool: &str,
    input: &str,
    ws: &Path,
    write: WriteMode,
    limits: Limits,
) -> CallResult {
    pipeline::run(
        catalog(),
        Invocation {
            tool,
            input,
            workspace: ws,
            write,
            limits,
            limit_requests: Default::default(),
            cancel: CancelToken::new(),
            progress: None,
            policy: None,
            approval: None,
            rationale: None,
            interaction: None,
        },
    )
}

/// Call a tool of a fixture plugin directly (no schema validation), under `grant`.
pub fn call_plugin(
    plugin: &LoadedPlugin,
    tool: &str,
    input: Value,
    grant: &Grant,
    limits: &Limits,
) -> CallReport {
    let input = input.to_string();
    plugin.call(CallRequest {
        call_id: "test".into(),
        tool,
        input: &input,
        grant,
        limits,
        cancel: CancelToken::new(),
        progress: None,
    })
}

/// A grant of the workspace with `access` and the default protected paths.
pub fn ws_grant(ws: &Path, access: FsAccess) -> Grant {
    guarded_grant(ws, access, Some(PathGuard::defaults()))
}

/// A grant of the workspace with `access` and `protected` paths.
pub fn guarded_grant(ws: &Path, access: FsAccess, protected: Option<PathGuard>) -> Grant {
    Grant {
        filesystem: Some(FsGrant {
            host_dir: ws.to_path_buf(),
            access,
            protected,
        }),
        extra_dirs: Vec::new(),
        network: None,
        process: None,
        interaction: None,
    }
}

/// The output of a successful call, or a panic showing the outcome.
#[track_caller]
pub fn ok(r: &CallResult) -> &ToolOutput {
    match &r.outcome {
        ToolOutcome::Success(out) => out,
        other => panic!("expected success, got {other:?}"),
    }
}

/// The message of a failed call of `kind`, or a panic showing the outcome.
#[track_caller]
pub fn err(r: &CallResult, kind: ErrorKind) -> String {
    outcome_err(&r.outcome, kind)
}

#[track_caller]
pub fn outcome_err(outcome: &ToolOutcome, kind: ErrorKind) -> String {
    match outcome {
        ToolOutcome::Error(e) if e.kind == kind => e.message.clone(),
        other => panic!("expected error {kind:?}, got {other:?}"),
    }
}

/// True when `r` was rejected before execution.
pub fn rejected(r: &CallResult) -> bool {
    r.stage == Stage::Rejected
}

/// Panic if `text` contains a host absolute path from the sandbox.
#[track_caller]
pub fn assert_no_host_paths(text: &str, sb: &Sandbox) {
    let parent = sb.parent().display().to_string();
    assert!(!text.contains(&parent), "host path leaked in {text:?}");
    assert!(!text.contains("/tmp/"), "host temp path leaked in {text:?}");
}

/// The repository's root (the checkout the tests run in).
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| panic!("host/ has no parent"))
}

/// The `warden` binary with `WARDEN_HOME` set to `home`.
pub fn warden(home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.env("WARDEN_HOME", home).env_remove("RUST_LOG");
    cmd
}

/// Held by tests that measure wall-clock time and by tests that load the
/// CPU heavily (the nested guest build), so the two never overlap.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Run `warden ARGS` with data directory `home`: exit code, stdout, stderr.
pub fn cli(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = warden(home).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}
