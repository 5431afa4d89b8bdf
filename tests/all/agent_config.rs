//! `warden run` configured by `$WARDEN_HOME/config.toml`: the provider,
//! model, base URL and key it names reach the mock model; flags and the
//! environment beat it; a key other users could read is refused; and the
//! key is written nowhere.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use warden::provider::WireFormat;

use crate::agent_http::provider_flag;
use crate::mock_model::{MockModel, Script};
use crate::support::{Sandbox, fresh_home, warden};

const CONFIG_KEY: &str = "sk-config-4242-CONFSECRET";
const ENV_KEY: &str = "sk-env-7777-ENVSECRET";

/// `warden` for `home` with no key or provider setting inherited.
fn clean(home: &Path) -> Command {
    let mut cmd = warden(home);
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "WARDEN_PROVIDER",
        "WARDEN_MODEL",
        "WARDEN_BASE_URL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn write_private(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every file under `dir` whose text contains `needle`, except `skip`.
pub(crate) fn files_containing(dir: &Path, needle: &str, skip: &[&Path]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_symlink() || skip.contains(&path.as_path()) {
                continue;
            }
            if meta.is_dir() {
                stack.push(path);
            } else if String::from_utf8_lossy(&std::fs::read(&path).unwrap()).contains(needle) {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn a_key_file_named_in_the_config_reaches_the_model_and_nothing_else() {
    for format in [WireFormat::OpenAiResponses, WireFormat::Anthropic] {
        let home = fresh_home();
        let sb = Sandbox::new();
        sb.write("a.txt", "alpha\n");
        let server = MockModel::start(format);
        server.push(Script::tool_calls(&[(
            "c1",
            "read_file",
            r#"{"path":"a.txt"}"#,
        )]));
        server.push(Script::text("It says alpha."));
        let key_file = home.path().join("keys/model.key");
        write_private(&key_file, &format!("{CONFIG_KEY}\n"), 0o600);
        let name = provider_flag(format);
        let config = home.path().join("config.toml");
        write_private(
            &config,
            &format!(
                "provider = \"{name}\"\n\n[providers.{name}]\nmodel = \"config-model\"\n\
                 base_url = \"{}\"\napi_key_file = \"keys/model.key\"\n",
                server.base_url()
            ),
            0o644,
        );
        let out = clean(home.path())
            .args(["run", "--json", "--policy", "read-only", "-w"])
            .arg(sb.ws())
            .arg("read a.txt")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{format:?}: {stderr}\n{stdout}");

        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{format:?}");
        for r in &requests {
            let auth = match format {
                WireFormat::Anthropic => r.header("x-api-key").unwrap().to_string(),
                WireFormat::OpenAiChat | WireFormat::OpenAiResponses => {
                    r.header("authorization").unwrap().to_string()
                }
            };
            assert!(auth.ends_with(CONFIG_KEY), "{format:?}: {auth}");
            assert_eq!(r.body["model"], "config-model");
        }
        let started = &events(&out.stdout)[0];
        assert_eq!(started["model"], "config-model");

        for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(!text.contains("CONFSECRET"), "{format:?}: key in {what}");
        }
        let leaks = files_containing(home.path(), "CONFSECRET", &[&key_file]);
        assert!(
            leaks.is_empty(),
            "{format:?}: the key was written to {leaks:?}"
        );
        assert!(home.path().join("audit/audit.jsonl").is_file());
        assert!(home.path().join("sessions").is_dir());
    }
}

#[test]
fn flags_beat_the_environment_which_beats_the_config_file() {
    let home = fresh_home();
    let sb = Sandbox::new();
    let server = MockModel::start(WireFormat::OpenAiChat);
    let config = home.path().join("config.toml");
    write_private(
        &config,
        &format!(
            "provider = \"anthropic\"\n[providers.openai]\nmodel = \"config-model\"\n\
             base_url = \"http://127.0.0.1:9/v1\"\napi_key = \"{CONFIG_KEY}\"\n"
        ),
        0o600,
    );
    let run = |extra_env: &[(&str, &str)], flags: &[&str]| {
        server.push(Script::text("ok"));
        let mut cmd = clean(home.path());
        cmd.envs(extra_env.iter().copied())
            .env("WARDEN_BASE_URL", server.base_url())
            .args(["run", "-p", "--policy", "read-only", "-w"])
            .arg(sb.ws())
            .args(flags)
            .arg("hi");
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("SECRET"), "{stderr}");
        server.requests().pop().unwrap()
    };

    // The config names anthropic; the environment says openai and gives a key.
    let env = [("WARDEN_PROVIDER", "openai"), ("OPENAI_API_KEY", ENV_KEY)];
    let r = run(&env, &[]);
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {ENV_KEY}").as_str())
    );
    assert_eq!(r.body["model"], "config-model");

    // Without the variable, the config's own key is used.
    let r = run(&[("WARDEN_PROVIDER", "openai")], &[]);
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {CONFIG_KEY}").as_str())
    );

    let r = run(&[("WARDEN_MODEL", "env-model")], &["--provider", "openai"]);
    assert_eq!(r.body["model"], "env-model");
    let r = run(
        &[("WARDEN_MODEL", "env-model")],
        &["--provider", "openai", "--model", "flag-model"],
    );
    assert_eq!(r.body["model"], "flag-model");
}

#[test]
fn a_key_other_users_can_read_is_refused_without_calling_the_model() {
    let home = fresh_home();
    let sb = Sandbox::new();
    let server = MockModel::start(WireFormat::OpenAiChat);
    let config = home.path().join("config.toml");
    let text = format!(
        "[providers.openai]\nbase_url = \"{}\"\napi_key = \"{CONFIG_KEY}\"\n",
        server.base_url()
    );
    write_private(&config, &text, 0o644);
    let out = clean(home.path())
        .args(["run", "-w"])
        .arg(sb.ws())
        .arg("hi")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("other users may read it") && stderr.contains("chmod 600"),
        "{stderr}"
    );
    assert!(!stderr.contains("CONFSECRET"), "{stderr}");

    // A key file readable by its group is refused the same way.
    let key_file = home.path().join("model.key");
    write_private(&key_file, CONFIG_KEY, 0o640);
    let text = format!(
        "[providers.openai]\nbase_url = \"{}\"\napi_key_file = \"model.key\"\n",
        server.base_url()
    );
    write_private(&config, &text, 0o644);
    let out = clean(home.path())
        .args(["run", "-w"])
        .arg(sb.ws())
        .arg("hi")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("model.key") && stderr.contains("chmod 600"),
        "{stderr}"
    );
    assert_eq!(server.request_count(), 0);
    assert!(
        !home.path().join("sessions").exists(),
        "no session was started"
    );
}
