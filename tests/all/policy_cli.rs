//! `warden policy list | check | explain`.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

fn cli(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    catalog();
    let o = warden(home).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

#[test]
fn list_shows_shipped_and_user_policies() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("policies")).unwrap();
    std::fs::write(
        home.path().join("policies/mine.toml"),
        "name = \"mine\"\ndescription = \"my own\"\nmode = \"read-only\"\n",
    )
    .unwrap();
    std::fs::write(home.path().join("policies/broken.toml"), "name = 5\n").unwrap();
    let (code, out, _) = cli(home.path(), &["policy", "list", "--json"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&out).unwrap();
    let rows: Vec<(String, String)> = v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let names: Vec<_> = rows.iter().map(|(n, s)| format!("{n}:{s}")).collect();
    assert_eq!(
        names,
        [
            "workspace-write:shipped",
            "read-only:shipped",
            "strict:shipped",
            "ci:shipped",
            "broken:user",
            "mine:user"
        ]
    );
    assert!(
        v["policies"][4]["description"]
            .as_str()
            .unwrap()
            .starts_with("INVALID: "),
        "{v}"
    );
    assert_eq!(v["policies"][5]["description"], "my own");
}

#[test]
fn every_shipped_policy_passes_its_own_inline_tests() {
    for name in ["workspace-write", "read-only", "strict", "ci"] {
        let file = repo().join(format!("policies/{name}.toml"));
        let (code, out, err) = cli(
            shared_home(),
            &["policy", "check", file.to_str().unwrap(), "--json"],
        );
        assert_eq!(code, Some(0), "{name}: {out}{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["failed"], 0, "{name}: {v}");
        assert!(
            v["tests"].as_array().unwrap().len() >= 3,
            "{name} has too few inline tests"
        );
    }
}

#[test]
fn check_reports_invalid_files_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\nmode = \"ask\"\nbogus = 1\n").unwrap();
    let (code, _, err) = cli(shared_home(), &["policy", "check", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("bad.toml:3:1: unknown field `bogus`"), "{err}");

    let glob = dir.path().join("glob.toml");
    std::fs::write(
        &glob,
        "name = \"x\"\n[[rule]]\nname = \"r\"\ntools = [\"[oops\"]\ndecision = \"deny\"\n",
    )
    .unwrap();
    let (code, _, err) = cli(shared_home(), &["policy", "check", glob.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.contains("glob.toml:") && err.contains("[oops"), "{err}");
}

#[test]
fn check_refuses_rules_that_can_never_fire_and_explain_warns() {
    let dir = tempfile::tempdir().unwrap();
    let head = "name = \"p\"\ndescription = \"d\"\nmode = \"auto\"\n";
    let typo = dir.path().join("typo.toml");
    std::fs::write(
        &typo,
        format!(
            "{head}[[rule]]\nname = \"w\"\ntools = [\"write_fil\"]\ndecision = \"deny\"\n\
             [[rule]]\nname = \"a\"\ntools = [\"edit_file\"]\ndecision = \"deny\"\n\
             args.pth = {{ glob = \"x/**\" }}\n"
        ),
    )
    .unwrap();
    let (code, _, err) = cli(shared_home(), &["policy", "check", typo.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "rule `w`: no installed plugin provides a tool `write_fil` (did you mean `write_file`?)"
        ),
        "{err}"
    );
    assert!(
        err.contains("rule `a`: `args.pth` is not an argument of edit_file (did you mean `path`?)"),
        "{err}"
    );
    let (code, out, _) = cli(
        shared_home(),
        &[
            "policy",
            "explain",
            "--policy",
            typo.to_str().unwrap(),
            "write_file",
        ],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("warning:  rule `w`: no installed plugin"),
        "{out}"
    );

    // A rule for a plugin not installed here says so, and passes.
    let elsewhere = dir.path().join("elsewhere.toml");
    std::fs::write(
        &elsewhere,
        format!("{head}[[rule]]\nname = \"d\"\ntools = [\"deploy\"]\nplugin = \"deployer\"\ndecision = \"ask\"\n"),
    )
    .unwrap();
    let (code, out, err) = cli(
        shared_home(),
        &["policy", "check", elsewhere.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn check_refuses_a_grant_table_for_a_misspelt_tool() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("grant.toml");
    std::fs::write(
        &typo,
        "name = \"p\"\ndescription = \"d\"\nmode = \"auto\"\n\
         [grants.tool.write_fil]\nworkspace = \"read-write\"\n",
    )
    .unwrap();
    let (code, _, err) = cli(shared_home(), &["policy", "check", typo.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "`[grants.tool.write_fil]`: no installed plugin provides a tool `write_fil` \
             (did you mean `write_file`?)"
        ),
        "{err}"
    );
    let (code, out, _) = cli(
        shared_home(),
        &["policy", "check", typo.to_str().unwrap(), "--json"],
    );
    assert_eq!(code, Some(2), "{out}");
    let doc: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(doc["lints"][0]["type"], "unknown_grant_tool", "{doc}");
    assert_eq!(doc["lints"][0]["suggestion"], "write_file", "{doc}");
}

#[test]
fn check_refuses_a_grant_table_for_a_misspelt_plugin_and_explain_warns() {
    let dir = tempfile::tempdir().unwrap();
    let head = "name = \"p\"\ndescription = \"d\"\nmode = \"auto\"\n";
    let typo = dir.path().join("plugin.toml");
    std::fs::write(
        &typo,
        format!("{head}[grants.plugin.fss]\nworkspace = \"read-write\"\n"),
    )
    .unwrap();
    let (code, _, err) = cli(shared_home(), &["policy", "check", typo.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "`[grants.plugin.fss]`: no plugin `fss` is built in or installed \
             (did you mean `fs`?)"
        ),
        "{err}"
    );
    let (code, out, _) = cli(
        shared_home(),
        &["policy", "check", typo.to_str().unwrap(), "--json"],
    );
    assert_eq!(code, Some(2), "{out}");
    let docs = crate::json_schemas::assert_valid("policy-check.schema.json", &out);
    assert_eq!(docs[0]["lints"][0]["type"], "unknown_grant_plugin");
    assert_eq!(docs[0]["lints"][0]["suggestion"], "fs");

    let explain = |json: bool| {
        let mut args = vec![
            "policy",
            "explain",
            "--policy",
            typo.to_str().unwrap(),
            "read_file",
        ];
        if json {
            args.push("--json");
        }
        cli(shared_home(), &args)
    };
    let (code, out, _) = explain(false);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("warning:  `[grants.plugin.fss]`"), "{out}");
    let (_, out, _) = explain(true);
    let docs = crate::json_schemas::assert_valid("policy-explain.schema.json", &out);
    assert_eq!(docs[0]["warnings"][0]["plugin"], "fss");

    // A rule placing the plugin among those not installed here lets it pass.
    let elsewhere = dir.path().join("elsewhere.toml");
    std::fs::write(
        &elsewhere,
        format!(
            "{head}[[rule]]\nname = \"d\"\ntools = [\"deploy\"]\nplugin = \"deployer\"\n\
             decision = \"ask\"\n[grants.plugin.deployer]\nworkspace = \"read-only\"\n"
        ),
    )
    .unwrap();
    let (code, out, err) = cli(
        shared_home(),
        &["policy", "check", elsewhere.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{out}{err}");
}

#[test]
fn explain_shows_the_destinations_an_approval_may_add() {
    let fetch = |json: bool| {
        let mut args = vec![
            "policy",
            "explain",
            "--policy",
            "workspace-write",
            "http_fetch",
            "-i",
            r#"{"url":"https://example.com/"}"#,
        ];
        if json {
            args.push("--json");
        }
        cli(shared_home(), &args)
    };
    let (code, out, err) = fetch(false);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("decision: ask"), "{out}");
    assert!(
        out.contains("\n          network none; may be approved: https://*, http://*\n"),
        "{out}"
    );
    let (_, out, _) = fetch(true);
    let docs = crate::json_schemas::assert_valid("policy-explain.schema.json", &out);
    assert_eq!(
        docs[0]["grant"]["network_ask"],
        serde_json::json!(["https://*", "http://*"])
    );

    // A tool that declares no network cannot be approved any.
    let (code, out, err) = cli(
        shared_home(),
        &[
            "policy",
            "explain",
            "--policy",
            "workspace-write",
            "write_file",
            "-i",
            r#"{"path":"a.txt","content":"x"}"#,
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\n          network none\n"), "{out}");
    assert!(!out.contains("may be approved"), "{out}");
}

#[test]
fn check_fails_when_an_inline_test_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    std::fs::write(
        &file,
        "name = \"p\"\nmode = \"auto\"\n[[test]]\nname = \"writes are denied\"\ntool = \"write_file\"\n\
         input = { path = \"a.txt\", content = \"x\" }\nexpect = \"deny\"\n",
    )
    .unwrap();
    let (code, out, _) = cli(shared_home(), &["policy", "check", file.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(
            "FAIL writes are denied: expected deny, got allow (no rule matched; mode auto)"
        ),
        "{out}"
    );
    assert!(out.contains("0 of 1 inline tests passed"), "{out}");
}

#[test]
fn explain_names_the_deciding_rule_and_the_grant() {
    let (code, out, err) = cli(
        shared_home(),
        &[
            "policy",
            "explain",
            "--policy",
            "workspace-write",
            "write_file",
            "-i",
            r#"{"path":".git/config","content":"x"}"#,
            "--json",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"]["verdict"], "deny");
    assert_eq!(v["decision"]["by"]["rule"]["name"], "protected-paths");
    assert_eq!(v["grant"]["workspace"], "read-write");

    let (_, out, _) = cli(
        shared_home(),
        &[
            "policy",
            "explain",
            "--policy",
            "read-only",
            "grep",
            "-i",
            r#"{"pattern":"x"}"#,
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"]["verdict"], "allow");
    assert_eq!(v["grant"]["workspace"], "read-only");

    let (_, out, _) = cli(
        shared_home(),
        &[
            "policy",
            "explain",
            "--policy",
            "strict",
            "edit_file",
            "-i",
            r#"{"path":"a","old_string":"a","new_string":"b"}"#,
        ],
    );
    assert!(
        out.contains("decision: ask — no rule matched; mode ask"),
        "{out}"
    );
    assert!(out.contains("deadline 10000 ms, memory 128 MiB"), "{out}");

    let (code, _, err) = cli(
        shared_home(),
        &["policy", "explain", "--policy", "nope", "grep"],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("no policy named nope"), "{err}");
}

#[test]
fn explain_shows_the_extra_directories_a_call_gets() {
    let dir = tempfile::tempdir().unwrap();
    let data = std::fs::canonicalize(dir.path())
        .unwrap()
        .display()
        .to_string();
    let gone = format!("{data}/gone");
    let policy = dir.path().join("extra.toml");
    std::fs::write(
        &policy,
        format!(
            "name = 'extra'\nmode = 'auto'\n[grants.default]\nworkspace = 'read-write'\n\
             extra_dirs = [{{ path = '{data}', access = 'read-write' }}, \
             {{ path = '{gone}', access = 'read-only' }}]\n"
        ),
    )
    .unwrap();
    let policy = policy.to_str().unwrap();
    let explain = |tool: &str, json: bool| {
        let mut args = vec!["policy", "explain", "--policy", policy, tool, "-i", "{}"];
        if json {
            args.push("--json");
        }
        let (code, out, err) = cli(shared_home(), &args);
        assert_eq!(code, Some(0), "{err}");
        out
    };
    let out = explain("write_file", false);
    assert!(
        out.contains(&format!("          extra directory {data} read-write\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "cut:      declared filesystem: read-write → granted without the extra \
             directory {gone}: it does not exist or is not a directory"
        )),
        "{out}"
    );
    // A read-only tool gets the directory read-only.
    let v: Value = serde_json::from_str(&explain("read_file", true)).unwrap();
    assert_eq!(
        v["grant"]["extra_dirs"],
        serde_json::json!([{"path": data, "access": "read-only"}])
    );
    let cuts = v["grant_cuts"].as_array().unwrap();
    assert!(
        cuts.iter()
            .any(|c| c["granted"].as_str().unwrap().contains(&gone)),
        "{v}"
    );
}

#[test]
fn tool_call_under_a_policy_is_decided_and_granted_by_it() {
    let sb = Sandbox::new();
    sb.write("a.txt", "alpha\n");
    let ws = sb.ws();
    let call = |policy: &str, tool: &str, input: &str| {
        let o = warden(shared_home())
            .args([
                "tool", "call", tool, "--policy", policy, "--json", "--input", input,
            ])
            .current_dir(&ws)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v)
    };
    catalog();

    // The default policy lets a write through, without --allow-write.
    let (code, v) = call(
        "workspace-write",
        "write_file",
        r#"{"path":"b.txt","content":"b"}"#,
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["grant"]["filesystem"]["access"], "read-write");
    assert_eq!(sb.read("b.txt"), "b");

    // A protected path is denied before anything runs: exit 3, the reason names the rule.
    let (code, v) = call(
        "workspace-write",
        "write_file",
        r#"{"path":".env","content":"x"}"#,
    );
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(v["outcome"]["type"], "denied");
    let reason = v["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("denied by rule protected-paths of policy workspace-write"),
        "{reason}"
    );
    assert!(!sb.exists(".env"));

    // Plan mode denies writes by its mode, and grants read-only access to reads.
    let (code, v) = call(
        "read-only",
        "edit_file",
        r#"{"path":"a.txt","old_string":"alpha","new_string":"x"}"#,
    );
    assert_eq!(code, Some(3), "{v}");
    assert!(
        v["outcome"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("denied by read-only mode"),
        "{v}"
    );
    let (code, v) = call("read-only", "read_file", r#"{"path":"a.txt"}"#);
    assert_eq!(
        (code, v["grant"]["filesystem"]["access"].as_str()),
        (Some(0), Some("read-only"))
    );

    // An ask with no one to approve it is refused, with the reason.
    let (code, v) = call(
        "strict",
        "edit_file",
        r#"{"path":"a.txt","old_string":"alpha","new_string":"x"}"#,
    );
    assert_eq!(code, Some(3), "{v}");
    assert!(
        v["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("needs approval under ask mode of policy strict"),
        "{v}"
    );
    assert_eq!(sb.read("a.txt"), "alpha\n");
    assert_eq!(v["decision"]["verdict"], "ask");

    // An unknown policy is a usage error.
    let (code, v) = call("no-such-policy", "read_file", r#"{"path":"a.txt"}"#);
    assert_eq!(code, Some(2), "{v}");
    sb.assert_canaries_intact();
}

/// `policy explain` for the shell tool, with `$HOME` fixed so toolchain
/// directories print the same everywhere.
fn explain_shell(policy: &str, input: &str, json: bool) -> (Option<i32>, String, String) {
    catalog();
    let mut args = vec![
        "policy", "explain", "--policy", policy, "shell", "-i", input,
    ];
    if json {
        args.push("--json");
    }
    let o = warden(shared_home())
        .env("HOME", "/home/user")
        .args(&args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

#[test]
fn explain_shows_the_decision_of_each_part_of_a_command() {
    let input = r#"{"command":"cargo test && git push"}"#;
    let (code, out, err) = explain_shell("workspace-write", input, false);
    assert_eq!(code, Some(0), "{err}");
    insta::assert_snapshot!("explain_shell_text", out);

    let (code, out, err) = explain_shell("workspace-write", input, true);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["decision"]["verdict"], "deny");
    assert_eq!(v["decision"]["parts"][0]["verdict"], "allow");
    assert_eq!(
        v["decision"]["parts"][1]["by"]["rule"]["name"],
        "no-network-commands"
    );
    // The runtime's limits are left out: they are not this test's subject.
    let shown = serde_json::json!({
        "plugin": v["plugin"],
        "plugin_installed": v["plugin_installed"],
        "decision": v["decision"],
        "process": v["grant"]["process"],
    });
    insta::assert_json_snapshot!("explain_shell_json", shown);

    // Other tools' decisions carry no parts and no process grant.
    let (_, out, _) = cli(
        shared_home(),
        &[
            "policy",
            "explain",
            "--policy",
            "workspace-write",
            "read_file",
            "-i",
            r#"{"path":"a"}"#,
            "--json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["decision"].get("parts").is_none(), "{v}");
    assert!(v["grant"].get("process").is_none(), "{v}");
}

#[test]
fn explain_names_a_weaker_confinement() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("weak.toml");
    std::fs::write(
        &file,
        "name = 'weak'\nmode = 'ask'\n[grants.tool.shell.process]\nenabled = true\n\
         confinement = 'unbounded-processes'\ntoolchains = ['/opt/venv']\n",
    )
    .unwrap();
    let (code, out, err) = explain_shell(file.to_str().unwrap(), r#"{"command":"ls"}"#, false);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("process:  enabled, confinement unbounded-processes\n"),
        "{out}"
    );
    assert!(
        out.contains("          toolchains (read-only) /opt/venv\n"),
        "{out}"
    );
    assert!(
        out.contains("warning:  confinement unbounded-processes: where no pids cgroup"),
        "{out}"
    );
    // Full confinement needs no warning; no grant, no processes.
    let (_, out, _) = explain_shell("strict", r#"{"command":"ls"}"#, false);
    assert!(
        out.contains("confinement full") && !out.contains("warning:"),
        "{out}"
    );
    let (_, out, _) = explain_shell(file.to_str().unwrap(), "{}", true);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["grant"]["process"]["confinement"], "unbounded-processes");
}

#[test]
fn check_runs_shell_tests_without_the_shell_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    std::fs::write(
        &file,
        "name = 'p'\nmode = 'auto-edit'\n[[rule]]\nname = 'read'\ndecision = 'allow'\n\
         commands = ['ls', 'wc']\n\
         [[test]]\nname = 'pipes run'\ntool = 'shell'\ninput = { command = 'ls | wc -l' }\nexpect = 'allow'\n\
         [[test]]\nname = 'wrong on purpose'\ntool = 'shell'\ninput = { command = 'ls > x' }\nexpect = 'allow'\n",
    )
    .unwrap();
    let (code, out, _) = cli(shared_home(), &["policy", "check", file.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("  ok   pipes run: expected allow, got allow (rule read)"),
        "{out}"
    );
    assert!(
        out.contains("  FAIL wrong on purpose: expected allow, got ask (rule shell-safety)"),
        "{out}"
    );

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = 'p'\n[[rule]]\nname = 'r'\ndecision = 'allow'\ncommands = ['git status; rm']\n",
    )
    .unwrap();
    let (code, _, err) = cli(shared_home(), &["policy", "check", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("bad.toml:5:13: rule `r`: bad prefix `git status; rm` in `commands`: `;` is shell syntax"),
        "{err}"
    );
}
