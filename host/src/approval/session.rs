//! What the user allowed for the rest of a session: exact calls, by a
//! fingerprint of the tool and its canonical arguments, and patterns the
//! user confirmed.
//!
//! Invariant: a session grant only ever turns a call the policy would ask
//! about into an allowed one. It is consulted after the policy decided
//! `ask`, never before, so it cannot override a deny; and only the user,
//! through an [`Approver`](super::Approver), can add one.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::capability::egress::NetPattern;
use crate::policy::{call_destinations, normalize_path};

/// The sha256 of a tool name and its canonical arguments (object keys
/// sorted, no insignificant whitespace): equal for two calls exactly when
/// they are the same call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallFingerprint([u8; 32]);

impl CallFingerprint {
    /// The fingerprint of calling `tool` with `input`.
    pub fn of(tool: &str, input: &Value) -> CallFingerprint {
        let mut hasher = Sha256::new();
        hasher.update(tool.as_bytes());
        hasher.update([0]);
        hasher.update(canonical_json(input).as_bytes());
        CallFingerprint(hasher.finalize().into())
    }
}

impl fmt::Display for CallFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl Serialize for CallFingerprint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CallFingerprint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(&text, &mut bytes).map_err(serde::de::Error::custom)?;
        Ok(CallFingerprint(bytes))
    }
}

/// `value` as compact JSON with every object's keys in sorted order,
/// whatever order they arrived in.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            out.push_str(&value.to_string());
        }
    }
}

/// Calls the user allowed for the session by shape: a glob over tool
/// names and, per argument, a glob over the argument as a workspace path.
///
/// Written `TOOL [ARG=GLOB ...]`, e.g. `write_file path=src/**`. Globs
/// follow policy argument matchers: the argument is normalised lexically
/// (`./a/../b` is `b`), `*` stays within one path component and `**`
/// crosses components; every `ARG` must be present as a string (or an
/// array with a matching string) for the pattern to match.
#[derive(Debug, Clone)]
pub struct ApprovalPattern {
    tool: (String, GlobMatcher),
    args: BTreeMap<String, (String, GlobMatcher)>,
}

/// What is wrong with a typed approval pattern.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalPatternError {
    /// Nothing was typed.
    #[error("a pattern starts with a tool name or glob, e.g. `write_file path=src/**`")]
    Empty,
    /// The first word is an `ARG=GLOB` pair, not a tool.
    #[error("`{0}`: a pattern starts with a tool name or glob, then ARG=GLOB pairs")]
    NoTool(String),
    /// A later word is not an `ARG=GLOB` pair.
    #[error("`{0}`: expected ARG=GLOB, e.g. path=src/**")]
    NotAPair(String),
    /// The same argument twice.
    #[error("argument `{0}` is given twice")]
    Repeated(String),
    /// A glob that does not compile.
    #[error("bad glob `{glob}`: {source}")]
    BadGlob {
        glob: String,
        source: globset::Error,
    },
}

impl ApprovalPattern {
    /// Parse `TOOL [ARG=GLOB ...]`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<ApprovalPattern, ApprovalPatternError> {
        let mut words = text.split_whitespace();
        let tool = words.next().ok_or(ApprovalPatternError::Empty)?;
        if tool.contains('=') {
            return Err(ApprovalPatternError::NoTool(tool.to_string()));
        }
        let tool = (tool.to_string(), compile(tool, false)?);
        let mut args = BTreeMap::new();
        for word in words {
            let (name, glob) = word
                .split_once('=')
                .filter(|(n, g)| !n.is_empty() && !g.is_empty())
                .ok_or_else(|| ApprovalPatternError::NotAPair(word.to_string()))?;
            let matcher = compile(trim_dot_slash(glob), true)?;
            if args
                .insert(name.to_string(), (glob.to_string(), matcher))
                .is_some()
            {
                return Err(ApprovalPatternError::Repeated(name.to_string()));
            }
        }
        Ok(ApprovalPattern { tool, args })
    }

    /// A pattern to offer for a call of `tool` with `input`: the tool and,
    /// when the call has a string `path`, every path in the same directory
    /// and below.
    pub fn suggest(tool: &str, input: &Value) -> String {
        match input.get("path").and_then(Value::as_str) {
            Some(path) if !path.contains(char::is_whitespace) => {
                let path = normalize_path(path);
                match path.rsplit_once('/') {
                    Some(("", _)) => format!("{tool} path=/**"),
                    Some((dir, _)) => format!("{tool} path={dir}/**"),
                    None => format!("{tool} path=*"),
                }
            }
            Some(_) | None => tool.to_string(),
        }
    }

    /// Whether a call of `tool` with `input` matches.
    pub fn matches(&self, tool: &str, input: &Value) -> bool {
        self.tool.1.is_match(tool)
            && self.args.iter().all(|(name, (_, glob))| {
                let strings: Vec<&str> = match input.get(name) {
                    Some(Value::String(s)) => vec![s.as_str()],
                    Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
                    Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_))
                    | None => Vec::new(),
                };
                strings
                    .into_iter()
                    .any(|s| glob.is_match(normalize_path(s)))
            })
    }

    /// In words, for the confirmation question: `every write_file call
    /// whose path matches src/**`.
    pub fn describe(&self) -> String {
        let tool = &self.tool.0;
        let calls = if tool.contains(['*', '?', '[', '{']) {
            format!("every call of a tool matching {tool}")
        } else {
            format!("every {tool} call")
        };
        let conditions: Vec<String> = self
            .args
            .iter()
            .map(|(name, (glob, _))| format!("{name} matches {glob}"))
            .collect();
        if conditions.is_empty() {
            calls
        } else {
            format!("{calls} whose {}", conditions.join(" and whose "))
        }
    }
}

