//! Credentials the host injects into requests, and the redaction that
//! keeps their values out of everything a call returns.
//!
//! Invariants: a grant and a policy hold only a credential's *handle*
//! (name, audience, header, source), never its value; the value is read
//! when a call starts, lives in a [`Secret`] whose `Debug` hides it, is
//! injected only into a request whose scheme, host and port equal the
//! audience, after every destination check, replacing any header of that
//! name the guest set; any text the call returns is passed through a
//! [`Redactor`] holding every value the call could have seen; and a value
//! read is registered as a process secret (`base::secrets`), which every
//! writer redacts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::pattern::{HostPattern, NetPattern, PortPattern};

/// Values shorter than this are refused: redacting them would mangle
/// ordinary text, and they are too short to be secrets.
pub use crate::base::secrets::MIN_SECRET_BYTES;

/// Where a credential's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CredentialSource {
    /// An environment variable of the warden process.
    Env(String),
    /// A file (absolute path); surrounding whitespace is trimmed.
    File(PathBuf),
}

/// A credential a policy declares: how to inject it, not its value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "CredentialFile", into = "CredentialFile")]
pub struct CredentialHandle {
    /// `[a-z0-9_-]+`, unique in the policy.
    pub name: String,
    /// The one destination that receives it: exact host, exact port.
    pub audience: NetPattern,
    /// The header it goes in, lower case.
    pub header: String,
    /// Text put before the value, e.g. `Bearer `.
    pub prefix: String,
    pub source: CredentialSource,
}

/// `[[credential]]` as a policy file spells it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CredentialFile {
    name: String,
    audience: NetPattern,
    header: String,
    #[serde(default)]
    prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<PathBuf>,
}

/// Headers a credential may not be put in: framing and routing headers.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
];

/// Why a `[[credential]]` table cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CredentialConfigError {
    /// A name with characters other than `[a-z0-9_-]`, or none.
    #[error("credential name `{name}` must match [a-z0-9_-]+")]
    BadName { name: String },
    /// An audience with a wildcard host or port.
    #[error(
        "credential `{name}`: the audience `{audience}` must be one host and port, without wildcards"
    )]
    AudienceNotOneHost { name: String, audience: String },
    /// A header that is not valid, or one that frames or routes the request.
    #[error("credential `{name}`: `{header}` cannot carry a credential")]
    BadHeader { name: String, header: String },
    /// A prefix that cannot start a header value.
    #[error("credential `{name}`: the prefix is not a valid header value")]
    BadPrefix { name: String },
    /// A relative `file`.
    #[error("credential `{name}`: file `{}` must be an absolute path", path.display())]
    RelativeFile { name: String, path: PathBuf },
    /// Neither `env` nor `file`, both, or an `env` no variable can have.
    #[error(
        "credential `{name}` needs exactly one source: `env = \"VAR\"` or `file = \"/abs/path\"`"
    )]
    NoSingleSource { name: String },
}

/// Why a credential's value could not be read. Never contains the value.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CredentialValueError {
    /// The variable named by `env` is unset or not UTF-8.
    #[error("environment variable {var} is not set or not UTF-8")]
    EnvUnset { var: String },
    /// The file named by `file` cannot be read.
    #[error("cannot read {}: {kind}", path.display())]
    Unreadable {
        path: PathBuf,
        kind: std::io::ErrorKind,
    },
    /// Too short to be a secret (and to be redacted safely).
    #[error("the value is shorter than {MIN_SECRET_BYTES} bytes")]
    TooShort,
    /// The prefix and value do not make a header value.
    #[error("the value is not a valid header value")]
    NotAHeaderValue,
}

impl TryFrom<CredentialFile> for CredentialHandle {
    type Error = CredentialConfigError;

