//! A policy's network rule: a destination, optionally narrowed to methods
//! and paths, optionally allowed to reach non-public addresses.
//!
//! Invariants: a rule never widens what its destination pattern covers;
//! non-public addresses stay refused unless the rule names the literal
//! address or lists it under `allow_private`; unspecified, multicast and
//! broadcast addresses are refused whatever a rule says. A path rule is
//! only checked against a path that reads one way: no dot segments, no
//! encoded `/`, `\` or `.` (such a request is refused, not guessed at).

use std::net::IpAddr;

use globset::{GlobSet, GlobSetBuilder};
use ipnet::IpNet;
use serde::{Deserialize, Serialize};

use super::address::{AddressClass, classify};
use super::pattern::{HostPattern, NetPattern};

/// Which non-public addresses a rule may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum PrivateAccess {
    /// Only public addresses (and an address the rule names literally).
    #[default]
    Deny,
    /// Any loopback, private, link-local, shared or reserved address.
    Any,
    /// Addresses inside these networks.
    Only(Vec<IpNet>),
}

/// One network rule of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NetRule {
    /// Where requests may go.
    pub target: NetPattern,
    /// Allowed methods, upper case; `None`: any.
    pub methods: Option<Vec<String>>,
    /// Allowed paths as globs (`*` stays within a segment, `**` crosses
    /// them); `None`: any.
    pub paths: Option<Vec<String>>,
    /// Non-public addresses the rule may reach.
    pub private: PrivateAccess,
}

/// A rule as a policy file spells it: a string or a table.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum RuleFile {
    Plain(NetPattern),
    Table(RuleTable),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleTable {
    url: NetPattern,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    methods: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paths: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    allow_private: Option<AllowPrivate>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum AllowPrivate {
    All(bool),
    Networks(Vec<String>),
}

impl Serialize for NetRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let plain =
            self.methods.is_none() && self.paths.is_none() && self.private == PrivateAccess::Deny;
        if plain {
            return RuleFile::Plain(self.target.clone()).serialize(s);
        }
        let allow_private = match &self.private {
            PrivateAccess::Deny => None,
            PrivateAccess::Any => Some(AllowPrivate::All(true)),
            PrivateAccess::Only(nets) => Some(AllowPrivate::Networks(
                nets.iter().map(IpNet::to_string).collect(),
            )),
        };
        RuleFile::Table(RuleTable {
            url: self.target.clone(),
            methods: self.methods.clone(),
            paths: self.paths.clone(),
            allow_private,
        })
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for NetRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RuleVisitor;

        impl<'de> serde::de::Visitor<'de> for RuleVisitor {
            type Value = NetRule;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a destination `scheme://host[:port]` or a table with `url`")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<NetRule, E> {
                s.parse::<NetPattern>().map(NetRule::to).map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<NetRule, A::Error> {
                let table =
                    RuleTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                NetRule::from_table(table).map_err(serde::de::Error::custom)
            }
        }

        d.deserialize_any(RuleVisitor)
    }
}

impl std::fmt::Display for NetRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.target)?;
        if let Some(m) = &self.methods {
            write!(f, " {}", m.join("|"))?;
        }
        if let Some(p) = &self.paths {
            write!(f, " {}", p.join(" "))?;
        }
        match &self.private {
            PrivateAccess::Deny => Ok(()),
            PrivateAccess::Any => f.write_str(" (private addresses allowed)"),
            PrivateAccess::Only(n) => {
                let nets: Vec<String> = n.iter().map(IpNet::to_string).collect();
                write!(f, " (private {} allowed)", nets.join(", "))
            }
        }
    }
}

