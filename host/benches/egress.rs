//! Egress overhead against a loopback server, fresh connection each time
//! on both sides:
//!
//! - `direct_reqwest`: a GET with reqwest, connection pooling off.
//! - `egress_literal`: the host's egress path for a literal-address URL —
//!   name check, address vetting, pinned connect, request, body read.
//! - `egress_resolved`: the same for a name, through an injected resolver
//!   (one lookup per request, as always).
//! - `guest_http_raw`: for reference, the whole tool call: a fresh netprobe
//!   instance sending the request through `wasi:http`.
//!
//! The goal is `egress_literal` ≤ 1.2× `direct_reqwest` (median).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Empty};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use warden::base::{CancelToken, Limits};
use warden::capability::egress::{EgressCall, EgressLimits, NetRule, NetworkGrant, Resolver, send};
use warden::capability::{EgressEnv, Grant};
use warden::home::Home;
use warden::plugin::Catalog;
use warden::runtime::CallRequest;

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";

/// A loopback server answering every request with `ok`, then closing.
fn serve(rt: &tokio::runtime::Runtime) -> u16 {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    rt.spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = s.write_all(RESPONSE).await;
                let _ = s.shutdown().await;
            });
        }
    });
    port
}

struct Loop;

impl Resolver for Loop {
    fn resolve(&self, _host: &str, _port: u16) -> std::io::Result<Vec<IpAddr>> {
        Ok(vec!["127.0.0.1".parse().unwrap()])
    }
}

fn grant(port: u16) -> NetworkGrant {
    let rules: Vec<NetRule> = [
        format!("http://127.0.0.1:{port}"),
        format!("http://bench.test:{port}"),
    ]
    .iter()
    .map(|r| {
        let mut rule = NetRule::to(r.parse().unwrap());
        rule.private =
            warden::capability::egress::PrivateAccess::Only(vec!["127.0.0.1/32".parse().unwrap()]);
        rule
    })
    .collect();
    NetworkGrant {
        rules,
        declared: vec!["http://*".parse().unwrap()],
        credentials: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let port = serve(&rt);
    let url = format!("http://127.0.0.1:{port}/");

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .no_proxy()
        .build()
        .unwrap();
    c.bench_function("egress/direct_reqwest", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = client.get(&url).send().await.unwrap();
                black_box(r.bytes().await.unwrap())
            })
        })
    });

    let limits = EgressLimits {
        request_bytes: 1 << 20,
        response_bytes: 1 << 20,
        requests: u64::MAX,
    };
    let far = Instant::now() + Duration::from_secs(24 * 3600);
    let env = EgressEnv::system().with_resolver(Loop);
    let call = Arc::new(EgressCall::new(
        &grant(port),
        env.clone(),
        limits,
        far,
        CancelToken::new(),
    ));
    for (name, authority) in [
        ("egress/egress_literal", format!("127.0.0.1:{port}")),
        ("egress/egress_resolved", format!("bench.test:{port}")),
    ] {
        let uri = format!("http://{authority}/");
        c.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let body = Empty::new()
                        .map_err(|e: std::convert::Infallible| match e {})
                        .boxed_unsync();
                    let req = http::Request::builder()
                        .uri(&uri)
                        .header(http::header::HOST, &authority)
                        .body(body)
                        .unwrap();
                    let (resp, io) = send(call.clone(), req, None).await.unwrap();
                    tokio::spawn(Box::into_pin(io));
                    black_box(resp.into_body().collect().await.unwrap().to_bytes())
                })
            })
        });
    }

    let home = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(&Home::at(home.path().to_path_buf())).unwrap();
    let probe = catalog
        .runtime()
        .load(
            &std::fs::read(warden::test_plugins::NETPROBE).unwrap(),
            None,
        )
        .unwrap();
    let g = Grant {
        filesystem: None,
        extra_dirs: Vec::new(),
        network: Some(grant(port)),
        process: None,
        interaction: None,
    };
    let call_limits = Limits {
        http_requests: u64::MAX,
        ..Limits::default()
    };
    let input =
        format!(r#"{{"method":"GET","scheme":"http","authority":"127.0.0.1:{port}","path":"/"}}"#);
    c.bench_function("egress/guest_http_raw", |b| {
        b.iter(|| {
            let r = probe.call_with(
                CallRequest {
                    call_id: "b".into(),
                    tool: "http_raw",
                    input: &input,
                    grant: &g,
                    limits: &call_limits,
                    cancel: CancelToken::new(),
                    progress: None,
                },
                &env,
            );
            black_box(r.outcome)
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(200).measurement_time(Duration::from_secs(8));
    targets = bench
}
criterion_main!(benches);
