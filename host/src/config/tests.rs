use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;

use super::*;

const KEY: &str = "sk-config-0123-SECRET";

fn write(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

fn chosen(config: &Config, vars: &[(&str, &str)], flags: Overrides<'_>) -> Chosen {
    choose(&flags, &env(vars), config).unwrap()
}

#[test]
fn flags_beat_the_environment_which_beats_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "config.toml",
        &format!(
            "provider = \"anthropic\"\n[providers.anthropic]\nmodel = \"file-model\"\n\
             base_url = \"http://file\"\napi_key = \"{KEY}\"\n"
        ),
        0o600,
    );
    let config = Config::load_from(&path).unwrap();

    let c = chosen(&config, &[], Overrides::default());
    assert_eq!(c.provider, ProviderName::Anthropic);
    assert_eq!(
        (c.model.as_str(), c.base_url.as_str()),
        ("file-model", "http://file")
    );
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some(KEY));
    assert_eq!(c.key_source, Some(KeySource::ConfigFile(path.clone())));

    let vars = [
        ("ANTHROPIC_API_KEY", "sk-env"),
        ("WARDEN_MODEL", "env-model"),
        ("WARDEN_BASE_URL", "http://env"),
    ];
    let c = chosen(&config, &vars, Overrides::default());
    assert_eq!(
        (c.model.as_str(), c.base_url.as_str()),
        ("env-model", "http://env")
    );
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-env"));

    let flags = Overrides {
        model: Some("flag-model"),
        base_url: Some("http://flag"),
        ..Overrides::default()
    };
    let c = chosen(&config, &vars, flags);
    assert_eq!(
        (c.model.as_str(), c.base_url.as_str()),
        ("flag-model", "http://flag")
    );

    // Another provider has no settings in the file and needs its own key.
    let flags = Overrides {
        provider: Some(ProviderName::Openai),
        ..Overrides::default()
    };
    let err = choose(&flags, &env(&[]), &config).unwrap_err().to_string();
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
    let c = chosen(
        &config,
        &[("WARDEN_PROVIDER", "ollama")],
        Overrides::default(),
    );
    assert_eq!(
        (c.provider, c.api_key.is_none()),
        (ProviderName::Ollama, true)
    );
}

#[test]
fn a_resumed_session_keeps_its_model_unless_told_otherwise() {
    let config = Config::default();
    let flags = Overrides {
        provider: Some(ProviderName::Ollama),
        session_model: Some("old"),
        ..Overrides::default()
    };
    assert_eq!(chosen(&config, &[], flags).model, "old");
    assert_eq!(
        chosen(&config, &[("WARDEN_MODEL", "new")], flags).model,
        "new"
    );
}

#[test]
fn keys_come_from_files_and_named_variables() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "openai.key", &format!("{KEY}\n"), 0o400);
    let path = write(
        dir.path(),
        "config.toml",
        "[providers.openai]\napi_key_file = \"openai.key\"\n\
         [providers.anthropic]\napi_key_env = \"WORK_KEY\"\n",
        0o644,
    );
    let config = Config::load_from(&path).unwrap();
    let c = chosen(&config, &[], Overrides::default());
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some(KEY));
    assert_eq!(
        c.key_source,
        Some(KeySource::KeyFile(dir.path().join("openai.key")))
    );
    let c = chosen(
        &config,
        &[("OPENAI_API_KEY", "sk-env")],
        Overrides::default(),
    );
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-env"));

    let anthropic = Overrides {
        provider: Some(ProviderName::Anthropic),
        ..Overrides::default()
    };
    let c = chosen(&config, &[("WORK_KEY", "sk-work")], anthropic);
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-work"));
    let err = choose(&anthropic, &env(&[]), &config).unwrap_err();
    assert!(matches!(err, ConfigError::UnsetVariable { .. }), "{err}");
}

