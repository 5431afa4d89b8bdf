//! The child's environment: an allowlist, never the host's secrets.
//!
//! Invariant: the child gets `PATH` (only its directories the sandbox lets
//! it reach), `LANG`, `LC_*`, `TERM`, a private `HOME` and `TMPDIR`, and
//! the names the grant lists, and nothing else. A
//! listed name that looks like a secret (`*_API_KEY`, `*TOKEN*`, …), or
//! whose value equals the value of a secret-named host variable, is refused
//! with an error rather than silently dropped.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::ProcessError;

/// The private home directory inside the child's `/tmp`.
pub(super) const HOME: &str = "/tmp/home";

/// Passed when the host has them.
const ALLOWED: &[&str] = &["PATH", "LANG", "TERM"];

/// Used when the host has no `PATH`.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Parts of a variable name that mark it as a secret.
const SECRET_MARKS: &[&str] = &[
    "API_KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "AUTH",
];

/// Whether `name` names a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("_KEY") || SECRET_MARKS.iter().any(|m| upper.contains(m))
}

/// The child's environment, from `host` (the host's variables) and the
/// names the grant passes. `PATH` keeps only the directories under
/// `reachable` (the system directories, toolchains and workspace): a
/// program found first in a directory the sandbox hides would fail to run
/// where a later one would have worked.
pub(super) fn child_env(
    host: &[(OsString, OsString)],
    pass: &[String],
    reachable: &[&Path],
) -> Result<Vec<CString>, ProcessError> {
    let secret_values: Vec<&OsString> = host
        .iter()
        .filter(|(k, v)| is_secret_name(&k.to_string_lossy()) && v.len() >= 8)
        .map(|(_, v)| v)
        .collect();
    for name in pass {
        let refused = || ProcessError::SecretEnv { name: name.clone() };
        if is_secret_name(name) || name.contains('=') {
            return Err(refused());
        }
        let value = host.iter().find(|(k, _)| k.as_bytes() == name.as_bytes());
        if value.is_some_and(|(_, v)| secret_values.contains(&v)) {
            return Err(refused());
        }
    }
    let mut env = Vec::new();
    let mut push = |k: &[u8], v: &[u8]| -> Result<(), ProcessError> {
        let mut entry = k.to_vec();
        entry.push(b'=');
        entry.extend_from_slice(v);
        let entry = CString::new(entry).map_err(|_| {
            ProcessError::BadCommand(format!(
                "environment variable {} holds a NUL byte",
                String::from_utf8_lossy(k)
            ))
        })?;
        env.push(entry);
        Ok(())
    };
    let mut has_path = false;
    for (k, v) in host {
        let key = k.as_bytes();
        let name = k.to_string_lossy();
        let allowed = ALLOWED.contains(&&*name)
            || (name.starts_with("LC_") && !is_secret_name(&name))
            || pass.iter().any(|p| p.as_bytes() == key);
        if key == b"PATH" {
            let kept = reachable_path(v.as_bytes(), reachable);
            if !kept.is_empty() {
                has_path = true;
                push(key, &kept)?;
            }
        } else if allowed && !matches!(&*name, "HOME" | "TMPDIR") {
            push(key, v.as_bytes())?;
        }
    }
    if !has_path {
        push(b"PATH", DEFAULT_PATH.as_bytes())?;
    }
    push(b"HOME", HOME.as_bytes())?;
    push(b"TMPDIR", b"/tmp")?;
    Ok(env)
}

/// The directories of `path` (a `PATH` value) that lie under one of
/// `reachable`, in order.
fn reachable_path(path: &[u8], reachable: &[&Path]) -> Vec<u8> {
    let kept: Vec<&[u8]> = path
        .split(|b| *b == b':')
        .filter(|dir| {
            let dir = Path::new(std::ffi::OsStr::from_bytes(dir));
            dir.is_absolute() && reachable.iter().any(|root| dir.starts_with(root))
        })
        .collect();
    kept.join(&b':')
}

/// The value of `PATH` in `env`.
pub(super) fn path_of(env: &[CString]) -> &[u8] {
    env.iter()
        .find_map(|e| e.as_bytes().strip_prefix(b"PATH="))
        .unwrap_or(DEFAULT_PATH.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(vars: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        vars.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn names(env: &[CString]) -> Vec<String> {
        env.iter()
            .map(|e| {
                e.to_string_lossy()
                    .split('=')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn provider_keys_and_unlisted_variables_never_reach_the_child() {
        let vars = host(&[
            ("PATH", "/usr/bin"),
            ("OPENAI_API_KEY", "sk-secret-value"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
            ("HOME", "/root"),
            ("LC_ALL", "C.UTF-8"),
            ("EDITOR", "vi"),
            ("CARGO_HOME", "/root/.cargo"),
        ]);
        let env = child_env(&vars, &["CARGO_HOME".to_string()], &[Path::new("/usr")]).unwrap();
        assert_eq!(
            names(&env),
            ["PATH", "LC_ALL", "CARGO_HOME", "HOME", "TMPDIR"]
        );
        assert!(env.iter().any(|e| e.as_bytes() == b"HOME=/tmp/home"));
    }

    #[test]
    fn a_grant_that_passes_a_secret_is_refused() {
        let vars = host(&[
            ("OPENAI_API_KEY", "sk-secret-value"),
            ("MY_VAR", "sk-secret-value"),
        ]);
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "WORK_OPENAI_KEY",
            "MY_VAR",
        ] {
            let err = child_env(&vars, &[name.to_string()], &[]).unwrap_err();
            assert!(
                matches!(err, ProcessError::SecretEnv { .. }),
                "{name}: {err}"
            );
        }
        assert!(child_env(&vars, &["CARGO_HOME".to_string()], &[]).is_ok());
    }

    #[test]
    fn path_keeps_only_directories_the_sandbox_reaches() {
        let vars = host(&[(
            "PATH",
            "/root/.pyenv/shims:/home/u/.cargo/bin:/usr/local/bin:/usr/bin:relative:/bin",
        )]);
        let env = child_env(
            &vars,
            &[],
            &[
                Path::new("/usr"),
                Path::new("/bin"),
                Path::new("/home/u/.cargo"),
            ],
        )
        .unwrap();
        assert_eq!(
            path_of(&env),
            b"/home/u/.cargo/bin:/usr/local/bin:/usr/bin:/bin"
        );
        let none = child_env(&host(&[("PATH", "/opt/x")]), &[], &[Path::new("/usr")]).unwrap();
        assert_eq!(path_of(&none), DEFAULT_PATH.as_bytes());
    }
}
