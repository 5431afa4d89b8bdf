//! Destinations as rules and manifests name them: `scheme://host[:port]`.
//!
//! Invariants: the scheme is `http` or `https`; the host is an exact name,
//! a literal IP address (normalised like a request's), `*.suffix` matching
//! exactly one more label (never the apex), or `*` for any host; a missing
//! port is the scheme's default, except for `*` hosts, which cover every
//! port. Nothing else (paths, user info, queries) is accepted.

use std::net::IpAddr;
use std::str::FromStr;

use super::address::{Host, classify, parse_host};

/// A URL scheme egress can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub fn parse(s: &str) -> Option<Scheme> {
        match s.to_ascii_lowercase().as_str() {
            "http" => Some(Scheme::Http),
            "https" => Some(Scheme::Https),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// Which hosts a pattern covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HostPattern {
    /// `*`: every host.
    Any,
    /// One name, exactly.
    Exact(String),
    /// `*.suffix`: names with exactly one label before `suffix`.
    Wildcard(String),
    /// One literal address.
    Ip(IpAddr),
}

/// Which ports a pattern covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortPattern {
    Any,
    Exact(u16),
}

/// `scheme://host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NetPattern {
    pub scheme: Scheme,
    pub host: HostPattern,
    pub port: PortPattern,
}

/// Why a pattern did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not a destination: {why} (write scheme://host[:port], scheme http or https, \
     host a name, `*.name`, `*` or an IP address, port a number or `*`)"
)]
pub struct PatternError {
    pub text: String,
    pub why: String,
}

impl FromStr for NetPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = |why: &str| PatternError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(|| err("no scheme"))?;
        let scheme =
            Scheme::parse(scheme).ok_or_else(|| err("the scheme must be http or https"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#', '@']) {
            return Err(err("no path, query or user info allowed"));
        }
        let (host, port) = split_port(rest).ok_or_else(|| err("bad port"))?;
        let host = match host {
            "*" => HostPattern::Any,
            h => match h.strip_prefix("*.") {
                Some(suffix) => match parse_host(suffix) {
                    Ok(Host::Name(n)) if n.contains('.') => HostPattern::Wildcard(n),
                    _ => {
                        return Err(err(
                            "a wildcard needs a name of two or more labels after `*.`",
                        ));
                    }
                },
                None => match parse_host(h).map_err(|e| err(&e.to_string()))? {
                    Host::Name(n) => HostPattern::Exact(n),
                    Host::Ip(ip) if classify(ip).never_allowed() => {
                        return Err(err(
                            "unspecified, multicast and broadcast addresses are never reachable",
                        ));
                    }
                    Host::Ip(ip) => HostPattern::Ip(ip),
                },
            },
        };
        let port = match (port, &host) {
            (Some("*"), _) | (None, HostPattern::Any) => PortPattern::Any,
            (None, _) => PortPattern::Exact(scheme.default_port()),
            (Some(p), _) => match p.parse::<u16>() {
                Ok(p) if p > 0 => PortPattern::Exact(p),
                _ => return Err(err("the port must be 1 to 65535 or `*`")),
            },
        };
        Ok(NetPattern { scheme, host, port })
    }
}

/// Split `host[:port]`, minding IPv6 brackets.
fn split_port(rest: &str) -> Option<(&str, Option<&str>)> {
    if rest.starts_with('[') {
        let end = rest.find(']')?;
        let (host, after) = rest.split_at(end + 1);
        return match after {
            "" => Some((host, None)),
            a => a.strip_prefix(':').map(|p| (host, Some(p))),
        };
    }
    match rest.split_once(':') {
        Some((_, p)) if p.contains(':') => None,
        Some((h, p)) => Some((h, Some(p))),
        None => Some((rest, None)),
    }
}

impl std::fmt::Display for NetPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://", self.scheme.as_str())?;
        match &self.host {
            HostPattern::Any => f.write_str("*")?,
            HostPattern::Exact(n) => f.write_str(n)?,
            HostPattern::Wildcard(s) => write!(f, "*.{s}")?,
            HostPattern::Ip(ip) => write!(f, "{}", Host::Ip(*ip))?,
        }
        match (self.port, &self.host) {
            (PortPattern::Any, HostPattern::Any) => Ok(()),
            (PortPattern::Any, _) => f.write_str(":*"),
            (PortPattern::Exact(p), _) => write!(f, ":{p}"),
        }
    }
}

