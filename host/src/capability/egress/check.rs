//! The destination check: is this request, as the guest built it, allowed?
//!
//! Invariants: the host, port and scheme checked are the ones connected
//! to (the host normalised once, here); a request is allowed only by a
//! rule that matches its scheme, host, port, method and path, and only if
//! the plugin declared the destination; user info, a Host header other
//! than the URL's, and header bytes CR, LF or NUL are refused; every
//! address a name resolves to must be reachable under an allowing rule.

use std::net::IpAddr;

use globset::GlobSet;

use super::address::{Host, canonical_ip, classify, parse_host};
use super::grant::NetworkGrant;
use super::pattern::Scheme;
use super::record::DenialReason;
use super::rule::{NetRule, normalized_path, path_set};

/// A network grant with its path globs compiled.
#[derive(Debug, Clone)]
pub struct CompiledGrant {
    pub grant: NetworkGrant,
    paths: Vec<Option<GlobSet>>,
}

impl CompiledGrant {
    pub fn new(grant: NetworkGrant) -> CompiledGrant {
        // Globs were validated when the policy was parsed; one that fails
        // now matches nothing (fail closed).
        let paths = grant
            .rules
            .iter()
            .map(|r| {
                r.paths
                    .as_ref()
                    .map(|p| path_set(p).unwrap_or_else(|_| GlobSet::empty()))
            })
            .collect();
        CompiledGrant { grant, paths }
    }
}

/// Where a request goes, as checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub scheme: Scheme,
    pub host: Host,
    pub port: u16,
    pub method: String,
    /// The path without the query, as sent.
    pub path: String,
}

