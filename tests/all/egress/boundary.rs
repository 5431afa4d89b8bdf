//! The request as the guest built it: injected headers, spoofed Host,
//! user info, other schemes and redirects stop at the host boundary.

use serde_json::json;
use warden::capability::egress::DenialReason;

use super::server::{Loopback, ok_with, respond};
use super::*;
use warden::policy::grant_from_policy;

fn allow_port(port: u16) -> Policy {
    net_policy(&format!("\"http://127.0.0.1:{port}\""))
}

#[test]
fn header_injection_and_host_spoofing_never_reach_the_server() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let p = allow_port(port);
    let authority = format!("127.0.0.1:{port}");
    let headers = [
        json!([["x-a", "1\r\nInjected: yes"]]),
        json!([["x-a", "1\nInjected: yes"]]),
        json!([["x-a", "1\u{0}"]]),
        json!([["x-a\r\ninjected", "1"]]),
        json!([["host", "evil.test"]]),
        json!([["Host", &authority]]),
        json!([["transfer-encoding", "chunked"]]),
        json!([["connection", "upgrade"]]),
        json!([["proxy-authorization", "Basic eA=="]]),
        json!([["te", "trailers"]]),
    ];
    for h in headers {
        let mut input = get("http", &authority, "/");
        input["headers"] = h.clone();
        let (report, out) = raw(&p, input);
        assert_eq!(out["failed"], "header", "{h}: {out}");
        assert!(report.network.is_empty());
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn user_info_and_other_schemes_are_refused() {
    let server = Loopback::http(ok_with("reached"));
    let port = server.port();
    let p = allow_port(port);
    let (report, out) = raw(&p, get("http", &format!("user:pw@127.0.0.1:{port}"), "/"));
    assert!(out["failed"].is_string(), "{out}");
    if out["failed"] == "response" {
        assert_eq!(out["error"], "HttpRequestDenied");
        assert_eq!(report.network_denials[0].reason, DenialReason::Userinfo);
        assert!(model_text(&report).contains("URLs with user info are not allowed"));
    }
    let (_, out) = raw(&p, get("ftp", &format!("127.0.0.1:{port}"), "/"));
    assert!(out["failed"].is_string(), "{out}");
    let (_, out) = raw(
        &p,
        get("http", &format!("127.0.0.1:{port}"), "http://evil.test/"),
    );
    assert_eq!(out["failed"], "path", "an absolute URI as the path: {out}");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_redirect_is_handed_to_the_guest_and_never_followed() {
    let denied = Loopback::http(ok_with("followed"));
    let target = format!("http://127.0.0.1:{}/secret", denied.port());
    let allowed =
        Loopback::http(move |_, out| respond(out, 302, &[("location", &target)], b"moved"));
    let p = allow_port(allowed.port());
    let (report, out) = raw(
        &p,
        get("http", &format!("127.0.0.1:{}", allowed.port()), "/"),
    );
    assert_eq!(out["status"], 302, "{out}");
    let location = out["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h[0] == "location")
        .unwrap()[1]
        .clone();
    assert_eq!(
        location,
        format!("http://127.0.0.1:{}/secret", denied.port())
    );
    assert_eq!(report.network.len(), 1);
    assert_eq!(allowed.requests().len(), 1);
    let (report, out) = raw(
        &p,
        get("http", &format!("127.0.0.1:{}", denied.port()), "/secret"),
    );
    assert_eq!(
        out["error"], "HttpRequestDenied",
        "following it is a new request, checked anew: {out}"
    );
    assert_eq!(report.network_denials[0].reason, DenialReason::NoRule);
    assert!(denied.requests().is_empty(), "{:?}", denied.requests());
}

#[test]
fn methods_and_paths_narrow_a_rule() {
    let server = Loopback::http(ok_with("ok"));
    let port = server.port();
    let p = net_policy(&format!(
        "{{ url = \"http://127.0.0.1:{port}\", methods = [\"GET\"], paths = [\"/v1/**\"] }}"
    ));
    let authority = format!("127.0.0.1:{port}");
    let (_, out) = raw(&p, get("http", &authority, "/v1/items?page=2"));
    assert_eq!(out["status"], 200, "{out}");
    let mut post = get("http", &authority, "/v1/items");
    post["method"] = json!("POST");
    let (report, out) = raw(&p, post);
    assert_eq!(out["error"], "HttpRequestDenied", "{out}");
    assert!(
        model_text(&report).contains("no rule allows POST /v1/items"),
        "{}",
        model_text(&report)
    );
    for path in ["/admin", "/v1/../admin", "/v1/%2e%2e/admin", "/v1%2fadmin"] {
        let (_, out) = raw(&p, get("http", &authority, path));
        assert_eq!(out["error"], "HttpRequestDenied", "{path}: {out}");
    }
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn the_plugin_must_declare_what_it_reaches() {
    // netprobe declares http://* and https://*, nothing else: a policy rule
    // for another scheme gives it nothing, and the cut says so.
    let p = policy("name = \"t\"\nmode = \"auto\"\n[grants.plugin.netprobe]\nnetwork = []\n");
    let sb = Sandbox::new();
    let (grant, cuts) = grant_from_policy(
        &netprobe().meta.manifest.capabilities,
        &sb.ws(),
        &p.grant_for("netprobe", "http_raw"),
    );
    assert!(grant.network.is_none());
    let declared: Vec<&str> = cuts.iter().map(|c| c.declared.as_str()).collect();
    assert_eq!(declared, ["network: http://*", "network: https://*"]);
}
