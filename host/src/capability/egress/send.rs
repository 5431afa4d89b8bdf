//! One outgoing request, from the guest's `handle` to the response:
//! check → resolve once → vet every address → inject the credential →
//! connect to a vetted address → send → hand back a capped body.
//!
//! Invariants: nothing touches the network before the destination check
//! and the address vetting pass; the connection goes to a vetted address;
//! the request is sent in origin form with the URL's own Host; the host
//! follows no redirect (the guest gets the 3xx); every wait ends at the
//! call's deadline or cancellation, whichever comes first.

use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::{Duration, Instant};

use http::HeaderValue;
use http_body_util::BodyExt;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody};

use super::address::Host;
use super::body::{RequestBody, ResponseBody, StreamRedactor};
use super::call::EgressCall;
use super::check::{check_request, vet_addresses};
use super::connect::connect;
use super::credential::Redactor;
use super::pattern::Scheme;
use super::record::{Counters, DenialReason, MAX_RECORDED_TEXT, NetworkUse, UseId};
use crate::base::CancelToken;
use crate::base::keep_at_most;

type IoFuture = Box<dyn Future<Output = Result<(), HttpError>> + Send>;

/// Check and send `request` for `call`, as a guest's `handle` does: the
/// response comes back with a capped body, and the returned future drives
/// the connection until the body is read.
pub async fn send(
    call: Arc<EgressCall>,
    request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
) -> Result<(http::Response<WasiBody>, IoFuture), HttpError> {
    let (mut parts, body) = request.into_parts();
    let method = parts.method.as_str().to_string();
    let allowed = check_request(&call.grant, &parts)
        .map_err(|(dest, reason)| call.deny(dest, &method, reason))?;
    let dest = &allowed.dest;
    let deny = |reason: DenialReason| call.deny(dest.label(), &method, reason);

    let made = call.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if made > call.limits.requests {
        return Err(deny(DenialReason::TooManyRequests {
            limit: call.limits.requests,
        }));
    }
    let declared_len = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(size) = declared_len.filter(|n| *n > call.limits.request_bytes) {
        return Err(deny(DenialReason::RequestTooLarge {
            size,
            limit: call.limits.request_bytes,
        }));
    }
    let credential = call.credentials.iter().find(|c| {
        c.handle
            .audience
            .matches(dest.scheme, &dest.host, dest.port)
    });
    let injected = match credential {
        None => None,
        Some(c) => match &c.value {
            Ok(v) => Some((c, v)),
            Err(why) => {
                let name = c.handle.name.clone();
                return Err(deny(DenialReason::CredentialUnavailable {
                    name,
                    why: why.to_string(),
                }));
            }
        },
    };

    let addresses = match &dest.host {
        Host::Ip(ip) => vec![*ip],
        Host::Name(name) => resolve(&call, name, dest.port).await?,
    };
    let vetted = vet_addresses(&allowed, &addresses).map_err(deny)?;

    if let Some((c, value)) = injected {
        let name = http::HeaderName::from_bytes(c.handle.header.as_bytes())
            .map_err(|_| HttpError::HttpRequestDenied)?;
        let mut v = HeaderValue::from_str(&format!("{}{}", c.handle.prefix, value.expose()))
            .map_err(|_| HttpError::HttpRequestDenied)?;
        v.set_sensitive(true);
        parts.headers.remove(&name);
        parts.headers.insert(name, v);
    }

    let counters = Counters::default();
    let id = call.log().start(
        NetworkUse {
            scheme: dest.scheme,
            host: keep_at_most(dest.host.to_string(), MAX_RECORDED_TEXT),
            port: dest.port,
            address: None,
            method: keep_at_most(method.clone(), MAX_RECORDED_TEXT),
            path: keep_at_most(dest.path.clone(), MAX_RECORDED_TEXT),
            status: None,
            bytes_out: 0,
            bytes_in: 0,
            credential: injected.map(|(c, _)| c.handle.name.clone()),
            error: None,
        },
        counters.clone(),
    );
    let fail = |e: HttpError| {
        call.log().update(id, |u| u.error = Some(e.to_string()));
        e
    };

    let opts = options.unwrap_or_default();
    let connect_until = earliest(call.deadline, opts.connect_timeout);
    let tls = dest.scheme == Scheme::Https;
    let (stream, ip) = until_stopped(
        &call,
        connect(
            &call.env,
            &vetted,
            dest.port,
            &dest.host,
            tls,
            connect_until,
        ),
        HttpError::ConnectionTimeout,
    )
    .await
    .map_err(fail)?;
    call.log().update(id, |u| u.address = Some(ip));

    let (mut sender, conn) = until_stopped(
        &call,
        async {
            hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(HttpError::from)
        },
        HttpError::ConnectionTimeout,
    )
    .await
    .map_err(fail)?;
    let origin = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    parts.uri = http::Uri::builder()
        .path_and_query(origin)
        .build()
        .map_err(|_| fail(HttpError::HttpRequestUriInvalid))?;
    let body = RequestBody {
        inner: body,
        sent: counters.out.clone(),
        limit: call.limits.request_bytes,
    };
    let request = http::Request::from_parts(parts, body);

    let first_byte_until = earliest(call.deadline, opts.first_byte_timeout);
    let mut conn = Some(conn);
    let exchange = async {
        let mut send = pin!(sender.send_request(request));
        poll_fn(|cx| match send.as_mut().poll(cx) {
            Poll::Ready(r) => Poll::Ready(r.map_err(HttpError::from)),
            Poll::Pending => match conn.as_mut().map(|c| Pin::new(c).poll(cx)) {
                None | Some(Poll::Pending) => Poll::Pending,
                Some(Poll::Ready(Ok(()))) => {
                    conn = None;
                    send.as_mut().poll(cx).map_err(HttpError::from)
                }
                Some(Poll::Ready(Err(e))) => Poll::Ready(Err(HttpError::from(e))),
            },
        })
        .await
    };
    let response = until_stopped(
        &call,
        async {
            match tokio::time::timeout_at(first_byte_until.into(), exchange).await {
                Ok(r) => r,
                Err(_) => Err(HttpError::ConnectionReadTimeout),
            }
        },
        HttpError::ConnectionReadTimeout,
    )
    .await
    .map_err(fail)?;

    let (mut head, incoming) = response.into_parts();
    call.log()
        .update(id, |u| u.status = Some(head.status.as_u16()));
    let redact = injected
        .map(|_| call.redactor.clone())
        .filter(|r| !r.is_empty());
    if let Some(r) = &redact {
        redact_headers(&mut head.headers, r);
        // Redaction changes the body's length, and the original length
        // would tell the length of the secret in it.
        head.headers.remove(http::header::CONTENT_LENGTH);
    }
    let log_call = call.clone();
    let body = ResponseBody {
        inner: incoming,
        received: counters.inn.clone(),
        limit: call.limits.response_bytes,
        stop: Box::pin(stopped(call.deadline, call.cancel.clone())),
        idle: opts
            .between_bytes_timeout
            .map(|d| (d, Box::pin(tokio::time::sleep(d)))),
        redact: redact.map(StreamRedactor::new),
        ended: None,
        done: false,
        on_error: Some(Box::new(move |why| log_error(&log_call, id, why))),
    };
    let io_call = call.clone();
    let io: IoFuture = Box::new(async move {
        let Some(conn) = conn else { return Ok(()) };
        tokio::select! {
            r = conn => r.map_err(HttpError::from),
            () = stopped(io_call.deadline, io_call.cancel.clone()) => Ok(()),
        }
    });
    Ok((http::Response::from_parts(head, body.boxed_unsync()), io))
}

