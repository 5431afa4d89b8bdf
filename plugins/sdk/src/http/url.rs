//! `http` and `https` URLs: parsing, resolving references (redirects, links)
//! and the pieces `wasi:http` wants (scheme, authority, path with query).
//!
//! Deliberately small and strict: no user info, ASCII host names only
//! (internationalised names must be given in punycode), the fragment is
//! dropped. Characters a URL may not carry (spaces, quotes, non-ASCII) are
//! percent-encoded in the path and query; existing escapes are kept. The
//! host's egress layer re-checks every request; this parser exists so a bad
//! URL fails early with a clear message.

use std::fmt;

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("not an absolute URL: expected scheme://host/path, e.g. https://example.com/")]
    NotAbsolute,
    #[error("unsupported scheme `{0}`: only http and https are supported")]
    UnsupportedScheme(String),
    #[error("user info (user:password@) is not allowed in URLs; send credentials in a header")]
    Userinfo,
    #[error("the URL has no host")]
    EmptyHost,
    #[error(
        "host `{0}` is not ASCII: give internationalised names in punycode (xn--…), e.g. xn--bcher-kva.example"
    )]
    NonAsciiHost(String),
    #[error("invalid host `{0}`")]
    InvalidHost(String),
    #[error("invalid port `{0}`: expected a number from 1 to 65535")]
    InvalidPort(String),
    #[error("the URL contains a control character (such as a line break)")]
    ControlCharacter,
}

/// An absolute `http` or `https` URL without user info or fragment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Url {
    /// `http` or `https`.
    scheme: String,
    /// Lower-cased name or IPv4 literal, or a bracketed IPv6 literal.
    host: String,
    /// `None` when absent or the scheme's default.
    port: Option<u16>,
    /// Starts with `/`, percent-encoded.
    path: String,
    /// Without the `?`, percent-encoded.
    query: Option<String>,
}

impl Url {
    /// Parse an absolute `http://` or `https://` URL.
    pub fn parse(input: &str) -> Result<Url, UrlError> {
        let input = input.trim_matches(|c: char| c.is_ascii_whitespace());
        if input.chars().any(|c| c.is_control()) {
            return Err(UrlError::ControlCharacter);
        }
        let (scheme, rest) = split_scheme(input).ok_or(UrlError::NotAbsolute)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(UrlError::UnsupportedScheme(scheme));
        }
        let rest = rest.strip_prefix("//").ok_or(UrlError::NotAbsolute)?;
        let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (host, port) = parse_authority(authority)?;
        let default = default_port(&scheme);
        let (path, query) = split_path_query(tail);
        let path = if path.is_empty() {
            "/".to_string()
        } else {
            remove_dot_segments(&encode(path, false))
        };
        Ok(Url {
            scheme,
            host,
            port: port.filter(|p| *p != default),
            path,
            query: query.map(|q| encode(q, true)),
        })
    }

    /// Resolve `reference` (absolute, `//host/…`, `/path`, `path`, `?query`
    /// or `#fragment`) against this URL, as a browser resolves a link or a
    /// redirect's `Location` (RFC 3986, section 5.2).
    pub fn join(&self, reference: &str) -> Result<Url, UrlError> {
        let reference = reference.trim_matches(|c: char| c.is_ascii_whitespace());
        if reference.chars().any(|c| c.is_control()) {
            return Err(UrlError::ControlCharacter);
        }
        if split_scheme(reference).is_some() {
            return Url::parse(reference);
        }
        if reference.starts_with("//") {
            return Url::parse(&format!("{}:{reference}", self.scheme));
        }
        let reference = reference.split('#').next().unwrap_or_default();
        let (path, query) = split_path_query(reference);
        let mut out = self.clone();
        if path.is_empty() {
            if let Some(q) = query {
                out.query = Some(encode(q, true));
            }
            return Ok(out);
        }
        let merged = if path.starts_with('/') {
            path.to_string()
        } else {
            let dir = &self.path[..self.path.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{path}")
        };
        out.path = remove_dot_segments(&encode(&merged, false));
        out.query = query.map(|q| encode(q, true));
        Ok(out)
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The host: a lower-cased name, an IPv4 literal, or `[v6]`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, explicit or the scheme's default.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or_else(|| default_port(&self.scheme))
    }

    /// `host` or `host:port` (the port only when not the default).
    pub fn authority(&self) -> String {
        match self.port {
            Some(p) => format!("{}:{p}", self.host),
            None => self.host.clone(),
        }
    }

    /// The path and query, e.g. `/search?q=x`.
    pub fn path_and_query(&self) -> String {
        match &self.query {
            Some(q) => format!("{}?{q}", self.path),
            None => self.path.clone(),
        }
    }

    /// True when `other` has the same scheme, host and port.
    pub fn same_origin(&self, other: &Url) -> bool {
        self.scheme == other.scheme && self.host == other.host && self.port() == other.port()
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}://{}{}",
            self.scheme,
            self.authority(),
            self.path_and_query()
        )
    }
}