    fn try_from(f: CredentialFile) -> Result<Self, CredentialConfigError> {
        let name_ok = !f.name.is_empty()
            && f.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(CredentialConfigError::BadName { name: f.name });
        }
        let exact_host = matches!(f.audience.host, HostPattern::Exact(_) | HostPattern::Ip(_));
        if !exact_host || f.audience.port == PortPattern::Any {
            return Err(CredentialConfigError::AudienceNotOneHost {
                name: f.name,
                audience: f.audience.to_string(),
            });
        }
        let header = f.header.to_ascii_lowercase();
        if http::HeaderName::from_bytes(header.as_bytes()).is_err()
            || RESERVED_HEADERS.contains(&header.as_str())
        {
            return Err(CredentialConfigError::BadHeader {
                name: f.name,
                header: f.header,
            });
        }
        if http::HeaderValue::from_str(&f.prefix).is_err() {
            return Err(CredentialConfigError::BadPrefix { name: f.name });
        }
        let source = match (f.env, f.file) {
            (Some(var), None) if !var.is_empty() && !var.contains(['=', '\0']) => {
                CredentialSource::Env(var)
            }
            (None, Some(path)) if path.is_absolute() => CredentialSource::File(path),
            (None, Some(path)) => {
                return Err(CredentialConfigError::RelativeFile { name: f.name, path });
            }
            _ => {
                return Err(CredentialConfigError::NoSingleSource { name: f.name });
            }
        };
        Ok(CredentialHandle {
            name: f.name,
            audience: f.audience,
            header,
            prefix: f.prefix,
            source,
        })
    }
}

impl From<CredentialHandle> for CredentialFile {
    fn from(h: CredentialHandle) -> Self {
        let (env, file) = match h.source {
            CredentialSource::Env(v) => (Some(v), None),
            CredentialSource::File(p) => (None, Some(p)),
        };
        CredentialFile {
            name: h.name,
            audience: h.audience,
            header: h.header,
            prefix: h.prefix,
            env,
            file,
        }
    }
}

/// A credential's value. `Debug` never shows it.
#[derive(Clone)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }

    #[cfg(test)]
    pub fn for_test(value: &str) -> Secret {
        Secret(value.to_string())
    }
}

/// A credential with its value read (or why it could not be).
#[derive(Debug, Clone)]
pub struct LoadedCredential {
    pub handle: CredentialHandle,
    pub value: Result<Secret, CredentialValueError>,
}

impl CredentialHandle {
    /// Read the value now. The error never contains the value.
    pub fn load(&self) -> LoadedCredential {
        LoadedCredential {
            handle: self.clone(),
            value: self.read(),
        }
    }

    fn read(&self) -> Result<Secret, CredentialValueError> {
        let raw = match &self.source {
            CredentialSource::Env(var) => std::env::var(var)
                .map_err(|_| CredentialValueError::EnvUnset { var: var.clone() })?,
            CredentialSource::File(path) => {
                std::fs::read_to_string(path).map_err(|e| CredentialValueError::Unreadable {
                    path: path.clone(),
                    kind: e.kind(),
                })?
            }
        };
        let value = raw.trim();
        if value.len() < MIN_SECRET_BYTES {
            return Err(CredentialValueError::TooShort);
        }
        if http::HeaderValue::from_str(&format!("{}{value}", self.prefix)).is_err() {
            return Err(CredentialValueError::NotAHeaderValue);
        }
        crate::base::secrets::register(value);
        Ok(Secret(value.to_string()))
    }
}

/// Replaces every credential value in text with `[REDACTED:name]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// (value, name), longest value first so overlapping values redact whole.
    secrets: Vec<(Secret, String)>,
}

impl Redactor {
    pub fn new(credentials: &[LoadedCredential]) -> Redactor {
        let mut secrets: Vec<(Secret, String)> = credentials
            .iter()
            .filter_map(|c| {
                c.value
                    .as_ref()
                    .ok()
                    .map(|v| (v.clone(), c.handle.name.clone()))
            })
            .collect();
        secrets.sort_by_key(|(v, _)| std::cmp::Reverse(v.0.len()));
        Redactor { secrets }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every value replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (value, name) in &self.secrets {
            if out.contains(value.expose()) {
                out = out.replace(value.expose(), &format!("[REDACTED:{name}]"));
            }
        }
        out
    }

