//! `warden plugin install https://…/x.wasm --sha256 HEX`: one GET, at most
//! [`MAX_REDIRECTS`] redirects and only to the same host, plain `http`
//! only with `--allow-http`, the body capped and checked against the sha256.

use std::error::Error as _;
use std::time::Duration;

use reqwest::redirect::{Attempt, Policy};

use super::layout::not_a_component;
use super::read::read_capped;
use super::{FetchError, FetchOptions, Fetched, MAX_REDIRECTS, Origin};

/// Why a redirect was not followed; recovered from reqwest's error chain.
#[derive(Debug, thiserror::Error)]
enum RedirectRefused {
    #[error("to another host")]
    OtherHost(String),
    #[error("to plain http")]
    PlainHttp(String),
    #[error("too many")]
    TooMany,
}

fn redirect_policy(allow_http: bool) -> Policy {
    Policy::custom(move |attempt: Attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(RedirectRefused::TooMany);
        }
        let first = attempt.previous().first().and_then(|u| u.host_str());
        let to = attempt.url();
        if to.host_str() != first {
            let to = to.to_string();
            return attempt.error(RedirectRefused::OtherHost(to));
        }
        if to.scheme() != "https" && !(allow_http && to.scheme() == "http") {
            let to = to.to_string();
            return attempt.error(RedirectRefused::PlainHttp(to));
        }
        attempt.follow()
    })
}

/// The client every download goes through: same-host redirects only, at
/// most [`MAX_REDIRECTS`], plain `http` only when allowed.
pub(super) fn http_client(allow_http: bool) -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .redirect(redirect_policy(allow_http))
        .connect_timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| FetchError::Network(format!("cannot set up the HTTP client: {e}")))
}

pub(super) async fn fetch(
    url: &reqwest::Url,
    sha256: &str,
    opts: FetchOptions,
) -> Result<Fetched, FetchError> {
    let shown = url.to_string();
    match url.scheme() {
        "https" => {}
        "http" if opts.allow_http => {}
        _ => return Err(FetchError::PlainHttp { url: shown }),
    }
    let client = http_client(opts.allow_http)?;
    let response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| request_error(&shown, &e))?;
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::Status {
            what: shown,
            status: status.to_string(),
        });
    }
    let expected = response.content_length();
    let wasm = read_capped(response.bytes_stream(), &shown, opts.max_bytes, expected).await?;
    let got = crate::base::sha256_hex(&wasm);
    if got != sha256 {
        return Err(FetchError::DigestMismatch {
            what: shown,
            expected: sha256.to_string(),
            got,
        });
    }
    if let Some(reason) = not_a_component(&wasm) {
        return Err(FetchError::NotAComponent {
            what: shown,
            reason: reason.into(),
        });
    }
    Ok(Fetched {
        wasm,
        origin: Origin {
            source: url.to_string(),
            manifest_digest: None,
        },
    })
}

/// The typed error for a request that failed before a response.
pub(super) fn request_error(url: &str, e: &reqwest::Error) -> FetchError {
    let mut source = e.source();
    while let Some(s) = source {
        if let Some(refused) = s.downcast_ref::<RedirectRefused>() {
            return match refused {
                RedirectRefused::OtherHost(to) => FetchError::CrossHostRedirect {
                    from: url.to_string(),
                    to: to.clone(),
                },
                RedirectRefused::PlainHttp(to) => FetchError::PlainHttp { url: to.clone() },
                RedirectRefused::TooMany => FetchError::TooManyRedirects {
                    from: url.to_string(),
                    max: MAX_REDIRECTS,
                },
            };
        }
        source = s.source();
    }
    if e.is_timeout() {
        return FetchError::Timeout {
            secs: super::FETCH_TIMEOUT.as_secs(),
        };
    }
    FetchError::Network(format!("cannot fetch {url}: {}", chain(e)))
}

/// An error and its causes on one line.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
