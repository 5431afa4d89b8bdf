//! The host's own Landlock domain (`confine_host`), tested in a process
//! whose main thread is its only thread when it confines itself, as in
//! `warden`'s `main`: a harness-less test, since libtest runs tests on
//! threads of their own. The parent makes the canaries, runs itself
//! confined, and checks what the confined copy reports.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use warden::capability::FsAccess;
use warden::capability::process::{self, HostPaths, ProcessGrant, ProcessRequest, confine_host};

fn main() {
    match std::env::var_os("WARDEN_CONFINED_CHILD") {
        Some(root) => confined(PathBuf::from(root)),
        None => parent(),
    }
}

fn parent() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    fs::create_dir_all(&base).unwrap();
    let root = tempfile::Builder::new()
        .prefix("host-confine-")
        .tempdir_in(&base)
        .unwrap();
    let r = root.path().canonicalize().unwrap();
    fs::create_dir_all(r.join("ws")).unwrap();
    fs::write(r.join("ws/src.txt"), "source").unwrap();
    fs::create_dir_all(r.join("home/.ssh")).unwrap();
    fs::write(r.join("home/.ssh/id_ed25519"), "CANARY-SSH").unwrap();
    // The host may write its temporary directory: give the child one of
    // its own, so that a checkout under /tmp does not put the canary there.
    fs::create_dir_all(r.join("tmp")).unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .env("WARDEN_CONFINED_CHILD", &r)
        .env("TMPDIR", r.join("tmp"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let checks = [
        "main thread: canary denied",
        "spawned thread: canary denied",
        "tokio worker: canary denied",
        "workspace: read",
        "data dir: written",
        "confined process: ok",
    ];
    let mut failed = 0;
    for check in checks {
        if !text.lines().any(|l| l == check) {
            eprintln!("missing: {check}");
            failed += 1;
        }
    }
    if failed > 0 || !out.status.success() {
        eprintln!("{text}\n{}", String::from_utf8_lossy(&out.stderr));
        println!("0 passed, 1 failed");
        std::process::exit(1);
    }
    println!("1 passed, 0 failed");
}

fn report(what: &str, result: std::io::Result<String>) {
    match result {
        Ok(text) if text.contains("CANARY") => println!("{what}: canary READ"),
        Ok(_) => println!("{what}: read"),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            println!("{what}: canary denied")
        }
        Err(e) => println!("{what}: {e}"),
    }
}

fn confined(root: PathBuf) {
    let ws = root.join("ws");
    let canary = root.join("home/.ssh/id_ed25519");
    confine_host(&HostPaths {
        workspace: Some((ws.clone(), FsAccess::ReadWrite)),
        data_dir: root.join("data"),
        ..HostPaths::default()
    })
    .expect("confine_host");
    report("main thread", fs::read_to_string(&canary));
    let c = canary.clone();
    let from_thread = std::thread::spawn(move || fs::read_to_string(c))
        .join()
        .unwrap();
    report("spawned thread", from_thread);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let c = canary.clone();
    let from_worker = runtime.block_on(async move {
        tokio::spawn(async move { fs::read_to_string(c) })
            .await
            .unwrap()
    });
    report("tokio worker", from_worker);
    if fs::read_to_string(ws.join("src.txt")).is_ok_and(|t| t == "source") {
        println!("workspace: read");
    }
    if fs::write(root.join("data/session.jsonl"), "x").is_ok() {
        println!("data dir: written");
    }
    let grant = ProcessGrant::new(&ws, FsAccess::ReadWrite).unwrap();
    let request = ProcessRequest::new(
        process::shell_argv("echo t > /tmp/t && cat /tmp/t src.txt && echo out > made.txt"),
        Instant::now() + Duration::from_secs(20),
    );
    match runtime.block_on(process::run(&grant, &request)) {
        Ok(r) if r.stdout.text() == "t\nsource" && ws.join("made.txt").exists() => {
            println!("confined process: ok")
        }
        Ok(r) => println!("confined process: {:?} {}", r.exit, r.stderr.text()),
        Err(e) => println!("confined process: {e}"),
    }
}
