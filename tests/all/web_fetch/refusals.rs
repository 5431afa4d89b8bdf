//! What the policy does not allow never reaches a server: a redirect's next
//! hop to another port or a private address, a loopback server under a rule
//! that names only a host name (without `allow_private`) or any host, and
//! every shipped policy. The
//! host refuses each request itself and its sentence reaches the model.

use std::sync::Arc;

use serde_json::json;
use warden::approval::{ApprovalRequest, ApprovalResponse, Approvals, Approver};
use warden::capability::egress::{AddressClass, DenialReason};
use warden::policy::builtin_policies;
use warden::protocol::ErrorKind;

use super::*;
use crate::egress::server::{Loopback, ok_with, respond};

/// A server whose every answer is a 302 to `location`.
fn redirecting_to(location: String) -> Loopback {
    Loopback::http(move |_, out| respond(out, 302, &[("location", &location)], b""))
}

const PROHIBITED: &str = "network access denied: the destination address is loopback, private \
                          or reserved, which only a policy rule naming it can allow";

#[test]
fn a_redirect_to_a_port_the_policy_does_not_name_is_not_followed() {
    let other = Loopback::http(ok_with("must not be reached"));
    let to = format!("http://127.0.0.1:{}/landing", other.port());
    let first = redirecting_to(to.clone());
    let from = format!("http://127.0.0.1:{}/start", first.port());
    let r = fetch(
        &web_policy(&loopback_rule(first.port()), ""),
        json!({"url": from}),
    );
    let denial = format!(
        "network access to 127.0.0.1:{} denied: no rule allows it",
        other.port()
    );
    assert_eq!(
        err(&r, ErrorKind::PermissionDenied),
        hop_refused(REFUSED, 302, &from, &to, &denial)
    );
    let rep = report(&r);
    assert_eq!(rep.network_denials.len(), 1);
    assert_eq!(rep.network_denials[0].reason, DenialReason::NoRule);
    assert_eq!(rep.network_denials[0].message, denial);
    assert_eq!(
        uses(&r),
        json!([use_of(first.port(), "GET", "/start", 302, 0, 0)])
    );
    assert_eq!(first.requests().len(), 1);
    assert!(other.requests().is_empty(), "the refused hop was sent");
}

#[test]
fn a_redirect_to_a_private_address_is_refused_even_under_any_host() {
    let other = Loopback::http(ok_with("must not be reached"));
    let cases = [
        (
            "http://169.254.169.254/latest/meta-data/".to_string(),
            "169.254.169.254:80".to_string(),
            "169.254.169.254",
            AddressClass::LinkLocal,
        ),
        (
            "http://10.0.0.1/admin".to_string(),
            "10.0.0.1:80".to_string(),
            "10.0.0.1",
            AddressClass::Private,
        ),
        // The rule naming 127.0.0.1 names one port: another stays loopback.
        (
            format!("http://127.0.0.1:{}/x", other.port()),
            format!("127.0.0.1:{}", other.port()),
            "127.0.0.1",
            AddressClass::Loopback,
        ),
    ];
    for (to, destination, host, class) in cases {
        let first = redirecting_to(to.clone());
        let from = format!("http://127.0.0.1:{}/", first.port());
        let policy = web_policy(
            &format!("{}, \"http://*\"", loopback_rule(first.port())),
            "",
        );
        let r = fetch(&policy, json!({"url": from}));
        let denial = format!(
            "network access to {destination} denied: {host} is {}",
            class.describe()
        );
        assert_eq!(
            err(&r, ErrorKind::PermissionDenied),
            hop_refused(PROHIBITED, 302, &from, &to, &denial),
            "{to}"
        );
        let d = &report(&r).network_denials;
        assert_eq!(d.len(), 1, "{to}");
        assert!(
            matches!(&d[0].reason, DenialReason::LiteralAddress { host: h, class: c, .. }
                if h == host && *c == class),
            "{to}: {:?}",
            d[0].reason
        );
        assert_eq!(first.requests().len(), 1, "{to}");
    }
    assert!(other.requests().is_empty(), "the refused hop was sent");
}

