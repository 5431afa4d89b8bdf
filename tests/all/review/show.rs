//! What `warden review` shows of an overlay a real overlayfs mount wrote.

use super::*;
use crate::json_schemas::assert_valid;

/// A run that adds, modifies, deletes, renames, writes a binary file and a
/// symlink, through a real overlay mount.
fn every_kind() -> Reviewed {
    let r = Reviewed::new(&[
        ("keep.txt", "same\n"),
        ("src/lib.rs", "one\ntwo\nthree\n"),
        ("gone.txt", "bye\n"),
        ("old/name.txt", "moved content\n"),
    ]);
    r.run_in_overlay(
        "printf 'one\\nTWO\\nthree\\nfour\\n' > src/lib.rs; \
         rm gone.txt; \
         printf 'fresh\\n' > new.txt; \
         mv old/name.txt moved.txt; \
         printf 'a\\000b' > blob.bin; \
         ln -s /etc/passwd link",
    );
    r
}

#[test]
fn the_diff_marks_new_deleted_binary_renamed_and_symlinks() {
    let r = every_kind();
    let (code, out, err) = r.review(&["review", &r.id(), "--stat"]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "+0 -0 blob.bin (new, binary)",
            "+0 -1 gone.txt (deleted)",
            "+0 -0 link (new, symlink → /etc/passwd)",
            "+0 -0 moved.txt (renamed from old/name.txt)",
            "+1 -0 new.txt (new)",
            "+2 -1 src/lib.rs",
        ],
        "{out}"
    );
    let (code, out, err) = r.review(&["review", "sess-1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("--- a/src/lib.rs\n+++ b/src/lib.rs\n"),
        "{out}"
    );
    assert!(out.contains("-two\n+TWO\n three\n+four\n"), "{out}");
    assert!(out.contains("--- /dev/null\n+++ b/new.txt\n"), "{out}");
    assert!(!out.contains("keep.txt"), "{out}");
    // The symlink was shown, never read through.
    assert!(!out.contains("root:"), "{out}");
}

#[test]
fn review_json_matches_its_schema() {
    let r = every_kind();
    let (code, out, err) = r.review(&["review", "--last", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let docs = assert_valid("review.schema.json", &out);
    let files = docs[0]["files"].as_array().unwrap();
    let renamed = files.iter().find(|f| f["path"] == "moved.txt").unwrap();
    assert_eq!(renamed["change"], "renamed");
    assert_eq!(renamed["from"], "old/name.txt");
    let blob = files.iter().find(|f| f["path"] == "blob.bin").unwrap();
    assert_eq!(blob["binary"], true);
    let (code, out, _) = r.review(&["review", "no-such-id", "--json"]);
    assert_eq!(code, Some(2));
    assert_valid("review.schema.json", &out);
}

#[test]
fn a_directory_replaced_in_the_run_shows_what_it_hid_as_deleted() {
    let r = Reviewed::new(&[("d/a.txt", "a\n"), ("d/b.txt", "b\n")]);
    r.run_in_overlay("rm -r d; mkdir d; printf 'c\\n' > d/c.txt");
    let (code, out, err) = r.review(&["review", &r.id(), "--stat"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("+0 -1 d/a.txt (deleted)"), "{out}");
    assert!(out.contains("+0 -1 d/b.txt (deleted)"), "{out}");
    assert!(out.contains("+1 -0 d/c.txt (new)"), "{out}");
}