    /// Each value and its replacement as bytes, longest value first.
    pub fn byte_pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.secrets
            .iter()
            .map(|(v, n)| {
                (
                    v.0.as_bytes().to_vec(),
                    format!("[REDACTED:{n}]").into_bytes(),
                )
            })
            .collect()
    }

    /// `bytes` with every value replaced (for bodies that may not be UTF-8).
    pub fn bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (value, name) in &self.secrets {
            let needle = value.expose().as_bytes();
            let mark = format!("[REDACTED:{name}]").into_bytes();
            let mut i = 0;
            let mut next = Vec::with_capacity(out.len());
            while i < out.len() {
                if out[i..].starts_with(needle) {
                    next.extend_from_slice(&mark);
                    i += needle.len();
                } else {
                    next.push(out[i]);
                    i += 1;
                }
            }
            out = next;
        }
        out
    }

    /// Every string (and key) in `value` redacted.
    pub fn json(&self, value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(a) => Value::Array(a.iter().map(|v| self.json(v)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (self.text(k), self.json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(toml_text: &str) -> Result<CredentialHandle, String> {
        toml::from_str::<CredentialHandle>(toml_text).map_err(|e| e.to_string())
    }

    #[test]
    fn handles_are_validated() {
        let ok = handle("name = \"gh\"\naudience = \"https://api.github.com\"\nheader = \"Authorization\"\nprefix = \"Bearer \"\nenv = \"GH_TOKEN\"\n").unwrap();
        assert_eq!(ok.header, "authorization");
        assert_eq!(ok.audience.to_string(), "https://api.github.com:443");
        for bad in [
            "name = \"gh\"\naudience = \"https://*.github.com\"\nheader = \"x-key\"\nenv = \"A\"\n",
            "name = \"gh\"\naudience = \"https://api.github.com:*\"\nheader = \"x-key\"\nenv = \"A\"\n",
            "name = \"gh\"\naudience = \"https://api.github.com\"\nheader = \"host\"\nenv = \"A\"\n",
            "name = \"gh\"\naudience = \"https://api.github.com\"\nheader = \"x-key\"\n",
            "name = \"gh\"\naudience = \"https://api.github.com\"\nheader = \"x-key\"\nenv = \"A\"\nfile = \"/a\"\n",
            "name = \"gh\"\naudience = \"https://api.github.com\"\nheader = \"x-key\"\nfile = \"rel/path\"\n",
            "name = \"GH\"\naudience = \"https://api.github.com\"\nheader = \"x-key\"\nenv = \"A\"\n",
            "name = \"gh\"\naudience = \"https://api.github.com\"\nheader = \"x key\"\nenv = \"A\"\n",
        ] {
            assert!(handle(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn values_are_read_checked_and_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cr3t-value-123\n").unwrap();
        let h = handle(&format!(
            "name = \"k\"\naudience = \"https://a.test\"\nheader = \"x-key\"\nfile = {:?}\n",
            path.display().to_string()
        ))
        .unwrap();
        let loaded = h.load();
        assert_eq!(loaded.value.as_ref().unwrap().expose(), "s3cr3t-value-123");
        assert!(!format!("{loaded:?}").contains("s3cr3t"));
        std::fs::write(&path, "short").unwrap();
        assert!(h.load().value.unwrap_err().to_string().contains("shorter"));
        std::fs::write(&path, "has\r\nnewline-inside").unwrap();
        assert!(
            h.load()
                .value
                .unwrap_err()
                .to_string()
                .contains("not a valid header value")
        );
    }

    #[test]
    fn redaction_covers_text_bytes_and_json() {
        let loaded = LoadedCredential {
            handle: handle(
                "name = \"k\"\naudience = \"https://a.test\"\nheader = \"x-key\"\nenv = \"A\"\n",
            )
            .unwrap(),
            value: Ok(Secret::for_test("topsecret-42")),
        };
        let r = Redactor::new(&[loaded]);
        assert_eq!(
            r.text("a topsecret-42 b topsecret-42"),
            "a [REDACTED:k] b [REDACTED:k]"
        );
        assert_eq!(r.bytes(b"xtopsecret-42y"), b"x[REDACTED:k]y".to_vec());
        let j = r.json(&serde_json::json!({"topsecret-42": ["topsecret-42", 1]}));
        assert_eq!(j, serde_json::json!({"[REDACTED:k]": ["[REDACTED:k]", 1]}));
    }
}