#[test]
fn a_loopback_server_is_reached_only_by_a_rule_naming_or_allowing_its_address() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let by_name = web_policy(&format!("\"http://localhost:{port}\""), "");
    let r = fetch(
        &by_name,
        json!({"url": format!("http://localhost:{port}/")}),
    );
    let msg = err(&r, ErrorKind::PermissionDenied);
    let d = &report(&r).network_denials;
    let DenialReason::ResolvedAddress { address, class, .. } = &d[0].reason else {
        panic!("{:?}", d[0].reason);
    };
    assert_eq!(*class, AddressClass::Loopback);
    let denial = format!(
        "network access to localhost:{port} denied: localhost resolves to a loopback address ({address})"
    );
    assert_eq!(msg, format!("{PROHIBITED} [host: {denial}]"));

    let literal = format!("http://127.0.0.1:{port}/");
    let r = fetch(&by_name, json!({"url": literal}));
    assert_eq!(
        err(&r, ErrorKind::PermissionDenied),
        format!("{REFUSED} [host: network access to 127.0.0.1:{port} denied: no rule allows it]")
    );
    let r = fetch(&web_policy("\"http://*\"", ""), json!({"url": literal}));
    assert_eq!(
        r.outcome.model_text(),
        format!(
            "error (permission-denied): {PROHIBITED} [host: network access to 127.0.0.1:{port} \
             denied: 127.0.0.1 is a loopback address]"
        )
    );
    assert!(server.requests().is_empty(), "the server was reached");

    let opened = web_policy(
        &format!(
            "{{ url = \"http://localhost:{port}\", allow_private = [\"127.0.0.0/8\", \"::1\"] }}"
        ),
        "",
    );
    let r = fetch(&opened, json!({"url": format!("http://localhost:{port}/")}));
    assert!(fetched(&r).0.ends_with("\n\nreached"));
    let used = &uses(&r)[0];
    assert_eq!(
        (&used["host"], &used["address"]),
        (&json!("localhost"), &json!("127.0.0.1"))
    );
    assert_eq!(
        server.requests()[0].header("host"),
        [format!("localhost:{port}")]
    );
}

/// Says yes to every ask, so a shipped policy's grant is what stops a call.
struct AllowOnce;

impl Approver for AllowOnce {
    fn approve(&self, _: &ApprovalRequest) -> ApprovalResponse {
        ApprovalResponse::AllowOnce
    }
}

#[test]
fn shipped_policies_reach_nothing_even_when_the_user_approves() {
    let server = Loopback::http(ok_with("must not be reached"));
    let input = json!({"url": format!("http://127.0.0.1:{}/", server.port())});
    let approvals = Approvals::new(Arc::new(AllowOnce));
    let mut outcomes = Vec::new();
    for (name, text) in builtin_policies() {
        let policy = Policy::parse(text, name).unwrap();
        let r = fetch_approved(&policy, input.clone(), Some(&approvals));
        let ran = match &r.outcome {
            // Public destinations only: a loopback address is refused
            // before anyone is asked, since no approval could reach it.
            ToolOutcome::Denied { reason } if reason.starts_with("denied without asking") => {
                assert!(reason.contains("a loopback address"), "{name}: {reason}");
                assert!(reason.contains("allow_private"), "{name}: {reason}");
                "denied unasked"
            }
            ToolOutcome::Denied { .. } => "denied",
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(r.approval, None, "{name}: nobody was asked");
        outcomes.push((name, ran));
    }
    assert_eq!(
        outcomes,
        [
            ("workspace-write", "denied unasked"),
            ("read-only", "denied"),
            ("strict", "denied unasked"),
            ("ci", "denied"),
        ]
    );
    assert!(server.requests().is_empty(), "the server was reached");
}