/// Why a network rule cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum NetRuleError {
    /// `methods = []`.
    #[error("`methods` is empty; leave it out to allow any")]
    NoMethods,
    /// A method that is not letters.
    #[error("`{0}` is not an HTTP method")]
    BadMethod(String),
    /// `paths = []`.
    #[error("`paths` is empty; leave it out to allow any")]
    NoPaths,
    /// A path glob not starting with `/`.
    #[error("path glob `{0}` must start with `/`")]
    RelativePath(String),
    /// A path glob that does not compile.
    #[error("bad path glob `{pattern}`: {source}")]
    BadPathGlob {
        pattern: String,
        source: globset::Error,
    },
    /// The path globs do not compile together.
    #[error("{0}")]
    PathSet(globset::Error),
    /// An `allow_private` entry that is neither an address nor a network.
    #[error("`{0}` in `allow_private` is not an address or CIDR network")]
    BadPrivateNetwork(String),
}

impl NetRule {
    /// A rule allowing `target`, any method and path, public addresses.
    pub fn to(target: NetPattern) -> NetRule {
        NetRule {
            target,
            methods: None,
            paths: None,
            private: PrivateAccess::Deny,
        }
    }

    fn from_table(t: RuleTable) -> Result<NetRule, NetRuleError> {
        let methods = match t.methods {
            None => None,
            Some(m) if m.is_empty() => {
                return Err(NetRuleError::NoMethods);
            }
            Some(m) => Some(
                m.into_iter()
                    .map(|m| {
                        if !m.is_empty() && m.bytes().all(|b| b.is_ascii_alphabetic()) {
                            Ok(m.to_ascii_uppercase())
                        } else {
                            Err(NetRuleError::BadMethod(m))
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        if let Some(paths) = &t.paths {
            if paths.is_empty() {
                return Err(NetRuleError::NoPaths);
            }
            path_set(paths)?;
        }
        let private = match t.allow_private {
            None | Some(AllowPrivate::All(false)) => PrivateAccess::Deny,
            Some(AllowPrivate::All(true)) => PrivateAccess::Any,
            Some(AllowPrivate::Networks(nets)) => PrivateAccess::Only(
                nets.iter()
                    .map(|n| {
                        n.parse::<IpNet>()
                            .or_else(|_| n.parse::<IpAddr>().map(IpNet::from))
                            .map(|n| n.trunc())
                            .map_err(|_| NetRuleError::BadPrivateNetwork(n.clone()))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(NetRule {
            target: t.url,
            methods,
            paths: t.paths,
            private,
        })
    }

    /// Whether the rule lets a request reach `ip`.
    pub fn reaches(&self, ip: IpAddr) -> bool {
        let class = classify(ip);
        if class == AddressClass::Public {
            return true;
        }
        if class.never_allowed() {
            return false;
        }
        if self.target.host == HostPattern::Ip(ip) {
            return true;
        }
        match &self.private {
            PrivateAccess::Deny => false,
            PrivateAccess::Any => true,
            PrivateAccess::Only(nets) => nets.iter().any(|n| n.contains(&ip)),
        }
    }

    /// Whether `method` is allowed.
    pub fn allows_method(&self, method: &str) -> bool {
        self.methods
            .as_ref()
            .is_none_or(|m| m.iter().any(|m| m.eq_ignore_ascii_case(method)))
    }
}

/// The rule's path globs, compiled.
pub fn path_set(paths: &[String]) -> Result<GlobSet, NetRuleError> {
    let mut b = GlobSetBuilder::new();
    for p in paths {
        if !p.starts_with('/') {
            return Err(NetRuleError::RelativePath(p.clone()));
        }
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|source| NetRuleError::BadPathGlob {
                pattern: p.clone(),
                source,
            })?;
        b.add(glob);
    }
    b.build().map_err(NetRuleError::PathSet)
}

/// Compile a single glob.
#[cfg(test)]
fn path_glob(p: &str) -> Result<GlobSet, NetRuleError> {
    path_set(&[p.to_string()])
}

/// The path of `path_and_query` as a path rule sees it, or `None` when it
/// could be read more than one way (dot segments, encoded separators).
pub fn normalized_path(path_and_query: &str) -> Option<String> {
    let path = path_and_query.split(['?', '#']).next().unwrap_or("");
    let path = if path.is_empty() { "/" } else { path };
    let mut out = String::with_capacity(path.len());
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = path.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(hex, 16).ok()?;
            if v.is_ascii_alphanumeric() || b"-_~".contains(&v) {
                out.push(char::from(v));
            } else if b"./\\".contains(&v) {
                return None;
            } else {
                out.push('%');
                out.push_str(&hex.to_ascii_uppercase());
            }
            i += 3;
            continue;
        }
        if b == b'\\' {
            return None;
        }
        out.push(char::from(b));
        i += 1;
    }
    if out.split('/').any(|seg| seg == "." || seg == "..") {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(toml_value: &str) -> Result<NetRule, String> {
        #[derive(Deserialize)]
        struct W {
            r: NetRule,
        }
        toml::from_str::<W>(&format!("r = {toml_value}"))
            .map(|w| w.r)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn strings_and_tables_parse() {
        let plain = rule("\"https://api.example.com\"").unwrap();
        assert_eq!(
            plain,
            NetRule::to("https://api.example.com".parse().unwrap())
        );
        let t = rule(
            "{ url = \"http://internal.test:8080\", methods = [\"get\"], paths = [\"/v1/**\"], allow_private = [\"10.0.0.0/8\", \"192.168.1.7\"] }",
        )
        .unwrap();
        assert_eq!(t.methods, Some(vec!["GET".to_string()]));
        assert!(t.reaches("10.1.2.3".parse().unwrap()));
        assert!(t.reaches("192.168.1.7".parse().unwrap()));
        assert!(!t.reaches("192.168.1.8".parse().unwrap()));
        assert!(!t.reaches("127.0.0.1".parse().unwrap()));
        assert!(t.allows_method("get") && !t.allows_method("POST"));
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["allow_private"][1], "192.168.1.7/32");
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            "https://api.example.com:443"
        );
    }

    #[test]
    fn bad_tables_are_refused() {
        for bad in [
            "{ url = \"https://x.test\", methods = [] }",
            "{ url = \"https://x.test\", methods = [\"GE T\"] }",
            "{ url = \"https://x.test\", paths = [\"v1/**\"] }",
            "{ url = \"https://x.test\", paths = [\"/[\"] }",
            "{ url = \"https://x.test\", allow_private = [\"10.0.0.0/33\"] }",
            "{ url = \"https://x.test\", sudo = true }",
            "{ url = \"ftp://x.test\" }",
            "\"x.test\"",
        ] {
            assert!(rule(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn literal_addresses_and_allow_private_reach_private_addresses() {
        let literal = rule("\"http://127.0.0.1:8080\"").unwrap();
        assert!(literal.reaches("127.0.0.1".parse().unwrap()));
        assert!(!literal.reaches("127.0.0.2".parse().unwrap()));
        let any = rule("{ url = \"http://*\", allow_private = true }").unwrap();
        assert!(any.reaches("169.254.169.254".parse().unwrap()));
        assert!(!any.reaches("0.0.0.0".parse().unwrap()));
        assert!(!any.reaches("255.255.255.255".parse().unwrap()));
        let public = rule("\"https://*\"").unwrap();
        assert!(public.reaches("8.8.8.8".parse().unwrap()));
        assert!(!public.reaches("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn paths_are_read_one_way() {
        assert_eq!(normalized_path("/v1/a?x=1").as_deref(), Some("/v1/a"));
        assert_eq!(normalized_path("").as_deref(), Some("/"));
        assert_eq!(
            normalized_path("/v%31/%7euser").as_deref(),
            Some("/v1/~user")
        );
        assert_eq!(normalized_path("/a%20b").as_deref(), Some("/a%20b"));
        for bad in [
            "/v1/../admin",
            "/v1/%2e%2e/admin",
            "/v1%2fadmin",
            "/a\\b",
            "/./a",
            "/a%zz",
        ] {
            assert_eq!(normalized_path(bad), None, "{bad}");
        }
        let set = path_glob("/v1/*").unwrap();
        assert!(set.is_match("/v1/a"));
        assert!(!set.is_match("/v1/a/b"));
        assert!(path_glob("/v1/**").unwrap().is_match("/v1/a/b"));
    }
}
