use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;
use crate::home::Home;
use crate::overlay::Overlay;

/// A workspace with `files`, and an overlay of it whose upper directory
/// the test fills by hand.
fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, Overlay) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    for (p, c) in files {
        let path = ws.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    std::fs::create_dir_all(&ws).unwrap();
    let overlay = Overlay::create(&Home::at(tmp.path().join("home")), &ws, "t").unwrap();
    (tmp, overlay)
}

fn whiteout(path: &Path) {
    let dir = std::fs::File::open(path.parent().unwrap()).unwrap();
    let name = path.file_name().unwrap();
    rustix::fs::mknodat(
        &dir,
        name,
        FileType::CharacterDevice,
        rustix::fs::Mode::empty(),
        0,
    )
    .unwrap();
}

fn summary(overlay: &Overlay) -> Vec<(String, &'static str)> {
    Changes::read(overlay)
        .unwrap()
        .changes
        .into_iter()
        .map(|c| (c.path, c.kind.word()))
        .collect()
}

fn pairs(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
    list.iter().map(|(p, k)| (p.to_string(), *k)).collect()
}

#[test]
fn an_opaque_directory_hides_what_the_workspace_had_under_it() {
    let (_t, o) = setup(&[("d/a", "a"), ("d/sub/b", "b"), ("keep", "k")]);
    let d = o.upper().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("c"), "c").unwrap();
    let f = std::fs::File::open(&d).unwrap();
    rustix::fs::fsetxattr(
        &f,
        "user.overlay.opaque",
        b"y",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    assert_eq!(
        summary(&o),
        pairs(&[
            ("d/a", "deleted"),
            ("d/c", "added"),
            ("d/sub", "deleted"),
            ("d/sub/b", "deleted")
        ])
    );
}

#[test]
fn a_plain_directory_merges_and_a_whiteout_deletes() {
    let (_t, o) = setup(&[("d/a", "a"), ("d/b", "b"), ("gone/x", "x")]);
    std::fs::create_dir(o.upper().join("d")).unwrap();
    whiteout(&o.upper().join("d/a"));
    whiteout(&o.upper().join("gone"));
    whiteout(&o.upper().join("never-existed"));
    assert_eq!(
        summary(&o),
        pairs(&[
            ("d/a", "deleted"),
            ("gone", "deleted"),
            ("gone/x", "deleted")
        ])
    );
}

#[test]
fn a_deleted_file_whose_content_is_added_elsewhere_is_a_rename() {
    let (_t, o) = setup(&[("old", "same bytes"), ("other", "other")]);
    whiteout(&o.upper().join("old"));
    std::fs::write(o.upper().join("new"), "same bytes").unwrap();
    let changes = Changes::read(&o).unwrap().changes;
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].path, "new");
    assert_eq!(changes[0].kind, ChangeKind::Renamed { from: "old".into() });
}

#[test]
fn symlinks_in_the_upper_directory_are_shown_never_followed() {
    let (t, o) = setup(&[("etc", "workspace file")]);
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret"), "secret").unwrap();
    // A symlink to a directory where the workspace has a file, and one
    // where it has nothing.
    symlink(&outside, o.upper().join("etc")).unwrap();
    symlink(&outside, o.upper().join("new-link")).unwrap();
    let changes = Changes::read(&o).unwrap().changes;
    let kinds: Vec<_> = changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind.word()))
        .collect();
    assert_eq!(kinds, [("etc", "type_changed"), ("new-link", "added")]);
    assert!(!changes.iter().any(|c| c.path.contains("secret")));
    let target = outside.display().to_string();
    assert_eq!(changes[1].new, Some(Node::Symlink { target }));
}

#[test]
fn a_workspace_symlink_is_compared_never_followed() {
    let (t, o) = setup(&[]);
    let outside = t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("f"), "f").unwrap();
    symlink(&outside, t.path().join("ws/linkdir")).unwrap();
    whiteout(&o.upper().join("linkdir"));
    let changes = Changes::read(&o).unwrap().changes;
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].kind, ChangeKind::Deleted);
    assert!(matches!(changes[0].old, Some(Node::Symlink { .. })));
}

#[test]
fn fifos_and_devices_in_the_upper_directory_are_unsupported_and_never_opened() {
    let (_t, o) = setup(&[]);
    let up = std::fs::File::open(o.upper()).unwrap();
    rustix::fs::mknodat(
        &up,
        "fifo",
        FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    rustix::fs::mknodat(
        &up,
        "null",
        FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o600),
        rustix::fs::makedev(1, 3),
    )
    .unwrap();
    // Reading the FIFO would block this test forever.
    let changes = Changes::read(&o).unwrap();
    let kinds: Vec<_> = changes
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind.word()))
        .collect();
    assert_eq!(kinds, [("fifo", "unsupported"), ("null", "unsupported")]);
    assert!(changes.content(Side::Overlay, "fifo").is_err());
}

#[test]
fn a_huge_file_is_hashed_but_never_read_whole() {
    let (_t, o) = setup(&[]);
    let f = std::fs::File::create(o.upper().join("huge")).unwrap();
    f.set_len(MAX_DIFF_BYTES + 1).unwrap();
    let changes = Changes::read(&o).unwrap();
    assert_eq!(
        changes.content(Side::Overlay, "huge").unwrap(),
        Content::TooLarge(MAX_DIFF_BYTES + 1)
    );
}

#[test]
fn binary_means_a_nul_early_or_not_utf8() {
    assert_eq!(classify(b"a\0b".to_vec()), Content::Binary);
    assert_eq!(classify(vec![0xff, 0xfe]), Content::Binary);
    assert_eq!(classify(b"text\n".to_vec()), Content::Text("text\n".into()));
}

#[test]
fn same_content_is_no_change_and_a_new_mode_is_a_mode_change() {
    use std::os::unix::fs::PermissionsExt;
    let (_t, o) = setup(&[("same", "s"), ("exec", "e")]);
    std::fs::write(o.upper().join("same"), "s").unwrap();
    std::fs::write(o.upper().join("exec"), "e").unwrap();
    let p = o.upper().join("exec");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ws = o.meta().workspace.join("exec");
    std::fs::set_permissions(&ws, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(
        o.meta().workspace.join("same"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(
        o.upper().join("same"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    assert_eq!(summary(&o), pairs(&[("exec", "mode_changed")]));
}
