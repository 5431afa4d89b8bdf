//! `warden review list | discard | clean`, and ids that are not overlays.

use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn list_shows_each_overlay_with_its_state_changes_and_size() {
    let r = Reviewed::new(&[("a.txt", "a\n")]);
    r.run_in_overlay("printf 'A\\n' > a.txt; printf 'b\\n' > b.txt");
    let home = Home::at(r.home.path().into());
    let mut dead = Overlay::create(&home, &r.sb.ws(), "test").unwrap();
    dead.meta_mut().pid = dead_pid();
    dead.save().unwrap();
    let (code, out, err) = r.review(&["review", "list"]);
    assert_eq!(code, Some(0), "{err}");
    let row = out.lines().find(|l| l.starts_with(&r.id())).unwrap();
    assert!(row.contains("sess-1") && row.contains("finished"), "{out}");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[4], "2", "{out}");
    let dead_row = out.lines().find(|l| l.starts_with(dead.id())).unwrap();
    assert!(dead_row.contains("interrupted"), "{out}");
    let (_, out, _) = r.review(&["review", "list", "--json"]);
    let doc = crate::json_schemas::assert_valid("review-list.schema.json", &out).remove(0);
    let first = doc["overlays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == r.id().as_str())
        .unwrap()
        .clone();
    assert_eq!(first["changes"], 2);
    assert!(first["bytes"].as_u64().unwrap() > 0);
}

#[test]
fn discard_leaves_nothing_behind_of_a_mounted_overlay() {
    let r = Reviewed::new(&[("a.txt", "a\n"), ("d/x", "x\n")]);
    r.run_in_overlay(
        "rm a.txt; rm -r d; mkdir d; chmod 000 d; printf 'n' > n.txt; chmod 000 n.txt",
    );
    assert!(
        r.overlay.work().join("work").exists(),
        "overlayfs made work/work"
    );
    let dir = r.overlay.dir().to_path_buf();
    let (code, out, err) = r.review(&["review", "discard", &r.id()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!dir.exists());
    assert_eq!(tree(&r.home.path().join("overlays")), Vec::<String>::new());
    assert_eq!(r.sb.read("a.txt"), "a\n", "the workspace is untouched");
    let events = r.audit_events("overlay_discarded");
    assert_eq!(events[0]["by"], "discard");
    assert_eq!(events[0]["overlay"], r.id().as_str());
}

#[test]
fn discard_as_an_unprivileged_user_removes_unreadable_and_foreign_entries() {
    let r = Reviewed::new(&[("a.txt", "a\n")]);
    let upper = r.upper();
    std::fs::create_dir_all(upper.join("locked/inner")).unwrap();
    std::fs::write(upper.join("locked/inner/f"), "f").unwrap();
    std::fs::create_dir_all(r.overlay.work().join("work")).unwrap();
    let chown = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(r.home.path())
        .status()
        .unwrap();
    assert!(chown.success());
    // A file of another owner, and directories their owner cannot read.
    std::fs::write(upper.join("root-owned"), "r").unwrap();
    std::fs::set_permissions(
        upper.join("root-owned"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    std::fs::set_permissions(
        upper.join("locked/inner"),
        std::fs::Permissions::from_mode(0o500),
    )
    .unwrap();
    std::fs::set_permissions(upper.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(
        r.overlay.work().join("work"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_warden"))
        .args(["review", "discard", &r.id()])
        .env("WARDEN_HOME", r.home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!r.overlay.dir().exists());
}

#[test]
fn clean_discards_old_finished_and_interrupted_overlays_never_a_running_one() {
    let r = Reviewed::new(&[("a.txt", "a\n")]);
    let home = Home::at(r.home.path().into());
    let make = |state, pid, created: &str| {
        let mut o = Overlay::create(&home, &r.sb.ws(), "test").unwrap();
        o.meta_mut().state = state;
        o.meta_mut().pid = pid;
        o.meta_mut().created = created.to_string();
        o.save().unwrap();
        o
    };
    let old = "2020-01-01T00:00:00Z";
    let running = make(OverlayState::Running, std::process::id(), old);
    let interrupted = make(OverlayState::Running, dead_pid(), old);
    let finished_old = make(OverlayState::Finished, 1, old);
    let (code, out, err) = r.review(&["review", "clean", "--older-than", "7d"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(running.dir().exists(), "a running overlay is never cleaned");
    assert!(!interrupted.dir().exists());
    assert!(!finished_old.dir().exists());
    assert!(r.overlay_exists(), "the new one stays");
    let events = r.audit_events("overlay_discarded");
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e["by"] == "clean"));
}

#[test]
fn ids_that_are_not_overlays_get_typed_errors() {
    let r = Reviewed::new(&[("a.txt", "a\n")]);
    for bad in ["../../etc", "no-such", "/tmp", ".", "a/b"] {
        for args in [
            vec!["review", bad],
            vec!["review", "apply", bad],
            vec!["review", "discard", bad],
        ] {
            let (code, _, err) = r.review(&args);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            assert!(err.contains("no overlay or session"), "{err}");
        }
    }
    let (code, _, err) = r.review(&["review", "apply"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(r.overlay_exists());
}