impl fmt::Display for ApprovalPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tool.0)?;
        for (name, (glob, _)) in &self.args {
            write!(f, " {name}={glob}")?;
        }
        Ok(())
    }
}

impl PartialEq for ApprovalPattern {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Serialize for ApprovalPattern {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ApprovalPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ApprovalPattern::parse(&text).map_err(serde::de::Error::custom)
    }
}

fn compile(glob: &str, literal_separator: bool) -> Result<GlobMatcher, ApprovalPatternError> {
    GlobBuilder::new(glob)
        .literal_separator(literal_separator)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|source| ApprovalPatternError::BadGlob {
            glob: glob.to_string(),
            source,
        })
}

/// `glob` without leading `./`, which a normalised path never has.
fn trim_dot_slash(mut glob: &str) -> &str {
    while let Some(rest) = glob.strip_prefix("./") {
        glob = rest.trim_start_matches('/');
    }
    glob
}

/// A standing permission the user gave for the rest of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionGrant {
    /// This exact call: the same tool with the same arguments.
    Fingerprint {
        /// The tool.
        tool: String,
        /// Its fingerprint.
        sha256: CallFingerprint,
    },
    /// Every call matching the pattern.
    Pattern {
        /// The pattern, as `TOOL [ARG=GLOB ...]`.
        pattern: ApprovalPattern,
    },
    /// Every call of the tool whose destinations are all among these.
    Network {
        /// The tool.
        tool: String,
        /// Exact destinations: scheme, host and port.
        destinations: Vec<NetPattern>,
    },
}

impl SessionGrant {
    /// Whether the grant covers a call of `tool` with `input`.
    pub fn covers(&self, tool: &str, input: &Value) -> bool {
        match self {
            SessionGrant::Fingerprint { tool: t, sha256 } => {
                t == tool && *sha256 == CallFingerprint::of(tool, input)
            }
            SessionGrant::Pattern { pattern } => pattern.matches(tool, input),
            SessionGrant::Network {
                tool: t,
                destinations,
            } => {
                t == tool
                    && call_destinations(input).is_ok_and(|wanted| {
                        !wanted.is_empty() && wanted.iter().all(|w| destinations.contains(w))
                    })
            }
        }
    }
}

/// The session grants of one process or agent session. Shared by every
/// call of the session (through [`Approvals`](super::Approvals)); safe to
/// use from several threads.
#[derive(Debug, Default)]
pub struct ApprovalSession {
    grants: Mutex<Vec<SessionGrant>>,
}

impl ApprovalSession {
    /// A session with no grants.
    pub fn new() -> Self {
        ApprovalSession::default()
    }

    /// The first grant covering a call of `tool` with `input`.
    pub fn covering(&self, tool: &str, input: &Value) -> Option<SessionGrant> {
        let grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        grants.iter().find(|g| g.covers(tool, input)).cloned()
    }

    /// Remember `grant` for the rest of the session.
    pub fn add(&self, grant: SessionGrant) {
        let mut grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        if !grants.contains(&grant) {
            grants.push(grant);
        }
    }