impl serde::Serialize for NetPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for NetPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl HostPattern {
    /// Whether `host` is one of the hosts covered.
    pub fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (HostPattern::Any, _) => true,
            (HostPattern::Exact(p), Host::Name(n)) => p == n,
            (HostPattern::Wildcard(suffix), Host::Name(n)) => n
                .strip_suffix(suffix.as_str())
                .and_then(|head| head.strip_suffix('.'))
                .is_some_and(|label| !label.is_empty() && !label.contains('.')),
            (HostPattern::Ip(p), Host::Ip(ip)) => p == ip,
            (HostPattern::Exact(_) | HostPattern::Wildcard(_), Host::Ip(_))
            | (HostPattern::Ip(_), Host::Name(_)) => false,
        }
    }

    /// Whether some host is covered by both.
    fn overlaps(&self, other: &HostPattern) -> bool {
        match (self, other) {
            (HostPattern::Any, _) | (_, HostPattern::Any) => true,
            (HostPattern::Exact(n), p) | (p, HostPattern::Exact(n)) => {
                p.matches(&Host::Name(n.clone()))
            }
            (HostPattern::Ip(ip), p) | (p, HostPattern::Ip(ip)) => p.matches(&Host::Ip(*ip)),
            (HostPattern::Wildcard(a), HostPattern::Wildcard(b)) => a == b,
        }
    }
}

impl PortPattern {
    pub fn matches(self, port: u16) -> bool {
        match self {
            PortPattern::Any => true,
            PortPattern::Exact(p) => p == port,
        }
    }

    fn overlaps(self, other: PortPattern) -> bool {
        match (self, other) {
            (PortPattern::Any, _) | (_, PortPattern::Any) => true,
            (PortPattern::Exact(a), PortPattern::Exact(b)) => a == b,
        }
    }
}

impl NetPattern {
    /// Whether the destination is covered.
    pub fn matches(&self, scheme: Scheme, host: &Host, port: u16) -> bool {
        self.scheme == scheme && self.port.matches(port) && self.host.matches(host)
    }

    /// Whether some destination is covered by both patterns.
    pub fn overlaps(&self, other: &NetPattern) -> bool {
        self.scheme == other.scheme
            && self.port.overlaps(other.port)
            && self.host.overlaps(&other.host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> NetPattern {
        s.parse().unwrap()
    }

    fn name(n: &str) -> Host {
        Host::Name(n.into())
    }

    #[test]
    fn ports_default_by_scheme_except_for_any_host() {
        assert_eq!(p("https://api.example.com").port, PortPattern::Exact(443));
        assert_eq!(p("http://api.example.com/").port, PortPattern::Exact(80));
        assert_eq!(p("https://api.example.com:*").port, PortPattern::Any);
        assert_eq!(p("https://*").port, PortPattern::Any);
        assert_eq!(p("https://*:8443").port, PortPattern::Exact(8443));
        assert_eq!(
            p("http://[::1]:8080").host,
            HostPattern::Ip("::1".parse().unwrap())
        );
        assert_eq!(
            p("http://2130706433").host,
            HostPattern::Ip("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            p("HTTPS://API.example.com:443").to_string(),
            "https://api.example.com:443"
        );
        assert_eq!(p("https://*").to_string(), "https://*");
    }

    #[test]
    fn bad_patterns_are_refused() {
        for bad in [
            "api.example.com",
            "ftp://example.com",
            "https://example.com/path",
            "https://user@example.com",
            "https://example.com:0",
            "https://example.com:99999",
            "https://*.com",
            "https://*.*.example.com",
            "https://0.0.0.0",
            "https://[::]",
            "https://224.0.0.1",
            "https://[::1%25lo]",
            "https://a:b:c",
        ] {
            assert!(bad.parse::<NetPattern>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn wildcards_match_one_label_never_the_apex() {
        let w = p("https://*.example.com");
        assert!(w.matches(Scheme::Https, &name("api.example.com"), 443));
        assert!(!w.matches(Scheme::Https, &name("example.com"), 443));
        assert!(!w.matches(Scheme::Https, &name("a.b.example.com"), 443));
        assert!(!w.matches(Scheme::Https, &name("evilexample.com"), 443));
        assert!(!w.matches(Scheme::Http, &name("api.example.com"), 443));
        assert!(!w.matches(Scheme::Https, &name("api.example.com"), 8443));
        let any = p("http://*");
        assert!(any.matches(Scheme::Http, &Host::Ip("10.0.0.1".parse().unwrap()), 1));
        assert!(!any.matches(Scheme::Https, &name("x.y"), 443));
    }

    #[test]
    fn overlap_is_symmetric_and_exact() {
        let pairs = [
            ("https://*", "https://api.example.com", true),
            ("https://*.example.com", "https://api.example.com", true),
            ("https://*.example.com", "https://example.com", false),
            ("https://*.example.com", "https://*.example.com:*", true),
            ("https://*.example.com", "https://*.example.org", false),
            ("https://api.example.com", "http://api.example.com", false),
            (
                "https://api.example.com",
                "https://api.example.com:8443",
                false,
            ),
            ("https://*", "https://127.0.0.1", true),
            ("http://127.0.0.1:*", "http://127.0.0.1:8080", true),
        ];
        for (a, b, want) in pairs {
            assert_eq!(p(a).overlaps(&p(b)), want, "{a} ∩ {b}");
            assert_eq!(p(b).overlaps(&p(a)), want, "{b} ∩ {a}");
        }
    }
}
