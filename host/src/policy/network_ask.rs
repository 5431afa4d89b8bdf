//! Network approvals: the destinations a call of a network tool will
//! reach, read from its `url` argument, and what approving the call may
//! grant for each.
//!
//! Invariant: an approval grants at most the call's exact destinations
//! (scheme, host, port), each only inside a `network_ask` rule of the
//! policy and a destination the plugin declares, with that rule's methods,
//! paths and private-address access and never more. A destination no
//! approval could make reachable — another scheme, a host that cannot be
//! read, an address class that is always refused or that the rule does not
//! reach, no `network_ask` rule — is refused before anyone is asked.

use serde::Serialize;

use super::{CallFacts, GrantSpec, Policy};
use crate::capability::egress::{
    Host, HostPattern, NetPattern, NetRule, PortPattern, Scheme, classify, parse_host,
};

/// The argument a network tool names its destination in.
pub const URL_ARGUMENT: &str = "url";

/// One destination a call will reach, and how it may reach it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskedDestination {
    /// The exact destination: scheme, host and port.
    pub target: NetPattern,
    /// What lets the call reach it once it runs.
    pub via: DestinationGrant,
}

/// How a call reaches one of its destinations.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DestinationGrant {
    /// The policy's `network` rules already cover it.
    Policy,
    /// Approving the call adds this rule (the destination, narrowed by the
    /// `network_ask` rule that covers it).
    Approval {
        /// The rule the call gets.
        rule: NetRule,
    },
}

/// Why no approval could let a call reach a destination.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkAskError {
    /// The URL cannot be read as the host would check it.
    #[error("its url `{url}` cannot be checked: {why}")]
    BadUrl { url: String, why: String },
    /// Not http or https.
    #[error("its url uses the scheme `{scheme}`; tools reach only http and https")]
    Scheme { scheme: String },
    /// An address no rule can ever reach.
    #[error("{target} is {class}, which is never reachable")]
    NeverReachable { target: String, class: &'static str },
    /// The plugin's manifest does not declare the destination.
    #[error("plugin {plugin} does not declare {target} in its manifest")]
    NotDeclared { plugin: String, target: String },
    /// No `network_ask` rule covers the destination.
    #[error(
        "{target} is not in the policy's `network` or `network_ask` rules for {tool}; to let \
         the user approve it, add `network_ask = [\"{target}\"]` under \
         `[grants.tool.{tool}]` (or grant it in `network` there)"
    )]
    NotAskable { tool: String, target: String },
    /// A non-public address the covering rule does not reach.
    #[error(
        "{target} is {class}, which the rule `{rule}` does not reach; to let the user \
         approve it, name the address in a `network_ask` rule or add it to that rule's \
         `allow_private` under `[grants.tool.{tool}]`"
    )]
    Private {
        tool: String,
        target: String,
        class: &'static str,
        rule: String,
    },
}

/// The destinations named in `input`'s `url` argument, if it has one
/// that is a string: `(scheme, host, port)`.
pub fn call_destinations(input: &serde_json::Value) -> Result<Vec<NetPattern>, NetworkAskError> {
    match input.get(URL_ARGUMENT).and_then(serde_json::Value::as_str) {
        Some(url) => Ok(vec![destination_of(url)?]),
        None => Ok(Vec::new()),
    }
}

