//! A call's network grant: the policy's rules intersected with what the
//! plugin declared.
//!
//! Invariant: a request is allowed only if it matches a policy rule *and*
//! a declared destination, so the grant is never more than either; rules
//! and declarations with nothing in common are dropped (and the dropped
//! declarations reported as cuts). A credential rides along only if its
//! audience is itself inside the grant.

use super::credential::CredentialHandle;
use super::pattern::NetPattern;
use super::rule::NetRule;
use crate::capability::GrantCut;

/// The network part of a [`crate::capability::Grant`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetworkGrant {
    /// The policy's rules that overlap a declared destination.
    pub rules: Vec<NetRule>,
    /// What the plugin declared that some rule overlaps.
    pub declared: Vec<NetPattern>,
    /// Credentials the host injects for this call (handles, never values).
    #[serde(default)]
    pub credentials: Vec<CredentialHandle>,
}

impl NetworkGrant {
    /// Intersect the plugin's `declared` destinations with the policy's
    /// `rules` and `credentials`. `None` when nothing is left, in which case
    /// `wasi:http` is not linked at all.
    pub fn intersect(
        declared: &[NetPattern],
        rules: &[NetRule],
        credentials: &[CredentialHandle],
    ) -> (Option<NetworkGrant>, Vec<GrantCut>) {
        let mut cuts = Vec::new();
        let kept_rules: Vec<NetRule> = rules
            .iter()
            .filter(|r| declared.iter().any(|d| d.overlaps(&r.target)))
            .cloned()
            .collect();
        let mut kept_declared = Vec::new();
        for d in declared {
            if kept_rules.iter().any(|r| r.target.overlaps(d)) {
                kept_declared.push(d.clone());
            } else {
                cuts.push(GrantCut {
                    declared: format!("network: {d}"),
                    granted: if rules.is_empty() {
                        "no network (the policy grants none)".into()
                    } else {
                        "not granted (no network rule of the policy covers it)".into()
                    },
                });
            }
        }
        if kept_rules.is_empty() {
            return (None, cuts);
        }
        let mut kept_credentials = Vec::new();
        for c in credentials {
            let a = &c.audience;
            let inside = kept_rules.iter().any(|r| r.target.overlaps(a))
                && kept_declared.iter().any(|d| d.overlaps(a));
            if inside {
                kept_credentials.push(c.clone());
            } else {
                cuts.push(GrantCut {
                    declared: format!("credential: {} for {}", c.name, a),
                    granted: "not injected (its audience is outside the network grant)".into(),
                });
            }
        }
        let grant = NetworkGrant {
            rules: kept_rules,
            declared: kept_declared,
            credentials: kept_credentials,
        };
        (Some(grant), cuts)
    }

    /// One line for humans: the rules, shortened.
    pub fn describe(&self) -> String {
        let mut rules: Vec<String> = self.rules.iter().map(|r| r.target.to_string()).collect();
        if rules.len() > 3 {
            let more = rules.len() - 3;
            rules.truncate(3);
            rules.push(format!("+{more} more"));
        }
        let mut s = format!("network {}", rules.join(", "));
        if !self.credentials.is_empty() {
            let names: Vec<&str> = self.credentials.iter().map(|c| c.name.as_str()).collect();
            s.push_str(&format!(" (credentials: {})", names.join(", ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pats(v: &[&str]) -> Vec<NetPattern> {
        v.iter().map(|s| s.parse().unwrap()).collect()
    }

    fn rules(v: &[&str]) -> Vec<NetRule> {
        pats(v).into_iter().map(NetRule::to).collect()
    }

    #[test]
    fn grant_is_declared_and_policy_together() {
        let (g, cuts) = NetworkGrant::intersect(
            &pats(&["https://*", "http://*.example.com"]),
            &rules(&[
                "https://api.example.com",
                "http://10.0.0.1:8080",
                "http://x.example.com",
            ]),
            &[],
        );
        let g = g.unwrap();
        assert_eq!(
            g.rules,
            rules(&["https://api.example.com", "http://x.example.com"])
        );
        assert_eq!(g.declared.len(), 2);
        assert!(cuts.is_empty());
    }

    #[test]
    fn nothing_in_common_is_no_grant() {
        let (g, cuts) = NetworkGrant::intersect(&pats(&["https://*"]), &[], &[]);
        assert!(g.is_none());
        assert_eq!(cuts[0].declared, "network: https://*");
        assert!(cuts[0].granted.contains("grants none"));
        let (g, cuts) = NetworkGrant::intersect(
            &pats(&["https://api.example.com"]),
            &rules(&["http://*"]),
            &[],
        );
        assert!(g.is_none());
        assert!(cuts[0].granted.contains("no network rule"));
        let (g, _) = NetworkGrant::intersect(&[], &rules(&["https://*"]), &[]);
        assert!(g.is_none());
    }

    #[test]
    fn a_credential_rides_only_inside_the_grant() {
        let handle = |name: &str, audience: &str| -> CredentialHandle {
            toml::from_str(&format!(
                "name = \"{name}\"\naudience = \"{audience}\"\nheader = \"x-key\"\nenv = \"K\"\n"
            ))
            .unwrap()
        };
        let (g, cuts) = NetworkGrant::intersect(
            &pats(&["https://*"]),
            &rules(&["https://api.example.com"]),
            &[
                handle("inside", "https://api.example.com"),
                handle("outside", "https://other.example.com"),
            ],
        );
        let g = g.unwrap();
        let names: Vec<&str> = g.credentials.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["inside"]);
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert!(
            cuts[0]
                .declared
                .starts_with("credential: outside for https://other.example.com"),
            "{cuts:?}"
        );
        assert!(cuts[0].granted.contains("not injected"), "{cuts:?}");
    }
}
