//! Built-in tools through the full pipeline: lexical mapping in the SDK,
//! then the WASI preopen.

use super::*;

#[test]
fn dot_dot_out_of_the_workspace_is_refused_by_every_tool() {
    let sb = Sandbox::new();
    sb.write("a/keep.txt", "keep\n");
    let before = snapshot(&sb.ws());
    for path in [
        "..",
        "../outside",
        "../outside/canary.txt",
        "a/../../outside/canary.txt",
        "./a/./../../outside/canary.txt",
        "../ws-evil/canary.txt",
        "/workspace/../outside/canary.txt",
    ] {
        refused_everywhere(&sb, &FS_TOOLS, path);
    }
    let escaping = format!("{}/../outside/canary.txt", sb.ws().display());
    refused_everywhere(&sb, &FS_TOOLS, &escaping);
    let r = call(
        "read_file",
        json!({"path": "a/../../outside/canary.txt"}),
        &sb.ws(),
        WriteMode::AllowWrite,
    );
    assert!(fs_refused(&r, &sb).contains("escapes the workspace"));
    assert_eq!(snapshot(&sb.ws()), before);
}

#[test]
fn absolute_paths_outside_are_refused() {
    let sb = Sandbox::new();
    let parent = sb.parent();
    for path in [
        sb.canary(),
        parent.join("outside"),
        parent.clone(),
        // Shares the workspace's name as a string prefix, not as a directory.
        parent.join("ws-evil/canary.txt"),
        parent.join("ws-evil"),
        PathBuf::from("/etc/passwd"),
        PathBuf::from("/"),
    ] {
        let path = path.display().to_string();
        refused_everywhere(&sb, &FS_TOOLS, &path);
        let r = call(
            "read_file",
            json!({"path": path}),
            &sb.ws(),
            WriteMode::AllowWrite,
        );
        assert!(fs_refused(&r, &sb).contains("outside the workspace"));
    }
}

