//! Filesystem escapes: reading and writing outside the workspace, changing
//! protected paths, redirecting their protection through a symlink.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use warden::capability::process::ProcessGrant;
use warden::capability::{FsAccess, PathGuard, ProtectedReads};

use super::{Sandbox, sh, stderr, stdout};

/// A canary in the real `$HOME`, removed on drop.
struct HomeCanary(std::path::PathBuf);

impl HomeCanary {
    fn new(content: &str) -> HomeCanary {
        // A name of its own per canary: tests of one process run at once,
        // and one's canary must not be written or removed by another's.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let home = std::env::var_os("HOME").unwrap();
        let path = Path::new(&home).join(format!(".warden-canary-{}-{n}", std::process::id()));
        fs::write(&path, content).unwrap();
        HomeCanary(path)
    }
}

impl Drop for HomeCanary {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

#[test]
fn reading_canaries_in_home_beside_the_workspace_and_in_a_data_dir_fails() {
    let sb = Sandbox::new();
    let home = HomeCanary::new("CANARY-HOME");
    let beside = sb.beside("beside.txt", "CANARY-BESIDE");
    let data = sb.root.path().canonicalize().unwrap().join("warden-data");
    fs::create_dir_all(data.join("sessions")).unwrap();
    fs::write(data.join("sessions/s1.jsonl"), "CANARY-SESSION").unwrap();
    fs::write(data.join("audit.log"), "CANARY-AUDIT").unwrap();
    fs::write(data.join("openai.key"), "CANARY-KEY").unwrap();
    fs::write(sb.workspace.join("mine.txt"), "in-workspace").unwrap();
    let grant = sb.grant(FsAccess::ReadWrite);
    let targets = [
        home.0.clone(),
        beside,
        data.join("sessions/s1.jsonl"),
        data.join("audit.log"),
        data.join("openai.key"),
    ];
    for target in &targets {
        let r = sh(&grant, &format!("cat mine.txt; cat '{}'", target.display()));
        assert_eq!(stdout(&r), "in-workspace", "{} was read", target.display());
        // Landlock refuses it; under /tmp the child's private /tmp does not
        // even hold it (only the workspace is carried into it).
        let hidden = target.starts_with("/tmp") && stderr(&r).contains("No such file");
        assert!(
            stderr(&r).contains("Permission denied") || hidden,
            "{}",
            stderr(&r)
        );
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        let r = sh(
            &grant,
            &format!("ls -a '{}'", target.parent().unwrap().display()),
        );
        assert!(
            !r.exit.success() || !stdout(&r).lines().any(|l| l == name),
            "listed {}: {}",
            target.display(),
            stdout(&r)
        );
    }
}

#[test]
fn writing_outside_the_workspace_fails() {
    let sb = Sandbox::new();
    let beside = sb.beside("beside.txt", "original");
    let root = sb.root.path().canonicalize().unwrap();
    let home = HomeCanary::new("original");
    let grant = sb.grant(FsAccess::ReadWrite);
    // A name of this run's own, so an escape that once succeeded cannot
    // fail later runs, and is removed below whatever happens.
    let etc = PathBuf::from(format!("/etc/warden-escape-{}", std::process::id()));
    let script = format!(
        "echo x > '{b}'; echo x >> '{h}'; echo x > '{r}/new.txt'; mkdir '{r}/newdir'; \
         rm -f '{b}'; echo x > '{e}'; echo ok > inside.txt",
        b = beside.display(),
        h = home.0.display(),
        r = root.display(),
        e = etc.display()
    );
    let r = sh(&grant, &script);
    let escaped = etc.exists();
    let _ = fs::remove_file(&etc);
    assert_eq!(fs::read_to_string(&beside).unwrap(), "original");
    assert_eq!(fs::read_to_string(&home.0).unwrap(), "original");
    assert!(!root.join("new.txt").exists() && !root.join("newdir").exists());
    assert!(!escaped, "{} was written", etc.display());
    assert_eq!(
        fs::read_to_string(sb.workspace.join("inside.txt")).unwrap(),
        "ok\n"
    );
    assert!(stderr(&r).contains("Permission denied"), "{}", stderr(&r));
}

#[test]
fn a_read_only_grant_keeps_the_workspace_unchanged() {
    for sb in [Sandbox::new(), Sandbox::under_tmp()] {
        fs::write(sb.workspace.join("a.txt"), "original").unwrap();
        let grant = sb.grant(FsAccess::ReadOnly);
        let r = sh(
            &grant,
            "cat a.txt; echo x > a.txt; : > a.txt; rm a.txt; echo x > new.txt; echo tmp > /tmp/t && cat /tmp/t",
        );
        assert_eq!(stdout(&r), "originaltmp\n", "{}", stderr(&r));
        assert_eq!(
            fs::read_to_string(sb.workspace.join("a.txt")).unwrap(),
            "original"
        );
        assert!(!sb.workspace.join("new.txt").exists());
    }
}

fn git_workspace(sb: &Sandbox) {
    fs::create_dir_all(sb.workspace.join(".git/hooks")).unwrap();
    fs::write(sb.workspace.join(".git/config"), "[core]\n").unwrap();
    fs::write(sb.workspace.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(sb.workspace.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    fs::write(sb.workspace.join(".env"), "KEY=CANARY-ENV\n").unwrap();
}

#[test]
fn writing_git_config_hooks_and_env_under_a_write_grant_fails() {
    let sb = Sandbox::new();
    git_workspace(&sb);
    fs::hard_link(
        sb.workspace.join(".git/config"),
        sb.workspace.join("cfg-alias"),
    )
    .unwrap();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(
        &grant,
        "echo evil >> .git/config; echo evil > .git/hooks/pre-commit; echo evil > .git/hooks/post-merge; \
         echo evil > .env; rm -rf .git; mv .env moved; rm .env; echo evil >> cfg-alias; \
         ln .git/config alias2; echo ok > src.txt; cat .env",
    );
    assert_eq!(
        fs::read_to_string(sb.workspace.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        fs::read_to_string(sb.workspace.join(".git/hooks/pre-commit")).unwrap(),
        "#!/bin/sh\n"
    );
    assert!(!sb.workspace.join(".git/hooks/post-merge").exists());
    assert_eq!(
        fs::read_to_string(sb.workspace.join(".env")).unwrap(),
        "KEY=CANARY-ENV\n"
    );
    assert!(!sb.workspace.join("moved").exists() && !sb.workspace.join("alias2").exists());
    assert_eq!(
        fs::read_to_string(sb.workspace.join("src.txt")).unwrap(),
        "ok\n"
    );
    // Readable protected paths stay readable.
    assert_eq!(stdout(&r), "KEY=CANARY-ENV\n", "{}", stderr(&r));
    assert!(r.confinement.protected_mounts >= 3);
}

#[test]
fn a_symlink_in_place_of_git_does_not_redirect_the_protection() {
    let sb = Sandbox::new();
    let elsewhere = sb.root.path().canonicalize().unwrap().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("config"), "CANARY-ELSEWHERE").unwrap();
    std::os::unix::fs::symlink(&elsewhere, sb.workspace.join(".git")).unwrap();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(
        &grant,
        "cat .git/config; echo evil > .git/config; rm .git; mv .git gone; mkdir .git2; \
         ln -sfn .git2 .git; echo evil > .git/hooks",
    );
    assert!(
        !stdout(&r).contains("CANARY"),
        "the symlink's target was read"
    );
    assert_eq!(
        fs::read_to_string(elsewhere.join("config")).unwrap(),
        "CANARY-ELSEWHERE"
    );
    let link = fs::read_link(sb.workspace.join(".git")).unwrap();
    assert_eq!(link, elsewhere, "the protected symlink was replaced");
    assert!(!sb.workspace.join("gone").exists());
}

#[test]
fn a_protected_path_the_call_creates_does_not_survive_it() {
    let sb = Sandbox::new();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(
        &grant,
        "mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit && echo K=1 > .env.local \
         && mkdir -p sub && echo key > sub/server.pem && echo ok > kept.txt",
    );
    assert!(r.exit.success(), "{}", stderr(&r));
    let mut removed = r.removed_protected.clone();
    removed.sort();
    assert_eq!(removed, [".env.local", ".git", "sub/server.pem"]);
    for gone in [".git", ".env.local", "sub/server.pem"] {
        assert!(
            !sb.workspace.join(gone).exists(),
            "{gone} survived the call"
        );
    }
    assert!(sb.workspace.join("kept.txt").exists());
}

#[test]
fn unreadable_protected_paths_stay_unreadable_even_through_a_hard_link() {
    let sb = Sandbox::new();
    git_workspace(&sb);
    fs::write(sb.workspace.join(".git/config"), "CANARY-GITCONFIG").unwrap();
    fs::hard_link(sb.workspace.join(".env"), sb.workspace.join("env-alias")).unwrap();
    let guard = PathGuard::new(
        PathGuard::defaults().globs().to_vec(),
        ProtectedReads::Refused,
    )
    .unwrap();
    for access in [FsAccess::ReadOnly, FsAccess::ReadWrite] {
        let grant = ProcessGrant {
            protected: guard.clone(),
            ..sb.grant(access)
        };
        let r = sh(
            &grant,
            "cat .env; cat env-alias; cat .git/config; ls .git; echo done",
        );
        assert_eq!(stdout(&r), "done\n", "{access:?}: {}", stdout(&r));
    }
}

#[test]
fn a_worktree_git_directory_is_readable_but_read_only() {
    let sb = Sandbox::new();
    let repo = sb.root.path().canonicalize().unwrap().join("repo/.git");
    let gitdir = repo.join("worktrees/ws");
    fs::create_dir_all(&gitdir).unwrap();
    fs::write(repo.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(repo.join("config"), "[core]\n").unwrap();
    fs::write(gitdir.join("HEAD"), "ref: refs/heads/wt\n").unwrap();
    fs::write(gitdir.join("commondir"), "../..\n").unwrap();
    fs::write(
        sb.workspace.join(".git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .unwrap();
    let grant = sb.grant(FsAccess::ReadWrite);
    let r = sh(
        &grant,
        &format!(
            "cat '{g}/HEAD' '{c}/config'; echo evil > '{g}/HEAD'; echo evil >> '{c}/config'; \
             echo evil > '{c}/hooks'",
            g = gitdir.display(),
            c = repo.display()
        ),
    );
    assert_eq!(stdout(&r), "ref: refs/heads/wt\n[core]\n", "{}", stderr(&r));
    assert_eq!(
        fs::read_to_string(gitdir.join("HEAD")).unwrap(),
        "ref: refs/heads/wt\n"
    );
    assert_eq!(fs::read_to_string(repo.join("config")).unwrap(), "[core]\n");
    assert!(!repo.join("hooks").exists());
}