#[test]
fn a_key_others_can_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let inline = write(
        dir.path(),
        "inline.toml",
        &format!("[providers.openai]\napi_key = \"{KEY}\"\n"),
        0o644,
    );
    let err = Config::load_from(&inline).unwrap_err();
    assert!(
        matches!(err, ConfigError::Exposed { mode: 0o644, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("chmod 600"), "{err}");
    assert!(!err.to_string().contains("SECRET"));

    write(dir.path(), "group.key", KEY, 0o640);
    let path = write(
        dir.path(),
        "config.toml",
        "[providers.openai]\napi_key_file = \"group.key\"\n",
        0o644,
    );
    let config = Config::load_from(&path).unwrap();
    let err = choose(&Overrides::default(), &env(&[]), &config).unwrap_err();
    assert!(
        matches!(err, ConfigError::Exposed { mode: 0o640, .. }),
        "{err}"
    );
}

#[test]
fn errors_never_quote_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for text in [
        format!("[providers.openai]\napi_key = {KEY}\n"),
        format!("[providers.openai]\nmodel = [\"{KEY}\"]\n"),
        format!("[providers.openai]\n{KEY} = 1\n"),
        format!("provider = \"{KEY}\"\n"),
        format!("[providers.{KEY}]\nmodel = \"m\"\n"),
    ] {
        let path = write(dir.path(), "bad.toml", &text, 0o600);
        let err = Config::load_from(&path).unwrap_err().to_string();
        assert!(!err.contains("SECRET"), "{err}");
        assert!(err.contains("bad.toml:"), "{err}");
    }
    let path = write(
        dir.path(),
        "two.toml",
        "[providers.openai]\napi_key_env = \"A\"\napi_key_file = \"b\"\n",
        0o600,
    );
    assert!(matches!(
        Config::load_from(&path),
        Err(ConfigError::TwoKeys { .. })
    ));
    assert!(format!("{:?}", Config::load_from(&dir.path().join("none.toml"))).contains("Ok"));
}

#[test]
fn a_misspelt_key_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "typo.toml",
        "[providers.openai]\napi_kye = \"x\"\n",
        0o600,
    );
    let err = Config::load_from(&path).unwrap_err().to_string();
    assert!(err.contains("typo.toml:2:"), "{err}");
    assert!(err.contains("`api_kye`"), "{err}");
    assert!(err.contains("`api_key`"), "{err}");
}

#[test]
fn a_debug_print_of_the_settings_hides_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "config.toml",
        &format!("[providers.openai]\napi_key = \"{KEY}\"\n[context]\ncompact_above = 5000\n"),
        0o600,
    );
    let config = Config::load_from(&path).unwrap();
    assert!(!format!("{config:?}").contains("SECRET"));
    assert_eq!(config.context.compact_above, Some(5000));
}

#[test]
fn the_idle_timeout_comes_from_the_flag_then_the_providers_settings_then_90_s() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "config.toml",
        "[providers.ollama]\nidle_timeout_secs = 7\n",
        0o600,
    );
    let config = Config::load_from(&path).unwrap();
    let ollama = Overrides {
        provider: Some(ProviderName::Ollama),
        ..Overrides::default()
    };
    let secs = |c: Chosen| c.idle_timeout.as_secs();
    assert_eq!(secs(chosen(&config, &[], ollama)), 7);
    let flag = Overrides {
        idle_timeout: Some(std::time::Duration::from_secs(3)),
        ..ollama
    };
    assert_eq!(secs(chosen(&config, &[], flag)), 3);
    let openai = Overrides {
        provider: Some(ProviderName::Openai),
        ..Overrides::default()
    };
    let other = chosen(&config, &[("OPENAI_API_KEY", "sk")], openai);
    assert_eq!(secs(other), 90, "the setting is per provider");

    let zero = write(
        dir.path(),
        "zero.toml",
        "[providers.ollama]\nidle_timeout_secs = 0\n",
        0o600,
    );
    let err = Config::load_from(&zero).unwrap_err();
    assert!(matches!(err, ConfigError::Syntax { line: 2, .. }), "{err}");
}