#[test]
fn absolute_paths_inside_are_accepted() {
    let sb = Sandbox::new();
    sb.write("a.txt", "inside\n");
    let ws = sb.ws().display().to_string();
    for path in [format!("{ws}/a.txt"), "/workspace/a.txt".to_string()] {
        let r = call(
            "read_file",
            json!({"path": path}),
            &sb.ws(),
            WriteMode::ReadOnly,
        );
        assert_eq!(ok(&r).text, "     1\tinside\n");
    }
    let r = call(
        "write_file",
        json!({"path": format!("{ws}/new/b.txt"), "content": "b"}),
        &sb.ws(),
        WriteMode::AllowWrite,
    );
    assert_eq!(ok(&r).text, "created new/b.txt (1 byte)");
    assert_eq!(sb.read("new/b.txt"), "b");
    let r = call(
        "list_dir",
        json!({"path": ws}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    assert_eq!(ok(&r).text, "a.txt\nnew/\n");
    assert_sealed(&ok(&r).text, &sb);
    sb.assert_canaries_intact();
}

/// Plant links out of the workspace, each with a relative and an absolute target.
fn with_links_out() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("sub/keep.txt", "keep\n");
    let outside = sb.parent().join("outside");
    sb.symlink("../outside/canary.txt", "rel_file");
    sb.symlink(sb.canary(), "abs_file");
    sb.symlink("../outside", "rel_dir");
    sb.symlink(&outside, "abs_dir");
    sb.symlink("../../outside/canary.txt", "sub/deep_file");
    sb.symlink("../outside/new.txt", "rel_dangling");
    sb.symlink(outside.join("new.txt"), "abs_dangling");
    // A chain whose first hop stays inside.
    sb.symlink("rel_file", "chain");
    sb
}

#[test]
fn symlinks_out_are_refused_for_reads() {
    let sb = with_links_out();
    let before = snapshot(&sb.ws());
    for path in ["rel_file", "abs_file", "sub/deep_file", "chain"] {
        refused_everywhere(&sb, &["read_file", "grep"], path);
    }
    for path in ["rel_dir", "abs_dir"] {
        refused_everywhere(&sb, &["list_dir", "glob", "grep"], path);
        refused_everywhere(&sb, &["read_file"], &format!("{path}/canary.txt"));
    }
    assert_eq!(snapshot(&sb.ws()), before);
}

#[test]
fn symlinks_out_are_refused_for_writes_and_edits() {
    let sb = with_links_out();
    let before = snapshot(&sb.ws());
    for path in [
        "rel_file",
        "abs_file",
        "sub/deep_file",
        "chain",
        "rel_dangling",
        "abs_dangling",
        "rel_dir/canary.txt",
        "abs_dir/canary.txt",
        "rel_dir/new.txt",
        "abs_dir/new.txt",
        "rel_dir/newdir/new.txt",
    ] {
        refused_everywhere(&sb, &["write_file", "edit_file"], path);
    }
    for path in ["rel_dangling", "rel_dir/new.txt"] {
        let r = call(
            "write_file",
            json!({"path": path, "content": "x", "create_dirs": false}),
            &sb.ws(),
            WriteMode::AllowWrite,
        );
        fs_refused(&r, &sb);
    }
    assert_eq!(snapshot(&sb.ws()), before);
    sb.assert_canaries_intact();
}

#[test]
fn trailing_slash_and_dot_through_a_link_out_are_refused() {
    let sb = with_links_out();
    for link in ["rel_dir", "abs_dir"] {
        for path in [
            format!("{link}/"),
            format!("{link}/."),
            format!("{link}/./"),
            format!("{link}//"),
        ] {
            refused_everywhere(&sb, &["list_dir", "glob", "grep"], &path);
        }
        for path in [
            format!("{link}/canary.txt"),
            format!("{link}/./canary.txt"),
            format!("{link}//canary.txt"),
        ] {
            refused_everywhere(&sb, &FS_TOOLS, &path);
        }
    }
    for path in ["rel_file/", "abs_file/", "rel_file/."] {
        let r = call(
            "read_file",
            json!({"path": path}),
            &sb.ws(),
            WriteMode::AllowWrite,
        );
        assert!(
            matches!(&r.outcome, ToolOutcome::Error(_)),
            "{path}: {:?}",
            r.outcome
        );
        assert_sealed(&r.outcome.model_text(), &sb);
    }
    sb.assert_canaries_intact();
}

#[test]
fn dot_dot_after_a_link_is_lexical_and_stays_in_the_workspace() {
    // The OS would take `rel_dir/..` to the sandbox's parent; the SDK maps it
    // lexically to the workspace root.
    let sb = with_links_out();
    let r = call(
        "list_dir",
        json!({"path": "rel_dir/.."}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    let text = &ok(&r).text;
    assert!(text.contains("rel_dir -> (symlink)"), "{text}");
    assert!(
        !text.contains("outside") && !text.contains("ws-evil"),
        "{text}"
    );
    assert_sealed(text, &sb);
}

#[test]
fn recursive_tools_do_not_follow_links_out() {
    let sb = with_links_out();
    let r = call(
        "grep",
        json!({"pattern": "stay", "include_hidden": true}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    assert_sealed(&r.outcome.model_text(), &sb);
    let r = call(
        "glob",
        json!({"pattern": "**/*", "include_hidden": true}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    let text = &ok(&r).text;
    assert!(text.contains("rel_dir\n"), "{text}");
    assert!(!text.contains("canary.txt"), "{text}");
    let r = call(
        "list_dir",
        json!({"depth": 5, "include_hidden": true}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    let text = &ok(&r).text;
    assert!(!text.contains("canary.txt"), "{text}");
    assert_sealed(text, &sb);
    sb.assert_canaries_intact();
}

#[test]
fn a_link_planted_by_one_call_is_refused_by_the_next() {
    let sb = populated();
    let rw = ws_grant(&sb.ws(), FsAccess::ReadWrite);
    let r = raw(
        "symlink",
        json!({"target": "../outside/canary.txt", "link": "/workspace/planted"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "symlinked");
    let r = raw(
        "symlink",
        json!({"target": "../outside", "link": "/workspace/planted_dir"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "symlinked");
    let r = raw(
        "symlink",
        json!({"target": sb.canary().display().to_string(), "link": "/workspace/planted_abs"}),
        &rw,
    );
    // Refusing the absolute target at creation is fine; following it is not.
    if let ToolOutcome::Error(e) = &r.outcome {
        assert_eq!(e.kind, ErrorKind::PermissionDenied, "{e:?}");
        assert!(!sb.exists("planted_abs"));
        sb.symlink(sb.canary(), "planted_abs");
    }
    let before = snapshot(&sb.ws());

    for path in ["planted", "planted_abs", "planted_dir/canary.txt"] {
        refused_everywhere(&sb, &FS_TOOLS, path);
        let guest = format!("/workspace/{path}");
        raw_refused(
            &raw("read_path", json!({"path": guest}), &rw),
            ErrorKind::PermissionDenied,
        );
        for (tool, input) in [
            ("write_path", json!({"path": guest, "content": "pwned"})),
            (
                "write_path",
                json!({"path": guest, "content": "pwned", "append": true}),
            ),
            ("open_truncate", json!({"path": guest})),
            ("set_len", json!({"path": guest, "len": 0})),
        ] {
            raw_refused(&raw(tool, input, &rw), ErrorKind::PermissionDenied);
        }
    }
    // A hard link to a link is another name for the link, never for its target.
    let r = raw(
        "hard_link",
        json!({"from": "/workspace/planted", "to": "/workspace/h"}),
        &rw,
    );
    assert_eq!(ok_report(&r), "linked");
    let h = std::fs::symlink_metadata(sb.ws().join("h")).unwrap();
    let canary = std::fs::metadata(sb.canary()).unwrap();
    assert!(h.file_type().is_symlink());
    assert_ne!((h.dev(), h.ino()), (canary.dev(), canary.ino()));
    refused_everywhere(&sb, &["read_file", "write_file"], "h");
    std::fs::remove_file(sb.ws().join("h")).unwrap();
    raw_refused(
        &raw(
            "hard_link",
            json!({"from": "/workspace/planted_dir/canary.txt", "to": "/workspace/h"}),
            &rw,
        ),
        ErrorKind::PermissionDenied,
    );
    for path in ["planted_dir", "planted_dir/", "planted_dir/."] {
        refused_everywhere(&sb, &["list_dir", "glob", "grep"], path);
        raw_refused(
            &raw("list", json!({"path": format!("/workspace/{path}")}), &rw),
            ErrorKind::PermissionDenied,
        );
    }
    for (tool, input) in [
        (
            "write_path",
            json!({"path": "/workspace/planted_dir/new.txt", "content": "x"}),
        ),
        ("mkdir", json!({"path": "/workspace/planted_dir/d"})),
        (
            "rename",
            json!({"from": "/workspace/a.txt", "to": "/workspace/planted_dir/a.txt"}),
        ),
        (
            "rename",
            json!({"from": "/workspace/planted_dir/canary.txt", "to": "/workspace/stolen"}),
        ),
        (
            "hard_link",
            json!({"from": "/workspace/a.txt", "to": "/workspace/planted_dir/h"}),
        ),
        (
            "symlink",
            json!({"target": "x", "link": "/workspace/planted_dir/l"}),
        ),
        (
            "remove",
            json!({"path": "/workspace/planted_dir/canary.txt"}),
        ),
    ] {
        raw_refused(&raw(tool, input, &rw), ErrorKind::PermissionDenied);
    }
    assert_eq!(snapshot(&sb.ws()), before);
    sb.assert_canaries_intact();
}

#[test]
fn nul_bytes_in_paths_are_invalid_input() {
    let sb = Sandbox::new();
    sb.write("a", "a\n");
    for tool in FS_TOOLS {
        for path in ["a\u{0000}b", "a\u{0000}/../../outside/canary.txt"] {
            let r = call(tool, input_for(tool, path), &sb.ws(), WriteMode::AllowWrite);
            assert!(err(&r, ErrorKind::InvalidInput).contains("NUL"), "{tool}");
            assert_sealed(&r.outcome.model_text(), &sb);
        }
    }
    assert_eq!(sb.read("a"), "a\n");
    sb.assert_canaries_intact();
}

#[test]
fn writes_need_the_write_mode() {
    let sb = Sandbox::new();
    sb.write("a.txt", "canary inside\n");
    let before = snapshot(&sb.ws());
    for tool in ["write_file", "edit_file"] {
        for path in ["a.txt", "new.txt"] {
            let r = call(tool, input_for(tool, path), &sb.ws(), WriteMode::ReadOnly);
            if tool == "edit_file" && path == "new.txt" {
                err(&r, ErrorKind::NotFound);
            } else {
                fs_refused(&r, &sb);
            }
        }
    }
    assert_eq!(snapshot(&sb.ws()), before);
    sb.assert_canaries_intact();
}