    /// Every grant so far, oldest first.
    pub fn grants(&self) -> Vec<SessionGrant> {
        self.grants
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fingerprints_ignore_key_order_but_not_values() {
        let a = serde_json::from_str::<Value>(r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#).unwrap();
        let b = serde_json::from_str::<Value>(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), r#"{"a":{"x":"s","y":[1,2]},"b":1}"#);
        assert_eq!(CallFingerprint::of("t", &a), CallFingerprint::of("t", &b));
        assert_ne!(CallFingerprint::of("t", &a), CallFingerprint::of("u", &a));
        let c = json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        assert_ne!(CallFingerprint::of("t", &a), CallFingerprint::of("t", &c));
    }

    #[test]
    fn patterns_match_tools_and_normalised_paths() {
        let p = ApprovalPattern::parse("write_file path=src/**").unwrap();
        assert!(p.matches("write_file", &json!({"path": "src/a/b.rs"})));
        assert!(p.matches("write_file", &json!({"path": "./src/x.rs"})));
        assert!(!p.matches("write_file", &json!({"path": "src/../../x.rs"})));
        assert!(!p.matches("edit_file", &json!({"path": "src/x.rs"})));
        assert!(!p.matches("write_file", &json!({"content": "src/x"})));
        let p = ApprovalPattern::parse("*_file path=*.md").unwrap();
        assert!(p.matches("edit_file", &json!({"path": "notes.md"})));
        assert!(!p.matches("edit_file", &json!({"path": "docs/notes.md"})));
        assert_eq!(p.to_string(), "*_file path=*.md");
        assert_eq!(
            p.describe(),
            "every call of a tool matching *_file whose path matches *.md"
        );
    }

    #[test]
    fn bad_patterns_say_what_is_wrong() {
        for (text, wanted) in [
            ("", "starts with a tool name"),
            ("path=x", "starts with a tool name"),
            ("write_file path", "expected ARG=GLOB"),
            ("write_file path=[", "bad glob"),
            ("write_file path=a path=b", "given twice"),
        ] {
            let err = ApprovalPattern::parse(text).unwrap_err().to_string();
            assert!(err.contains(wanted), "{text:?}: {err}");
        }
    }

    #[test]
    fn suggestions_cover_the_directory_of_the_path() {
        let s = |input: Value| ApprovalPattern::suggest("write_file", &input);
        assert_eq!(s(json!({"path": "src/a/b.rs"})), "write_file path=src/a/**");
        assert_eq!(s(json!({"path": "./notes.md"})), "write_file path=*");
        assert_eq!(s(json!({"path": "/etc/x"})), "write_file path=/etc/**");
        assert_eq!(s(json!({"path": "/x"})), "write_file path=/**");
        assert_eq!(s(json!({"path": "a b/c"})), "write_file");
        assert_eq!(s(json!({})), "write_file");
        let pattern = ApprovalPattern::parse(&s(json!({"path": "src/a/b.rs"}))).unwrap();
        assert!(pattern.matches("write_file", &json!({"path": "src/a/b.rs"})));
    }

    #[test]
    fn a_session_remembers_each_grant_once() {
        let session = ApprovalSession::new();
        let input = json!({"path": "a.txt"});
        assert_eq!(session.covering("write_file", &input), None);
        let grant = SessionGrant::Fingerprint {
            tool: "write_file".into(),
            sha256: CallFingerprint::of("write_file", &input),
        };
        session.add(grant.clone());
        session.add(grant.clone());
        assert_eq!(session.grants().len(), 1);
        assert_eq!(session.covering("write_file", &input), Some(grant));
        assert_eq!(
            session.covering("write_file", &json!({"path": "b.txt"})),
            None
        );
    }

    #[test]
    fn a_network_grant_covers_its_exact_destinations_only() {
        let grant = SessionGrant::Network {
            tool: "http_fetch".into(),
            destinations: vec!["http://127.0.0.1:8080".parse().unwrap()],
        };
        let covers = |tool: &str, input: Value| grant.covers(tool, &input);
        assert!(covers(
            "http_fetch",
            json!({"url": "http://127.0.0.1:8080/a?b"})
        ));
        assert!(covers("http_fetch", json!({"url": "HTTP://127.1:8080/"})));
        assert!(!covers(
            "http_fetch",
            json!({"url": "http://127.0.0.1:8081/"})
        ));
        assert!(!covers(
            "http_fetch",
            json!({"url": "https://127.0.0.1:8080/"})
        ));
        assert!(!covers(
            "http_fetch",
            json!({"url": "http://localhost:8080/"})
        ));
        assert!(!covers("web_get", json!({"url": "http://127.0.0.1:8080/"})));
        assert!(!covers("http_fetch", json!({})));
    }
}
