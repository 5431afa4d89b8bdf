//! The confinement of processes the host spawns, attacked with real
//! processes (`bash`, `sh`, `cat`, `curl`, `python3`) through the library
//! API: each test is named for the attack it stops, and its canaries live
//! outside the workspace.

mod escape_fs;
mod escape_net;
mod host_confine;
mod limits;
mod reach_host;
mod refusal;
mod shared_net;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use warden::capability::FsAccess;
use warden::capability::process::{
    self, ProcessError, ProcessGrant, ProcessReport, ProcessRequest, shell_argv,
};

/// A test root outside `/tmp` (so Landlock, not the private `/tmp`, is
/// what keeps the process from its canaries), holding a workspace.
pub struct Sandbox {
    pub root: tempfile::TempDir,
    pub workspace: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox::in_dir(Path::new(env!("CARGO_TARGET_TMPDIR")))
    }

    /// A root under `/tmp`: the workspace is carried into the private `/tmp`.
    pub fn under_tmp() -> Sandbox {
        Sandbox::in_dir(Path::new("/tmp"))
    }

    fn in_dir(base: &Path) -> Sandbox {
        std::fs::create_dir_all(base).unwrap();
        let root = tempfile::Builder::new()
            .prefix("proc-sandbox-")
            .tempdir_in(base)
            .unwrap();
        let workspace = root.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        Sandbox { root, workspace }
    }

    /// A file beside the workspace.
    pub fn beside(&self, name: &str, content: &str) -> PathBuf {
        let path = self.root.path().canonicalize().unwrap().join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn grant(&self, access: FsAccess) -> ProcessGrant {
        ProcessGrant::new(&self.workspace, access).unwrap()
    }
}

/// `bash -c script`, ending within 20 s.
pub fn request(script: &str) -> ProcessRequest {
    ProcessRequest::new(shell_argv(script), Instant::now() + Duration::from_secs(20))
}

/// Runs `request` under `grant` on a fresh runtime.
pub fn run(grant: &ProcessGrant, request: &ProcessRequest) -> Result<ProcessReport, ProcessError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(process::run(grant, request))
}

/// Runs `script` and returns the report, which must exist.
pub fn sh(grant: &ProcessGrant, script: &str) -> ProcessReport {
    run(grant, &request(script)).unwrap_or_else(|e| panic!("`{script}` did not run: {e}"))
}

pub fn stdout(report: &ProcessReport) -> String {
    report.stdout.text()
}

pub fn stderr(report: &ProcessReport) -> String {
    report.stderr.text()
}

#[test]
fn a_confined_command_runs_and_reports_its_output_and_exit() {
    let sb = Sandbox::new();
    std::fs::write(sb.workspace.join("in.txt"), "hello from the workspace\n").unwrap();
    let grant = sb.grant(FsAccess::ReadWrite);
    let mut req =
        request("cat in.txt; read x; echo \"stdin:$x\"; echo err >&2; echo made > out.txt; exit 3");
    req.stdin = b"typed\n".to_vec();
    let report = run(&grant, &req).unwrap();
    assert_eq!(
        stdout(&report),
        "hello from the workspace\nstdin:typed\n",
        "{}",
        stderr(&report)
    );
    assert_eq!(stderr(&report), "err\n");
    assert_eq!(report.exit, process::ExitStatus::Code { code: 3 });
    assert_eq!(report.stopped, None);
    assert_eq!(
        std::fs::read_to_string(sb.workspace.join("out.txt")).unwrap(),
        "made\n"
    );
}

/// Runs the ignored test `name` (a full path) in a fresh copy of this
/// binary with `envs`, as root or as `nobody`; returns its output.
pub fn rerun(name: &str, envs: &[(&str, &str)], as_nobody: bool) -> std::process::Output {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match as_nobody {
        false => std::process::Command::new(&exe),
        true => {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&exe);
            c
        }
    };
    cmd.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{name} did not run and pass:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether a process whose command line contains `marker` is alive on the
/// host.
pub fn alive_with(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
            String::from_utf8_lossy(&c)
                .replace('\0', " ")
                .contains(marker)
        })
    })
}
