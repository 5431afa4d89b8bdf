//! Which addresses a request may reach: nothing without a network grant,
//! no loopback, private or link-local address under a rule that does not
//! name it — whatever the spelling — and exactly what a rule names.

use warden::capability::egress::{AddressClass, DenialReason};
use warden::policy::builtin_policies;
use warden::protocol::ErrorKind;

use super::server::{Loopback, ok_with};
use super::*;

#[test]
fn shipped_policies_link_no_http_and_send_nothing() {
    let server = Loopback::http(ok_with("reached"));
    let sb = Sandbox::new();
    for (name, text) in builtin_policies() {
        let p = Policy::parse(text, name).unwrap();
        let grant = grant_under(&p, &sb.ws(), "http_raw");
        assert!(grant.network.is_none(), "{name} grants network");
        let input = get("http", &format!("127.0.0.1:{}", server.port()), "/");
        let report = probe_with(
            "http_raw",
            input,
            &grant,
            &short_limits(),
            &EgressEnv::system(),
        );
        let msg = outcome_err(&report.outcome, ErrorKind::PermissionDenied);
        assert!(msg.contains("wasi:http/"), "{name}: {msg}");
        assert!(msg.contains("which its grant does not include"), "{msg}");
    }
    let none = probe_with(
        "http_raw",
        get("http", &format!("127.0.0.1:{}", server.port()), "/"),
        &Grant::none(),
        &short_limits(),
        &EgressEnv::system(),
    );
    assert!(outcome_err(&none.outcome, ErrorKind::PermissionDenied).contains("wasi:http/"));
    assert!(server.requests().is_empty(), "the server was reached");
}

#[test]
fn every_spelling_of_a_private_address_is_refused() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let public_only = net_policy("\"http://*\", \"https://*\"");
    let cases = [
        ("127.0.0.1", "127.0.0.1", AddressClass::Loopback),
        ("2130706433", "127.0.0.1", AddressClass::Loopback),
        ("0177.0.0.1", "127.0.0.1", AddressClass::Loopback),
        ("0x7f.1", "127.0.0.1", AddressClass::Loopback),
        ("0x7f000001", "127.0.0.1", AddressClass::Loopback),
        ("127.1", "127.0.0.1", AddressClass::Loopback),
        ("[::1]", "[::1]", AddressClass::Loopback),
        ("[::ffff:127.0.0.1]", "127.0.0.1", AddressClass::Loopback),
        ("10.0.0.1", "10.0.0.1", AddressClass::Private),
        (
            "169.254.169.254",
            "169.254.169.254",
            AddressClass::LinkLocal,
        ),
        ("100.64.0.1", "100.64.0.1", AddressClass::SharedNat),
        ("[fd00::1]", "[fd00::1]", AddressClass::Private),
        ("[::127.0.0.1]", "[::7f00:1]", AddressClass::Reserved),
    ];
    for (spelling, normal, class) in cases {
        let (report, out) = raw(
            &public_only,
            get("http", &format!("{spelling}:{port}"), "/"),
        );
        assert_eq!(out["failed"], "response", "{spelling}: {out}");
        assert_eq!(out["error"], "DestinationIpProhibited", "{spelling}: {out}");
        let denial = &report.network_denials[0];
        assert!(
            matches!(denial.reason, DenialReason::LiteralAddress { class: c, .. } if c == class),
            "{spelling}: {denial:?}"
        );
        let expected = format!(
            "network access to {normal}:{port} denied: {normal} is {}",
            class.describe()
        );
        assert!(
            denial.message.starts_with(&expected),
            "{spelling}: {}",
            denial.message
        );
        assert!(
            model_text(&report).contains(&expected),
            "{}",
            model_text(&report)
        );
        assert!(report.network.is_empty());
    }
    let (report, out) = raw(
        &public_only,
        get("http", &format!("[fe80::1%25lo]:{port}"), "/"),
    );
    assert!(out["failed"].is_string(), "{out}");
    assert!(report.network.is_empty());
    assert!(
        server.requests().is_empty(),
        "the server was reached: {:?}",
        server.requests()
    );
}

#[test]
fn a_rule_naming_the_address_reaches_it_in_any_spelling() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let p = net_policy(&format!("\"http://127.0.0.1:{port}\""));
    for spelling in ["127.0.0.1", "2130706433", "0x7f.0.0.1"] {
        let (report, out) = raw(&p, get("http", &format!("{spelling}:{port}"), "/x?y=1"));
        assert_eq!(out["status"], 200, "{spelling}: {out}");
        assert_eq!(out["body"], "reached");
        let used = &report.network[0];
        assert_eq!(used.address, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(
            (used.host.as_str(), used.port, used.status),
            ("127.0.0.1", port, Some(200))
        );
        assert_eq!(
            (used.method.as_str(), used.path.as_str(), used.bytes_in),
            ("GET", "/x", 7)
        );
    }
    assert_eq!(server.requests().len(), 3);
    let (_, other_port) = raw(
        &p,
        get("http", &format!("127.0.0.1:{}", port.wrapping_add(1)), "/"),
    );
    assert_eq!(other_port["error"], "HttpRequestDenied", "{other_port}");
    let (report, other_addr) = raw(&p, get("http", &format!("127.0.0.2:{port}"), "/"));
    assert_eq!(other_addr["error"], "HttpRequestDenied", "{other_addr}");
    assert_eq!(report.network_denials[0].reason, DenialReason::NoRule);
    assert!(
        report.network_denials[0]
            .message
            .ends_with("denied: no rule allows it")
    );
}

#[test]
fn allow_private_lists_the_networks_it_opens() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let opens = net_policy("{ url = \"http://*\", allow_private = [\"127.0.0.0/8\"] }");
    let (_, out) = raw(&opens, get("http", &format!("127.0.0.1:{port}"), "/"));
    assert_eq!(out["status"], 200, "{out}");
    let other = net_policy("{ url = \"http://*\", allow_private = [\"10.0.0.0/8\"] }");
    let (_, out) = raw(&other, get("http", &format!("127.0.0.1:{port}"), "/"));
    assert_eq!(out["error"], "DestinationIpProhibited", "{out}");
    let all = net_policy("{ url = \"http://*\", allow_private = true }");
    let (_, out) = raw(&all, get("http", &format!("0.0.0.0:{port}"), "/"));
    assert_eq!(
        out["error"], "DestinationIpProhibited",
        "unspecified is never allowed: {out}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn ipv6_loopback_is_reached_only_when_named() {
    let Ok(listener) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback here; skipping");
        return;
    };
    let server = Loopback::on(listener, None, std::sync::Arc::new(ok_with("six")));
    let port = server.port();
    let (_, out) = raw(
        &net_policy("\"http://*\""),
        get("http", &format!("[::1]:{port}"), "/"),
    );
    assert_eq!(out["error"], "DestinationIpProhibited", "{out}");
    assert!(server.requests().is_empty());
    let (_, out) = raw(
        &net_policy(&format!("\"http://[::1]:{port}\"")),
        get("http", &format!("[::1]:{port}"), "/"),
    );
    assert_eq!(out["body"], "six", "{out}");
}