/// The exact destination of `url`, read the way the egress check reads a
/// request (scheme, normalised host, port with the scheme's default).
pub fn destination_of(url: &str) -> Result<NetPattern, NetworkAskError> {
    let bad = |why: &str| NetworkAskError::BadUrl {
        url: crate::base::excerpt(url, crate::base::QUOTE_BYTES).into_owned(),
        why: why.to_string(),
    };
    let uri: http::Uri = url.parse().map_err(|_| bad("it is not a URL"))?;
    let scheme_str = uri.scheme_str().ok_or_else(|| bad("it has no scheme"))?;
    let scheme =
        Scheme::parse(&scheme_str.to_ascii_lowercase()).ok_or_else(|| NetworkAskError::Scheme {
            scheme: crate::base::excerpt(scheme_str, 32).into_owned(),
        })?;
    let authority = uri.authority().ok_or_else(|| bad("it has no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("user info (`user@`) is never sent"));
    }
    let host = parse_host(authority.host()).map_err(|e| bad(&e.to_string()))?;
    let port = match authority.port_u16() {
        Some(0) => return Err(bad("port 0")),
        Some(p) => p,
        None => scheme.default_port(),
    };
    let host = match host {
        Host::Name(n) => HostPattern::Exact(n),
        Host::Ip(ip) => {
            let class = classify(ip);
            if class.never_allowed() {
                return Err(NetworkAskError::NeverReachable {
                    target: format!("{}://{}:{port}", scheme.as_str(), Host::Ip(ip)),
                    class: class.describe(),
                });
            }
            HostPattern::Ip(ip)
        }
    };
    Ok(NetPattern {
        scheme,
        host,
        port: PortPattern::Exact(port),
    })
}

impl Policy {
    /// For a call this policy asks about: each destination it will reach
    /// and what lets it, or why no approval could. `declared` is what the
    /// plugin's manifest declares; `spec` what the policy grants the call.
    /// A plugin that declares no network has no destinations.
    pub fn network_ask(
        &self,
        call: &CallFacts<'_>,
        declared: &[NetPattern],
        spec: &GrantSpec,
    ) -> Result<Vec<AskedDestination>, NetworkAskError> {
        if declared.is_empty() {
            return Ok(Vec::new());
        }
        call_destinations(call.input)?
            .into_iter()
            .map(|target| asked(call, declared, spec, target))
            .collect()
    }
}

fn asked(
    call: &CallFacts<'_>,
    declared: &[NetPattern],
    spec: &GrantSpec,
    target: NetPattern,
) -> Result<AskedDestination, NetworkAskError> {
    if !declared.iter().any(|d| d.overlaps(&target)) {
        return Err(NetworkAskError::NotDeclared {
            plugin: call.plugin.to_string(),
            target: target.to_string(),
        });
    }
    let reaches = |rule: &NetRule| match &target.host {
        HostPattern::Ip(ip) => rule.reaches(*ip),
        HostPattern::Any | HostPattern::Exact(_) | HostPattern::Wildcard(_) => true,
    };
    if spec
        .network
        .iter()
        .any(|r| r.target.overlaps(&target) && reaches(r))
    {
        return Ok(AskedDestination {
            target,
            via: DestinationGrant::Policy,
        });
    }
    let Some(rule) = spec.network_ask.iter().find(|r| r.target.overlaps(&target)) else {
        return Err(NetworkAskError::NotAskable {
            tool: call.tool.to_string(),
            target: target.to_string(),
        });
    };
    if !reaches(rule) {
        let class = match &target.host {
            HostPattern::Ip(ip) => classify(*ip).describe(),
            HostPattern::Any | HostPattern::Exact(_) | HostPattern::Wildcard(_) => "private",
        };
        return Err(NetworkAskError::Private {
            tool: call.tool.to_string(),
            target: target.to_string(),
            class,
            rule: rule.to_string(),
        });
    }
    let rule = NetRule {
        target: target.clone(),
        ..rule.clone()
    };
    Ok(AskedDestination {
        target,
        via: DestinationGrant::Approval { rule },
    })
}

/// `spec` with the rules approving `destinations` adds.
pub fn with_approved(mut spec: GrantSpec, destinations: &[AskedDestination]) -> GrantSpec {
    for d in destinations {
        match &d.via {
            DestinationGrant::Policy => {}
            DestinationGrant::Approval { rule } => spec.network.push(rule.clone()),
        }
    }
    spec
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn policy(grants: &str) -> Policy {
        Policy::parse(
            &format!("name = \"p\"\nmode = \"ask\"\n[grants.plugin.web]\n{grants}\n"),
            "p.toml",
        )
        .unwrap()
    }

    fn ask(p: &Policy, url: &str) -> Result<Vec<AskedDestination>, NetworkAskError> {
        let input = json!({ "url": url });
        let call = CallFacts {
            tool: "http_fetch",
            plugin: "web",
            annotations: Default::default(),
            input: &input,
        };
        let declared: Vec<NetPattern> =
            vec!["https://*".parse().unwrap(), "http://*".parse().unwrap()];
        p.network_ask(&call, &declared, &p.grant_for_call(&call))
    }

    #[test]
    fn an_ask_rule_grants_exactly_the_destination() {
        let p = policy("network_ask = [{ url = \"https://*\", methods = [\"GET\"] }]");
        let d = ask(&p, "https://Docs.RS/a?b").unwrap();
        assert_eq!(d[0].target.to_string(), "https://docs.rs:443");
        let DestinationGrant::Approval { rule } = &d[0].via else {
            panic!("{d:?}");
        };
        assert_eq!(rule.target.to_string(), "https://docs.rs:443");
        assert_eq!(rule.methods, Some(vec!["GET".to_string()]));
        let d = ask(
            &policy("network = [\"https://docs.rs\"]"),
            "https://docs.rs/x",
        )
        .unwrap();
        assert_eq!(d[0].via, DestinationGrant::Policy);
    }

    #[test]
    fn destinations_no_approval_can_reach_are_refused_with_the_key_to_add() {
        let none = policy("network = []");
        let e = ask(&none, "http://example.com:8080/")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("add `network_ask = [\"http://example.com:8080\"]`")
                && e.contains("[grants.tool.http_fetch]"),
            "{e}"
        );
        let public = policy("network_ask = [\"http://*\"]");
        let e = ask(&public, "http://0x7f.1:9/").unwrap_err().to_string();
        assert!(e.contains("loopback") && e.contains("allow_private"), "{e}");
        let e = ask(&public, "http://0.0.0.0/").unwrap_err().to_string();
        assert!(e.contains("never reachable"), "{e}");
        let e = ask(&public, "ftp://example.com/").unwrap_err().to_string();
        assert!(e.contains("scheme `ftp`"), "{e}");
        let e = ask(&public, "http://u@example.com/")
            .unwrap_err()
            .to_string();
        assert!(e.contains("user info"), "{e}");
        let named = policy("network_ask = [\"http://127.0.0.1:*\"]");
        let d = ask(&named, "http://127.1:9/").unwrap();
        assert_eq!(d[0].target.to_string(), "http://127.0.0.1:9");
    }
}
