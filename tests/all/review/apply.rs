//! `warden review apply`: atomic per file, a three-way check, symlinks
//! in the workspace never followed, audited before anything is written.

use std::os::unix::fs::PermissionsExt;

use super::*;

fn edited() -> Reviewed {
    let r = Reviewed::new(&[
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("sub/c.txt", "c\n"),
        ("old.txt", "renamed content\n"),
    ]);
    r.run_in_overlay(
        "printf 'A\\n' > a.txt; rm b.txt; printf 'C\\n' > sub/c.txt; \
         printf 'new\\n' > sub/new.txt; chmod 755 sub/new.txt; mv old.txt moved.txt; \
         ln -s a.txt link; mkdir -p fresh/deep; printf 'x\\n' > fresh/deep/x.txt",
    );
    r
}

#[test]
fn apply_writes_every_change_audits_it_and_removes_the_overlay() {
    let r = edited();
    let (code, out, err) = r.review(&["review", "apply", &r.id()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(r.sb.read("a.txt"), "A\n");
    assert!(!r.sb.exists("b.txt"));
    assert_eq!(r.sb.read("sub/c.txt"), "C\n");
    assert_eq!(r.sb.read("sub/new.txt"), "new\n");
    let mode = std::fs::metadata(r.sb.ws().join("sub/new.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert!(!r.sb.exists("old.txt"));
    assert_eq!(r.sb.read("moved.txt"), "renamed content\n");
    assert_eq!(
        std::fs::read_link(r.sb.ws().join("link")).unwrap(),
        Path::new("a.txt")
    );
    assert_eq!(r.sb.read("fresh/deep/x.txt"), "x\n");
    assert_eq!(
        tree(&r.sb.ws()),
        [
            "a.txt",
            "fresh",
            "fresh/deep",
            "fresh/deep/x.txt",
            "link",
            "moved.txt",
            "sub",
            "sub/c.txt",
            "sub/new.txt"
        ]
    );
    assert!(
        !r.overlay_exists(),
        "every change applied: the overlay goes"
    );
    let events = r.audit_events("overlay_applied");
    assert_eq!(events.len(), 1);
    let files = events[0]["files"].as_array().unwrap();
    let a = files.iter().find(|f| f["path"] == "a.txt").unwrap();
    assert_eq!(a["change"], "modified");
    assert_eq!(a["sha256"], warden::base::sha256_hex(b"A\n"));
    let moved = files.iter().find(|f| f["path"] == "moved.txt").unwrap();
    assert_eq!(moved["from"], "old.txt");
    r.sb.assert_canaries_intact();
}

#[test]
fn apply_selected_paths_leaves_the_rest_in_the_overlay() {
    let r = edited();
    let (code, out, err) = r.review(&["review", "apply", "--last", "sub", "a.txt"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(r.sb.read("a.txt"), "A\n");
    assert_eq!(r.sb.read("sub/c.txt"), "C\n");
    assert_eq!(r.sb.read("sub/new.txt"), "new\n");
    assert_eq!(r.sb.read("b.txt"), "b\n", "not selected");
    assert!(r.sb.exists("old.txt"));
    let (code, out, err) = r.review(&["review", &r.id(), "--stat"]);
    assert_eq!(code, Some(0), "{err}");
    let left: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        left,
        [
            "+0 -1 b.txt (deleted)",
            "+0 -0 fresh (new, directory)",
            "+0 -0 fresh/deep (new, directory)",
            "+1 -0 fresh/deep/x.txt (new)",
            "+0 -0 link (new, symlink → a.txt)",
            "+0 -0 moved.txt (renamed from old.txt)",
        ],
        "{out}"
    );
}

#[test]
fn a_file_changed_since_the_run_started_conflicts_and_nothing_is_applied() {
    let r = edited();
    r.sb.write("a.txt", "edited by the user meanwhile\n");
    let (code, out, err) = r.review(&["review", "apply", &r.id()]);
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(
        err.contains("conflict: a.txt: changed in the workspace since the run started"),
        "{err}"
    );
    assert!(err.contains("nothing was applied"), "{err}");
    assert_eq!(r.sb.read("a.txt"), "edited by the user meanwhile\n");
    assert_eq!(r.sb.read("b.txt"), "b\n", "no other file applied either");
    assert!(!r.sb.exists("sub/new.txt"));
    assert!(r.audit_events("overlay_applied").is_empty());

    let (code, out, err) = r.review(&["review", "apply", &r.id(), "--force"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(r.sb.read("a.txt"), "A\n");
    let events = r.audit_events("overlay_applied");
    assert_eq!(events[0]["forced"], true);
}

#[test]
fn a_file_created_or_deleted_since_conflicts_unless_it_already_matches() {
    let r = edited();
    r.sb.write("sub/new.txt", "someone else's\n");
    std::fs::remove_file(r.sb.ws().join("sub/c.txt")).unwrap();
    // The same content as the overlay's is no conflict.
    r.sb.write("fresh/deep/x.txt", "x\n");
    let (code, _, err) = r.review(&["review", "apply", &r.id()]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("conflict: sub/new.txt: created in the workspace since"),
        "{err}"
    );
    assert!(
        err.contains("conflict: sub/c.txt: deleted in the workspace since"),
        "{err}"
    );
    assert!(!err.contains("x.txt"), "{err}");
    assert_eq!(r.sb.read("a.txt"), "a\n");
}

#[test]
fn apply_never_follows_a_symlink_placed_in_the_workspace() {
    let r = Reviewed::new(&[("a.txt", "a\n"), ("sub/inner/c.txt", "c\n")]);
    r.run_in_overlay("printf 'A\\n' > a.txt; printf 'C\\n' > sub/inner/c.txt");
    // The user replaced `sub` by a link to a directory outside that has an
    // `inner/` too, and `a.txt` by a link to the canary.
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().to_path_buf();
    std::fs::create_dir_all(elsewhere.join("inner")).unwrap();
    std::fs::remove_dir_all(r.sb.ws().join("sub")).unwrap();
    r.sb.symlink(&elsewhere, "sub");
    std::fs::remove_file(r.sb.ws().join("a.txt")).unwrap();
    r.sb.symlink(r.sb.canary(), "a.txt");
    // Only the file selected: a directory on its way is a link now.
    let (code, _, err) = r.review(&["review", "apply", &r.id(), "sub/inner/c.txt"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("sub/inner/c.txt: a symlink or a file now stands on its way"),
        "{err}"
    );
    let (code, _, err) = r.review(&["review", "apply", &r.id(), "sub/inner/c.txt", "--force"]);
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("a symlink on the way is refused"), "{err}");
    assert_eq!(
        tree(&elsewhere),
        ["inner"],
        "nothing written through the link"
    );
    // The directory selected too: the link is replaced by it, not followed.
    let (code, _, err) = r.review(&["review", "apply", &r.id(), "sub", "--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        std::fs::symlink_metadata(r.sb.ws().join("sub"))
            .unwrap()
            .is_dir()
    );
    assert_eq!(r.sb.read("sub/inner/c.txt"), "C\n");
    assert_eq!(
        tree(&elsewhere),
        ["inner"],
        "nothing written through the link"
    );
    let (code, _, err) = r.review(&["review", "apply", &r.id(), "a.txt", "--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !std::fs::symlink_metadata(r.sb.ws().join("a.txt"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(r.sb.read("a.txt"), "A\n");
    r.sb.assert_canaries_intact();
}

#[test]
fn apply_refuses_a_running_overlay() {
    let mut r = edited();
    r.overlay.meta_mut().state = OverlayState::Running;
    r.overlay.meta_mut().pid = std::process::id();
    r.overlay.save().unwrap();
    let (code, _, err) = r.review(&["review", "apply", &r.id()]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("still going"), "{err}");
    assert_eq!(r.sb.read("a.txt"), "a\n");
}

#[test]
fn apply_writes_nothing_when_its_audit_record_cannot_be_written() {
    let r = edited();
    std::fs::write(r.home.path().join("audit"), "not a directory").unwrap();
    let (code, _, err) = r.review(&["review", "apply", &r.id()]);
    assert_eq!(code, Some(5), "{err}");
    assert!(err.contains("nothing was applied"), "{err}");
    assert_eq!(r.sb.read("a.txt"), "a\n");
    assert!(r.sb.exists("b.txt"));
    assert!(r.overlay_exists());
}

#[test]
fn selected_paths_outside_the_workspace_are_refused() {
    let r = edited();
    for bad in ["../outside/canary.txt", "/etc/passwd", "..", "", "nope.txt"] {
        let (code, _, err) = r.review(&["review", "apply", &r.id(), bad]);
        assert_eq!(code, Some(2), "{bad}: {err}");
    }
    let (_, _, err) = r.review(&["review", "apply", &r.id(), "../x"]);
    assert!(err.contains("is not a path inside the workspace"), "{err}");
    let (_, _, err) = r.review(&["review", "apply", &r.id(), "nope.txt"]);
    assert!(err.contains("no change at nope.txt"), "{err}");
    assert_eq!(r.sb.read("a.txt"), "a\n");
    r.sb.assert_canaries_intact();
}

#[test]
fn an_opaque_directory_applied_in_part_keeps_the_rest_reviewable() {
    let r = Reviewed::new(&[("d/a.txt", "a\n"), ("d/b.txt", "b\n")]);
    r.run_in_overlay("rm -r d; mkdir d; printf 'c\\n' > d/c.txt");
    let (code, _, err) = r.review(&["review", "apply", &r.id(), "d/c.txt"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(r.sb.read("d/c.txt"), "c\n");
    assert!(r.sb.exists("d/a.txt"));
    let (_, out, _) = r.review(&["review", &r.id(), "--stat"]);
    let left: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        left,
        ["+0 -1 d/a.txt (deleted)", "+0 -1 d/b.txt (deleted)"],
        "{out}"
    );
    let (code, _, err) = r.review(&["review", "apply", &r.id()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(tree(&r.sb.ws()), ["d", "d/c.txt"]);
    assert!(!r.overlay_exists());
}