impl std::str::FromStr for Url {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<Url, UrlError> {
        Url::parse(s)
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// `(scheme, rest)` when `s` starts with `scheme:`.
fn split_scheme(s: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = s.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some((scheme, rest))
}

/// Path and query of `tail` (which starts at the path), the fragment dropped.
fn split_path_query(tail: &str) -> (&str, Option<&str>) {
    let tail = tail.split('#').next().unwrap_or_default();
    match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    }
}

fn parse_authority(authority: &str) -> Result<(String, Option<u16>), UrlError> {
    if authority.contains('@') {
        return Err(UrlError::Userinfo);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| UrlError::InvalidHost(authority.to_string()))?;
        if addr.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(UrlError::InvalidHost(authority.to_string()));
        }
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| UrlError::InvalidHost(authority.to_string()))?,
            ),
        };
        (format!("[{}]", addr.to_ascii_lowercase()), port)
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if host.is_empty() {
            return Err(UrlError::EmptyHost);
        }
        if !host.is_ascii() {
            return Err(UrlError::NonAsciiHost(host.to_string()));
        }
        let valid = host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
        if !valid || host.starts_with('.') || host.contains("..") {
            return Err(UrlError::InvalidHost(host.to_string()));
        }
        (host.to_ascii_lowercase(), port)
    };
    let port = match port {
        None | Some("") => None,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(UrlError::InvalidPort(p.to_string())),
        },
    };
    Ok((host, port))
}

/// Percent-encode what may not appear in a path (or, with `query`, a query):
/// controls, space, non-ASCII and a few delimiters. `%` is kept as is, so
/// existing escapes survive; a backslash becomes `/` in a path, as browsers do.
fn encode(s: &str, query: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' if !query => out.push('/'),
            ' ' | '"' | '<' | '>' | '`' | '{' | '}' | '|' | '\\' | '^' => push_escaped(&mut out, c),
            '#' => push_escaped(&mut out, c),
            c if c.is_ascii() => out.push(c),
            c => push_escaped(&mut out, c),
        }
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    for b in c.encode_utf8(&mut buf).bytes() {
        out.push_str(&format!("%{b:02X}"));
    }
}

/// RFC 3986, section 5.2.4, on a path that starts with `/`.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." | "%2e" | "%2E" => {
                if i == last {
                    out.push("");
                }
            }
            ".." | ".%2e" | ".%2E" | "%2e." | "%2E." | "%2e%2e" | "%2E%2E" => {
                out.pop();
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn parses_and_normalises() {
        let u = url("  HTTPS://Example.COM:443/a/./b/../c?q=1 2#frag ");
        assert_eq!(u.to_string(), "https://example.com/a/c?q=1%202");
        assert_eq!((u.host(), u.port()), ("example.com", 443));
        assert_eq!(u.authority(), "example.com");
        assert_eq!(url("http://h:8080").to_string(), "http://h:8080/");
        assert_eq!(url("http://h:8080").authority(), "h:8080");
        assert_eq!(url("http://[::1]:9/x").host(), "[::1]");
        assert_eq!(url("http://[::1]:9/x").port(), 9);
        assert_eq!(
            url("https://h/caf\u{e9} \"x\"").path_and_query(),
            "/caf%C3%A9%20%22x%22"
        );
        assert_eq!(url("https://h/a%20b").path_and_query(), "/a%20b");
        assert_eq!(url("https://h?x").path_and_query(), "/?x");
        assert_eq!(url("https://h\\a\\b").path_and_query(), "/a/b");
    }

    #[test]
    fn refuses_what_it_cannot_send() {
        let err = |s: &str| Url::parse(s).unwrap_err();
        assert_eq!(err("example.com/x"), UrlError::NotAbsolute);
        assert_eq!(err("/relative"), UrlError::NotAbsolute);
        assert_eq!(err("ftp://h/"), UrlError::UnsupportedScheme("ftp".into()));
        assert_eq!(
            err("file:///etc/passwd"),
            UrlError::UnsupportedScheme("file".into())
        );
        assert_eq!(err("https://user:pw@h/"), UrlError::Userinfo);
        assert_eq!(err("https:///x"), UrlError::EmptyHost);
        assert_eq!(err("https://h:0/"), UrlError::InvalidPort("0".into()));
        assert_eq!(
            err("https://h:99999/"),
            UrlError::InvalidPort("99999".into())
        );
        assert_eq!(err("https://h:+80/"), UrlError::InvalidPort("+80".into()));
        assert!(matches!(
            err("https://bücher.example/"),
            UrlError::NonAsciiHost(_)
        ));
        assert!(matches!(err("https://a b/"), UrlError::InvalidHost(_)));
        assert!(matches!(err("https://[zz]/"), UrlError::InvalidHost(_)));
        assert_eq!(err("https://h/a\r\nX: y"), UrlError::ControlCharacter);
        assert!(err("ftp://h/").to_string().contains("only http and https"));
    }

    #[test]
    fn joins_references_like_a_browser() {
        let base = url("https://a.example/dir/page?x=1");
        let join = |r: &str| base.join(r).unwrap().to_string();
        assert_eq!(join("other"), "https://a.example/dir/other");
        assert_eq!(join("../up"), "https://a.example/up");
        assert_eq!(join("../../../top"), "https://a.example/top");
        assert_eq!(join("/root?y=2"), "https://a.example/root?y=2");
        assert_eq!(join("?y=2"), "https://a.example/dir/page?y=2");
        assert_eq!(join("#frag"), "https://a.example/dir/page?x=1");
        assert_eq!(join(""), "https://a.example/dir/page?x=1");
        assert_eq!(join("./"), "https://a.example/dir/");
        assert_eq!(join("//b.example/p"), "https://b.example/p");
        assert_eq!(join("http://c.example:8080/q"), "http://c.example:8080/q");
        assert_eq!(
            base.join("mailto:x@y").unwrap_err(),
            UrlError::UnsupportedScheme("mailto".into())
        );
        assert!(url("https://a/").same_origin(&url("https://a:443/x")));
        assert!(!url("https://a/").same_origin(&url("http://a/")));
    }
}
