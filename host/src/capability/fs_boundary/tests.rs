//! Unit tests of the filesystem boundary's bookkeeping.

use super::*;
use std::path::PathBuf;

use crate::capability::{DirGrant, FsGrant};

fn grant(access: FsAccess, protected: Option<PathGuard>, extra: Vec<DirGrant>) -> Grant {
    Grant {
        filesystem: Some(FsGrant {
            host_dir: PathBuf::from("/home/u/proj"),
            access,
            protected,
        }),
        extra_dirs: extra,
        network: None,
        process: None,
        interaction: None,
    }
}

fn boundary(access: FsAccess, protected: Option<PathGuard>) -> FsBoundary {
    FsBoundary::for_grant(&grant(access, protected, Vec::new()))
}

fn extra(named: &str, host: &str, access: FsAccess) -> DirGrant {
    DirGrant {
        path: PathBuf::from(named),
        host_dir: PathBuf::from(host),
        access,
    }
}

#[test]
fn only_what_the_grant_could_do_is_checked() {
    let rw = boundary(FsAccess::ReadWrite, Some(PathGuard::defaults()));
    assert!(rw.checks(PathUse::Change) && !rw.checks(PathUse::Read));
    let ro = boundary(FsAccess::ReadOnly, Some(PathGuard::defaults()));
    assert!(!ro.checks(PathUse::Change));
    let open = boundary(FsAccess::ReadWrite, None);
    assert!(
        !open.checks(PathUse::Change) && !open.refuses("/home/u/proj/.git/config", PathUse::Change)
    );
    assert!(!FsBoundary::for_grant(&Grant::none()).checks(PathUse::Change));
    let ro_with_rw_extra = FsBoundary::for_grant(&grant(
        FsAccess::ReadOnly,
        Some(PathGuard::defaults()),
        vec![extra("/data", "/data", FsAccess::ReadWrite)],
    ));
    assert!(ro_with_rw_extra.checks(PathUse::Change));
}

#[test]
fn paths_are_placed_in_the_granted_directories() {
    let b = boundary(FsAccess::ReadWrite, Some(PathGuard::defaults()));
    let ws = "/home/u/proj";
    assert_eq!(b.place(Path::new(ws)).as_deref(), Some(ws));
    assert_eq!(b.place(Path::new("/home/u/project")), None);
    assert_eq!(
        b.link_target("/home/u/proj/src", "../.env").as_deref(),
        Some("/home/u/proj/.env")
    );
    assert_eq!(
        b.link_target("/home/u/proj/src", "/workspace/.git")
            .as_deref(),
        Some("/home/u/proj/.git")
    );
    assert_eq!(
        b.link_target("/home/u/proj/src", "/home/u/proj/.git/HEAD")
            .as_deref(),
        Some("/home/u/proj/.git/HEAD")
    );
    assert_eq!(b.link_target(ws, "/workspacex/.git"), None);
    assert_eq!(b.link_target(ws, "../outside"), None);
    assert_eq!(b.join(ws, "a/../b").as_deref(), Some("/home/u/proj/b"));
    assert_eq!(b.join(ws, ".."), None);
    assert_eq!(b.join(ws, "/etc"), None);
}

#[test]
fn protected_paths_apply_in_every_granted_directory() {
    let mut b = FsBoundary::for_grant(&grant(
        FsAccess::ReadWrite,
        Some(PathGuard::defaults()),
        vec![
            extra("/data", "/srv/data", FsAccess::ReadWrite),
            extra("/home/u", "/home/u", FsAccess::ReadOnly),
        ],
    ));
    let change = PathUse::Change;
    assert!(b.refuses("/srv/data/.git/config", change));
    assert!(b.refuses("/srv/data/sub/.env", change));
    assert!(!b.refuses("/srv/data/notes.txt", change));
    // The workspace inside `/home/u` keeps its own protected paths.
    assert!(b.refuses("/home/u/proj/.git/config", change));
    assert!(b.guards_below("/home/u/proj"));
    assert!(b.guards_below("/home"));
    assert!(!b.guards_below("/srv/data/sub"));
    assert_eq!(
        b.link_target("/srv/data", "/data/.git").as_deref(),
        Some("/srv/data/.git")
    );
    b.record(FsOp::Open, Some("/home/u/proj/.git/config"));
    b.record(FsOp::Open, Some("/srv/data/.env"));
    b.record(FsOp::Open, Some("/srv/data"));
    b.record(FsOp::Open, Some("/etc/passwd"));
    let kept = b.into_report().denials;
    let shown: Vec<_> = kept.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        shown,
        [".git/config", "/data/.env", "/data", UNPLACED],
        "refusals name paths as the user knows them, never by a host path"
    );
}

#[test]
fn denials_are_capped() {
    let mut b = boundary(FsAccess::ReadWrite, Some(PathGuard::defaults()));
    for _ in 0..MAX_BOUNDARY_DENIALS + 3 {
        b.record(FsOp::Open, Some("/home/u/proj/.env"));
    }
    b.record(FsOp::Open, None);
    let r = b.into_report();
    let (kept, dropped) = (r.denials, r.denials_dropped);
    assert_eq!((kept.len(), dropped), (MAX_BOUNDARY_DENIALS, 4));
    assert_eq!(
        kept[0],
        BoundaryDenial {
            op: FsOp::Open,
            path: ".env".into()
        }
    );
}
