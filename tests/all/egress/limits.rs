//! Byte caps and time: a response past its cap is cut, a request body past
//! its cap is refused, and a slow server ends the call at its deadline.

use std::time::{Duration, Instant};

use serde_json::json;
use warden::capability::egress::DenialReason;

use super::server::{Loopback, ok_with, respond};
use super::*;

fn call(p: &Policy, input: serde_json::Value, limits: &Limits) -> CallReport {
    let sb = Sandbox::new();
    let grant = grant_under(p, &sb.ws(), "http_raw");
    probe_with("http_raw", input, &grant, limits, &EgressEnv::system())
}

#[test]
fn the_response_cap_cuts_the_body() {
    let big = Box::leak(vec![b'a'; 50_000].into_boxed_slice());
    let server = Loopback::http(move |_, out| respond(out, 200, &[], big));
    let p = net_policy(&format!("\"http://127.0.0.1:{}\"", server.port()));
    let limits = Limits {
        http_response_bytes: 1000,
        ..short_limits()
    };
    let report = call(
        &p,
        get("http", &format!("127.0.0.1:{}", server.port()), "/"),
        &limits,
    );
    let out = probe_json(&report);
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(out["body_len"], 1000, "{out}");
    assert_eq!(
        out["read_error"], "HttpResponseBodySize(Some(1000))",
        "{out}"
    );
    assert_eq!(report.network[0].bytes_in, 1000);
    assert!(
        report.network[0]
            .error
            .as_deref()
            .unwrap()
            .contains("1000-byte cap")
    );
}

#[test]
fn the_request_cap_stops_the_body() {
    let server = Loopback::http(ok_with("ok"));
    let p = net_policy(&format!("\"http://127.0.0.1:{}\"", server.port()));
    let authority = format!("127.0.0.1:{}", server.port());
    let limits = Limits {
        http_request_bytes: 1000,
        ..short_limits()
    };
    let mut declared = get("http", &authority, "/");
    declared["method"] = json!("POST");
    declared["headers"] = json!([["content-length", "5000"]]);
    declared["body_bytes"] = json!(5000);
    let report = call(&p, declared, &limits);
    let out = probe_json(&report);
    assert_eq!(out["error"], "HttpRequestBodySize(Some(1000))", "{out}");
    assert!(matches!(
        report.network_denials[0].reason,
        DenialReason::RequestTooLarge {
            size: 5000,
            limit: 1000
        }
    ));
    let mut streamed = get("http", &authority, "/");
    streamed["method"] = json!("POST");
    streamed["body_bytes"] = json!(50_000);
    let report = call(&p, streamed, &limits);
    let out = probe_json(&report);
    assert!(
        out["failed"].is_string() || out["write_error"].is_string(),
        "{out}"
    );
    for seen in server.requests() {
        assert!(
            seen.body.len() <= 1000,
            "the server got {} body bytes",
            seen.body.len()
        );
    }
    assert!(report.network[0].bytes_out <= 1000);
}

#[test]
fn requests_per_call_are_capped() {
    let server = Loopback::http(ok_with("ok"));
    let p = net_policy(&format!("\"http://127.0.0.1:{}\"", server.port()));
    let limits = Limits {
        http_requests: 1,
        ..short_limits()
    };
    let mut input = get("http", &format!("127.0.0.1:{}", server.port()), "/");
    input["repeat"] = json!(2);
    let report = call(&p, input.clone(), &limits);
    let out = probe_json(&report);
    assert_eq!(out["all"][0]["status"], 200, "{out}");
    assert_eq!(out["all"][1]["error"], "HttpRequestDenied", "{out}");
    assert!(model_text(&report).contains("the call already made its 1 requests"));
    let again = call(&p, input, &limits);
    assert_eq!(
        probe_json(&again)["all"][0]["status"],
        200,
        "each call counts its own"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_slow_server_ends_at_the_deadline() {
    let _x = exclusive();
    // Compile the fixture first: run alone, the first call would otherwise
    // time the compile along with the deadline.
    let _ = netprobe();
    let stalls = Loopback::http(|_, out| {
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nfirst bytes ");
        let _ = out.flush();
        std::thread::sleep(Duration::from_secs(8));
    });
    let silent = Loopback::http(|_, _| std::thread::sleep(Duration::from_secs(8)));
    for (server, what) in [(&silent, "no response"), (&stalls, "a stalled body")] {
        let p = net_policy(&format!("\"http://127.0.0.1:{}\"", server.port()));
        let limits = Limits {
            deadline: Duration::from_millis(800),
            ..Limits::default()
        };
        let mut input = get("http", &format!("127.0.0.1:{}", server.port()), "/");
        input["first_byte_timeout_ms"] = json!(600_000);
        input["between_bytes_timeout_ms"] = json!(600_000);
        let started = Instant::now();
        let report = call(&p, input, &limits);
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(1800),
            "{what}: the call took {took:?}"
        );
        assert!(
            took >= Duration::from_millis(700),
            "{what}: ended early, {took:?}"
        );
        let text = model_text(&report);
        assert!(
            text.contains("deadline") || text.contains("Timeout"),
            "{what}: {text}"
        );
    }
}

#[test]
fn workers_share_the_calls_request_count() {
    let server = Loopback::http(ok_with("ok"));
    let p = net_policy(&format!("\"http://127.0.0.1:{}\"", server.port()));
    let limits = Limits {
        http_requests: 3,
        ..short_limits()
    };
    let mut input = get("http", &format!("127.0.0.1:{}", server.port()), "/");
    input["repeat"] = json!(2);
    input["workers"] = json!(2);
    let report = call(&p, input, &limits);
    let out = probe_json(&report);
    assert_eq!(out["workers"].as_array().unwrap().len(), 2, "{out}");
    assert_eq!(report.workers, 2);
    // Four requests from two workers, three allowed for the call: the
    // count is the call's, not each worker's.
    assert_eq!(report.network.len(), 3, "{:?}", report.network);
    assert_eq!(
        report.network_denials.len(),
        1,
        "{:?}",
        report.network_denials
    );
    assert!(matches!(
        report.network_denials[0].reason,
        DenialReason::TooManyRequests { limit: 3 }
    ));
}