impl Destination {
    /// `host:port` for messages.
    pub fn label(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// A request that passed the name check, and the rules that allow it.
#[derive(Debug, Clone)]
pub struct Allowed {
    pub dest: Destination,
    pub rules: Vec<NetRule>,
}

/// A refusal, with the destination as far as it could be read.
pub type Refusal = (String, DenialReason);

/// Check the request line and headers against the grant.
pub fn check_request(
    grant: &CompiledGrant,
    req: &http::request::Parts,
) -> Result<Allowed, Refusal> {
    let raw_authority = req.uri.authority().map(|a| a.as_str()).unwrap_or("");
    let method = req.method.as_str().to_string();
    let refuse = |dest: &str, reason: DenialReason| Err((dest.to_string(), reason));
    let scheme = match req.uri.scheme_str().and_then(Scheme::parse) {
        Some(s) => s,
        None => {
            let scheme = req.uri.scheme_str().unwrap_or("").to_string();
            return refuse(raw_authority, DenialReason::Scheme { scheme });
        }
    };
    let Some(authority) = req.uri.authority() else {
        return refuse(
            "(no host)",
            DenialReason::BadHost {
                detail: "the URL has no host".into(),
            },
        );
    };
    if authority.as_str().contains('@') {
        return refuse(raw_authority, DenialReason::Userinfo);
    }
    let host = match parse_host(authority.host()) {
        Ok(h) => h,
        Err(e) => {
            return refuse(
                raw_authority,
                DenialReason::BadHost {
                    detail: e.to_string(),
                },
            );
        }
    };
    let port = match authority.port_u16() {
        Some(0) => {
            return refuse(
                raw_authority,
                DenialReason::BadHost {
                    detail: "port 0".into(),
                },
            );
        }
        Some(p) => p,
        None => scheme.default_port(),
    };
    let label = format!("{host}:{port}");
    for (name, value) in &req.headers {
        if value
            .as_bytes()
            .iter()
            .any(|b| matches!(b, b'\r' | b'\n' | 0))
        {
            return refuse(
                &label,
                DenialReason::BadHeader {
                    name: name.to_string(),
                },
            );
        }
        if name == http::header::HOST
            && !value
                .as_bytes()
                .eq_ignore_ascii_case(authority.as_str().as_bytes())
        {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            return refuse(&label, DenialReason::HostHeader { value });
        }
    }
    let path_and_query = req.uri.path_and_query().map_or("/", |p| p.as_str());
    let path = path_and_query
        .split(['?', '#'])
        .next()
        .unwrap_or("/")
        .to_string();
    let dest = Destination {
        scheme,
        host,
        port,
        method,
        path,
    };

    let g = &grant.grant;
    let candidates: Vec<usize> = (0..g.rules.len())
        .filter(|&i| g.rules[i].target.matches(scheme, &dest.host, port))
        .collect();
    if candidates.is_empty() {
        return refuse(&label, DenialReason::NoRule);
    }
    if !g
        .declared
        .iter()
        .any(|d| d.matches(scheme, &dest.host, port))
    {
        return refuse(&label, DenialReason::NotDeclared);
    }
    let normalized = normalized_path(path_and_query);
    let mut ambiguous = false;
    let allowing: Vec<NetRule> = candidates
        .iter()
        .filter(|&&i| g.rules[i].allows_method(&dest.method))
        .filter(|&&i| match (&grant.paths[i], &normalized) {
            (None, _) => true,
            (Some(set), Some(p)) => set.is_match(p),
            (Some(_), None) => {
                ambiguous = true;
                false
            }
        })
        .map(|&i| g.rules[i].clone())
        .collect();
    if allowing.is_empty() {
        let reason = if ambiguous {
            DenialReason::AmbiguousPath
        } else {
            DenialReason::MethodOrPath {
                method: dest.method.clone(),
                path: dest.path.clone(),
            }
        };
        return refuse(&label, reason);
    }
    Ok(Allowed {
        dest,
        rules: allowing,
    })
}

/// Vet every address the host has: all must be reachable under some
/// allowing rule. Returns them canonical and de-duplicated, in order.
pub fn vet_addresses(allowed: &Allowed, addresses: &[IpAddr]) -> Result<Vec<IpAddr>, DenialReason> {
    let literal = matches!(allowed.dest.host, Host::Ip(_));
    let mut vetted: Vec<IpAddr> = Vec::with_capacity(addresses.len());
    for &raw in addresses {
        let ip = canonical_ip(raw);
        if !allowed.rules.iter().any(|r| r.reaches(ip)) {
            let host = allowed.dest.host.to_string();
            let class = classify(ip);
            return Err(if literal {
                DenialReason::LiteralAddress {
                    host,
                    address: ip,
                    class,
                }
            } else {
                DenialReason::ResolvedAddress {
                    host,
                    address: ip,
                    class,
                }
            });
        }
        if !vetted.contains(&ip) {
            vetted.push(ip);
        }
    }
    Ok(vetted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::egress::rule::NetRule;

    fn grant(declared: &[&str], rules: &[&str]) -> CompiledGrant {
        #[derive(serde::Deserialize)]
        struct W {
            r: NetRule,
        }
        let rules: Vec<NetRule> = rules
            .iter()
            .map(|r| toml::from_str::<W>(&format!("r = {r}")).unwrap().r)
            .collect();
        CompiledGrant::new(NetworkGrant {
            rules,
            declared: declared.iter().map(|d| d.parse().unwrap()).collect(),
            credentials: Vec::new(),
        })
    }

    fn req(method: &str, uri: &str, headers: &[(&str, &[u8])]) -> http::request::Parts {
        let mut b = http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            b = b.header(*k, http::HeaderValue::from_bytes(v).unwrap());
        }
        b.body(()).unwrap().into_parts().0
    }

    fn reason(g: &CompiledGrant, r: &http::request::Parts) -> DenialReason {
        check_request(g, r).unwrap_err().1
    }

    #[test]
    fn rules_and_declarations_both_apply() {
        let g = grant(
            &["https://*"],
            &[
                "\"https://api.example.com\"",
                "\"http://plain.example.com\"",
            ],
        );
        assert!(check_request(&g, &req("GET", "https://api.example.com/x", &[])).is_ok());
        assert_eq!(
            reason(&g, &req("GET", "https://evil.test/", &[])),
            DenialReason::NoRule
        );
        assert_eq!(
            reason(&g, &req("GET", "http://plain.example.com/", &[])),
            DenialReason::NotDeclared
        );
        assert_eq!(
            reason(&g, &req("GET", "https://api.example.com:8443/", &[])),
            DenialReason::NoRule
        );
        assert_eq!(
            reason(&g, &req("GET", "ftp://api.example.com/", &[])),
            DenialReason::Scheme {
                scheme: "ftp".into()
            }
        );
        let (dest, r) =
            check_request(&g, &req("GET", "https://user:pw@api.example.com/", &[])).unwrap_err();
        assert_eq!(
            (dest.as_str(), r),
            ("user:pw@api.example.com", DenialReason::Userinfo)
        );
    }

    #[test]
    fn methods_and_paths_narrow() {
        let g = grant(
            &["https://*"],
            &["{ url = \"https://api.example.com\", methods = [\"GET\"], paths = [\"/v1/**\"] }"],
        );
        assert!(check_request(&g, &req("GET", "https://api.example.com/v1/a?q=1", &[])).is_ok());
        assert!(matches!(
            reason(&g, &req("POST", "https://api.example.com/v1/a", &[])),
            DenialReason::MethodOrPath { .. }
        ));
        assert!(matches!(
            reason(&g, &req("GET", "https://api.example.com/v2", &[])),
            DenialReason::MethodOrPath { .. }
        ));
        assert_eq!(
            reason(
                &g,
                &req("GET", "https://api.example.com/v1/%2e%2e/admin", &[])
            ),
            DenialReason::AmbiguousPath
        );
    }

    #[test]
    fn headers_are_checked() {
        let g = grant(&["https://*"], &["\"https://api.example.com\""]);
        let spoof = req("GET", "https://api.example.com/", &[("host", b"evil.test")]);
        assert!(matches!(
            reason(&g, &spoof),
            DenialReason::HostHeader { .. }
        ));
        let same = req(
            "GET",
            "https://api.example.com/",
            &[("host", b"API.example.com")],
        );
        assert!(check_request(&g, &same).is_ok());
    }

    #[test]
    fn every_resolved_address_must_be_reachable() {
        let g = grant(&["https://*"], &["\"https://api.example.com\""]);
        let ok = check_request(&g, &req("GET", "https://api.example.com/", &[])).unwrap();
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        assert_eq!(vet_addresses(&ok, &[public, public]).unwrap(), vec![public]);
        let mixed = [public, "10.0.0.1".parse().unwrap()];
        assert!(matches!(
            vet_addresses(&ok, &mixed).unwrap_err(),
            DenialReason::ResolvedAddress {
                class: crate::capability::egress::AddressClass::Private,
                ..
            }
        ));
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(vet_addresses(&ok, &[mapped]).is_err());
        let lit = grant(&["http://*"], &["\"http://127.0.0.1:8080\""]);
        let ok = check_request(&lit, &req("GET", "http://2130706433:8080/", &[])).unwrap();
        assert_eq!(ok.dest.label(), "127.0.0.1:8080");
        assert!(vet_addresses(&ok, &["127.0.0.1".parse().unwrap()]).is_ok());
    }
}
