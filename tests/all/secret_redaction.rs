//! Keys the host resolved are redacted by value wherever Warden writes or
//! shows text: a key from `api_key_file` and one from a custom
//! `api_key_env`, echoed back by the model (in its answer and in a tool
//! call's arguments) and by a tool (in its output, long enough to be kept
//! whole in the session directory), reach no file under the data
//! directory, no event and no line on stderr.

use std::path::Path;
use std::process::Output;

use serde_json::json;
use warden::provider::WireFormat;

use crate::agent::auto_policy;
use crate::agent_config::files_containing;
use crate::mock_model::{MockModel, Script};
use crate::support::{fresh_home, warden};

/// How the run finds its key.
enum KeyFrom {
    /// `api_key_file` in config.toml.
    File,
    /// `api_key_env` in config.toml, naming a variable of its own.
    Variable,
}

/// Run the agent with `key` echoed by the model and a tool; the output,
/// and the workspace the tool wrote to.
fn run_echoing(home: &Path, key: &str, from: KeyFrom, json: bool) -> (Output, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let policy = auto_policy(home);
    let server = MockModel::start(WireFormat::OpenAiChat);
    // Long enough that the context gets a cut version and the session
    // directory keeps the whole output.
    let content = format!("{key}\n{}\n{key}\n", "filler line\n".repeat(2000));
    let write = json!({"path": "k.txt", "content": content}).to_string();
    server.push(
        Script::tool_calls(&[("c1", "write_file", &write)]).with_text(&format!("Storing {key}.")),
    );
    server.push(Script::tool_calls(&[(
        "c2",
        "read_file",
        r#"{"path":"k.txt"}"#,
    )]));
    server.push(Script::text(&format!("The key is {key}.")));
    let key_setting = match from {
        KeyFrom::File => {
            let file = home.join("keys/model.key");
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("{key}\n")).unwrap();
            let private = std::os::unix::fs::PermissionsExt::from_mode(0o600);
            std::fs::set_permissions(&file, private).unwrap();
            "api_key_file = \"keys/model.key\"".to_string()
        }
        KeyFrom::Variable => "api_key_env = \"MY_MODEL_KEY\"".to_string(),
    };
    std::fs::write(
        home.join("config.toml"),
        format!(
            "provider = \"openai\"\n[providers.openai]\nbase_url = \"{}\"\n{key_setting}\n",
            server.base_url()
        ),
    )
    .unwrap();
    let mut cmd = warden(home);
    for var in [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "WARDEN_PROVIDER",
        "WARDEN_BASE_URL",
    ] {
        cmd.env_remove(var);
    }
    if let KeyFrom::Variable = from {
        cmd.env("MY_MODEL_KEY", key);
    }
    cmd.args(["run", "--non-interactive", "--policy"])
        .arg(&policy)
        .arg("-w")
        .arg(ws.path());
    if json {
        cmd.arg("--json");
    }
    let out = cmd.arg("store the key").output().unwrap();
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {key}").as_str()),
        "the key was used"
    );
    (out, ws)
}

fn assert_nowhere(home: &Path, marker: &str, out: &Output, ws: &Path) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    // The tool really wrote and read the key, outside the data directory.
    assert!(
        std::fs::read_to_string(ws.join("k.txt"))
            .unwrap()
            .contains(marker),
        "the echo never happened"
    );
    assert!(stdout.contains("[redacted]"), "{stdout}");
    assert!(!stdout.contains(marker), "the key reached stdout: {stdout}");
    assert!(!stderr.contains(marker), "the key reached stderr: {stderr}");
    let key_file = home.join("keys/model.key");
    let leaks = files_containing(home, marker, &[&key_file]);
    assert!(leaks.is_empty(), "the key was written to {leaks:?}");
    let sessions = home.join("sessions");
    let kept: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap())
        .collect();
    assert!(!kept.is_empty(), "no long output was kept whole");
}

#[test]
fn a_key_from_a_key_file_echoed_back_is_redacted_everywhere() {
    let home = fresh_home();
    let key = "sk-file-5150-FILESECRET-abcdef";
    let (out, ws) = run_echoing(home.path(), key, KeyFrom::File, true);
    assert_nowhere(home.path(), "FILESECRET", &out, ws.path());
    let events = String::from_utf8_lossy(&out.stdout);
    assert!(
        events
            .lines()
            .any(|l| l.contains("\"finished\"") && l.contains("The key is [redacted].")),
        "{events}"
    );
}

#[test]
fn a_key_from_a_custom_variable_echoed_back_is_redacted_everywhere() {
    let home = fresh_home();
    let key = "sk-var-6160-VARSECRET-ghijkl";
    let (out, ws) = run_echoing(home.path(), key, KeyFrom::Variable, false);
    assert_nowhere(home.path(), "VARSECRET", &out, ws.path());
}
