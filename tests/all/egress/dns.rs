//! Names: resolved once by the host, every answer vetted, and the
//! connection pinned to a vetted address (an injected resolver stands in
//! for DNS; nothing here touches a real resolver).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use warden::capability::egress::{AddressClass, DenialReason, Resolver};

use super::server::{Loopback, ok_with};
use super::*;

/// Answers from a script: each name has a list of answers, one per lookup
/// (the last repeats). Counts lookups.
#[derive(Clone, Default)]
struct Scripted {
    answers: Arc<Mutex<HashMap<String, Vec<Vec<IpAddr>>>>>,
    lookups: Arc<AtomicUsize>,
}

impl Scripted {
    fn with(self, name: &str, answers: &[&[&str]]) -> Scripted {
        let parsed = answers
            .iter()
            .map(|a| a.iter().map(|ip| ip.parse().unwrap()).collect())
            .collect();
        self.answers
            .lock()
            .unwrap()
            .insert(name.to_string(), parsed);
        self
    }

    fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

impl Resolver for Scripted {
    fn resolve(&self, host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let map = self.answers.lock().unwrap();
        let answers = map
            .get(host)
            .ok_or_else(|| std::io::Error::other("no such name"))?;
        Ok(answers[n.min(answers.len() - 1)].clone())
    }
}

fn call(
    p: &Policy,
    resolver: &Scripted,
    input: serde_json::Value,
) -> (CallReport, serde_json::Value) {
    let sb = Sandbox::new();
    let grant = grant_under(p, &sb.ws(), "http_raw");
    let env = EgressEnv::system().with_resolver(resolver.clone());
    let report = probe_with("http_raw", input, &grant, &short_limits(), &env);
    let out = probe_json(&report);
    (report, out)
}

#[test]
fn a_name_resolving_to_a_private_address_is_refused() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let r = Scripted::default()
        .with("internal.test", &[&["10.0.0.1"]])
        .with("mapped.test", &[&["::ffff:127.0.0.1"]])
        .with("metadata.test", &[&["169.254.169.254"]])
        .with("mixed.test", &[&["127.0.0.1", "10.0.0.1"]]);
    let p = net_policy(&format!(
        "\"http://*:{port}\", {{ url = \"http://mixed.test:{port}\", allow_private = [\"127.0.0.1\"] }}"
    ));
    let cases = [
        ("internal.test", "10.0.0.1", AddressClass::Private),
        ("mapped.test", "127.0.0.1", AddressClass::Loopback),
        ("metadata.test", "169.254.169.254", AddressClass::LinkLocal),
        ("mixed.test", "10.0.0.1", AddressClass::Private),
    ];
    for (name, address, class) in cases {
        let (report, out) = call(&p, &r, get("http", &format!("{name}:{port}"), "/"));
        assert_eq!(out["error"], "DestinationIpProhibited", "{name}: {out}");
        let d = &report.network_denials[0];
        assert!(
            matches!(&d.reason, DenialReason::ResolvedAddress { address: a, class: c, .. }
                if a.to_string() == address && *c == class),
            "{name}: {d:?}"
        );
        assert_eq!(
            d.message,
            format!(
                "network access to {name}:{port} denied: {name} resolves to {} ({address})",
                class.describe()
            )
        );
        assert!(model_text(&report).contains(&d.message));
    }
    assert_eq!(r.lookups(), 4);
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn the_connection_goes_to_the_one_vetted_answer() {
    let first = Loopback::http(ok_with("first"));
    let port = first.port();
    // A second server on the same port at another loopback address: where a
    // second lookup (DNS rebinding) would send the request.
    let Ok(listener) = std::net::TcpListener::bind(("127.0.0.2", port)) else {
        eprintln!("cannot bind 127.0.0.2:{port}; skipping");
        return;
    };
    let second = Loopback::on(listener, None, Arc::new(ok_with("second")));
    let r = Scripted::default().with("rebind.test", &[&["127.0.0.1"], &["127.0.0.2"]]);
    let p = net_policy(&format!(
        "{{ url = \"http://rebind.test:{port}\", allow_private = [\"127.0.0.0/8\"] }}"
    ));
    let (report, out) = call(&p, &r, get("http", &format!("rebind.test:{port}"), "/"));
    assert_eq!(out["body"], "first", "{out}");
    assert_eq!(r.lookups(), 1, "one lookup per request");
    assert_eq!(
        report.network[0].address,
        Some("127.0.0.1".parse().unwrap())
    );
    assert_eq!(report.network[0].host, "rebind.test");
    assert_eq!(first.requests().len(), 1);
    assert_eq!(
        first.requests()[0].header("host"),
        [format!("rebind.test:{port}")]
    );
    assert!(second.requests().is_empty(), "the second answer was used");
}

#[test]
fn a_name_that_does_not_resolve_is_an_error_not_a_guess() {
    let r = Scripted::default();
    let p = net_policy("\"http://*\"");
    let (report, out) = call(&p, &r, get("http", "nowhere.test", "/"));
    assert!(
        out["error"].as_str().unwrap().starts_with("DnsError"),
        "{out}"
    );
    assert!(report.network_denials.is_empty());
}