use std::pin::Pin;

fn log_error(call: &EgressCall, id: UseId, why: String) {
    call.log().update(id, |u| u.error = Some(why));
}

/// Resolve `name` once, on a blocking thread, before the deadline.
async fn resolve(
    call: &Arc<EgressCall>,
    name: &str,
    port: u16,
) -> Result<Vec<std::net::IpAddr>, HttpError> {
    let resolver = call.env.resolver.clone();
    let host = name.to_string();
    let lookup = async move {
        match tokio::task::spawn_blocking(move || resolver.resolve(&host, port)).await {
            Ok(Ok(addrs)) if !addrs.is_empty() => Ok(addrs),
            Ok(Ok(_)) | Ok(Err(_)) | Err(_) => Err(HttpError::DnsError {
                rcode: Some("the name did not resolve".into()),
                info_code: None,
            }),
        }
    };
    until_stopped(call, lookup, HttpError::DnsTimeout).await
}

fn redact_headers(headers: &mut http::HeaderMap, r: &Redactor) {
    for value in headers.values_mut() {
        let bytes = r.bytes(value.as_bytes());
        if bytes != value.as_bytes() {
            *value = HeaderValue::from_bytes(&bytes)
                .unwrap_or_else(|_| HeaderValue::from_static("[REDACTED]"));
        }
    }
}

/// The earlier of the deadline and `now + timeout`.
fn earliest(deadline: Instant, timeout: Option<Duration>) -> Instant {
    match timeout.and_then(|t| Instant::now().checked_add(t)) {
        Some(t) if t < deadline => t,
        _ => deadline,
    }
}

/// `work`, or `timeout` once the call is stopped.
async fn until_stopped<T>(
    call: &EgressCall,
    work: impl Future<Output = Result<T, HttpError>>,
    timeout: HttpError,
) -> Result<T, HttpError> {
    tokio::select! {
        r = work => r,
        () = stopped(call.deadline, call.cancel.clone()) => Err(timeout),
    }
}

/// Resolves at `deadline` or as soon as `cancel` is set.
pub async fn stopped(deadline: Instant, cancel: CancelToken) {
    tokio::select! {
        () = tokio::time::sleep_until(deadline.into()) => {}
        () = cancel.cancelled() => {}
    }
}
