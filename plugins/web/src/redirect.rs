//! Sending a request and following redirects, one checked request per hop.
//!
//! The host never follows a redirect: each hop here is a new request that
//! the host's egress layer checks again. 301, 302 and 303 turn a POST into
//! a GET without a body (as browsers do; 303 does so for every method but
//! HEAD), 307 and 308 repeat the method and body. A hop to another origin
//! drops `Authorization`, `Cookie` and `Proxy-Authorization`. At most
//! [`MAX_REDIRECTS`] hops are followed.

use warden_sdk::ToolError;
use warden_sdk::http::{Body, Headers, HttpError, Method, Request, Response, Url};

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// Headers never carried to another origin.
const CREDENTIAL_HEADERS: &[&str] = &["authorization", "cookie", "proxy-authorization"];

/// One request of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    pub method: Method,
    pub url: Url,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// Sends one request; the host's client, or a script in tests.
pub trait Exchange {
    type Reply: Reply;
    fn send(&mut self, hop: &Hop) -> Result<Self::Reply, HttpError>;
}

/// A response head whose body can be read under a cap.
pub trait Reply {
    fn status(&self) -> u16;
    fn headers(&self) -> &Headers;
    fn body(self, max: usize) -> Result<Body, HttpError>;
}

/// The real network, through `warden_sdk::http`.
pub struct Wasi;

impl Exchange for Wasi {
    type Reply = Response;
    fn send(&mut self, hop: &Hop) -> Result<Response, HttpError> {
        let mut req = Request::new(hop.method, hop.url.clone());
        for (name, value) in &hop.headers {
            req = req.header(name, value);
        }
        if let Some(body) = &hop.body {
            req = req.body(body.as_bytes());
        }
        req.send()
    }
}

impl Reply for Response {
    fn status(&self) -> u16 {
        Response::status(self)
    }
    fn headers(&self) -> &Headers {
        Response::headers(self)
    }
    fn body(self, max: usize) -> Result<Body, HttpError> {
        Response::body(self, max)
    }
}

/// A redirect that was followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The URL that answered with a redirect.
    pub from: Url,
    pub status: u16,
    pub to: Url,
}

/// The final response of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The method of the last request (a POST may have become a GET).
    pub method: Method,
    /// The URL of the last request.
    pub url: Url,
    pub status: u16,
    pub headers: Headers,
    pub body: Body,
    pub redirects: Vec<Redirect>,
    /// Why a 3xx was returned as is, when it was.
    pub unfollowed: Option<String>,
}

/// What to do after a response.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Next {
    /// Show this response.
    Done(Option<String>),
    /// Send this request.
    Follow(Hop),
}

/// Decide whether the response to `hop` is a redirect to follow.
fn next(hop: &Hop, status: u16, location: Option<&str>) -> Next {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Next::Done(None);
    }
    let Some(location) = location else {
        return Next::Done(Some(format!(
            "the {status} response has no Location header"
        )));
    };
    let url = match hop.url.join(location) {
        Ok(url) => url,
        Err(e) => {
            return Next::Done(Some(format!(
                "its Location `{location}` cannot be followed: {e}"
            )));
        }
    };
    let (method, body) = match (status, hop.method) {
        (307 | 308, m) => (m, hop.body.clone()),
        (_, Method::Head) => (Method::Head, None),
        (303, _) | (301 | 302, Method::Post) => (Method::Get, None),
        (_, m) => (m, hop.body.clone()),
    };
    let same_origin = url.same_origin(&hop.url);
    let headers = hop
        .headers
        .iter()
        .filter(|(n, _)| {
            (same_origin || !CREDENTIAL_HEADERS.iter().any(|c| n.eq_ignore_ascii_case(c)))
                && (body.is_some() || !n.eq_ignore_ascii_case("content-type"))
        })
        .cloned()
        .collect();
    Next::Follow(Hop {
        method,
        url,
        headers,
        body,
    })
}

/// Send `first`, following redirects when `follow`, and read the final
/// body (none for HEAD) under the cap `read_cap` picks from its headers.
pub fn fetch<E: Exchange>(
    ex: &mut E,
    first: Hop,
    follow: bool,
    read_cap: &dyn Fn(&Headers) -> usize,
) -> Result<Fetched, ToolError> {
    let mut hop = first;
    let mut redirects: Vec<Redirect> = Vec::new();
    loop {
        let reply = ex.send(&hop).map_err(|e| in_chain(e, &redirects))?;
        let status = reply.status();
        let decision = if follow {
            next(&hop, status, reply.headers().get("location"))
        } else if (300..400).contains(&status) && reply.headers().get("location").is_some() {
            Next::Done(Some("follow_redirects is false".into()))
        } else {
            Next::Done(None)
        };
        match decision {
            Next::Follow(to) => {
                redirects.push(Redirect {
                    from: hop.url.clone(),
                    status,
                    to: to.url.clone(),
                });
                if redirects.len() > MAX_REDIRECTS {
                    return Err(ToolError::io(format!(
                        "more than {MAX_REDIRECTS} redirects, stopped: {}",
                        chain(&redirects)
                    )));
                }
                drop(reply);
                hop = to;
            }
            Next::Done(unfollowed) => {
                let headers = reply.headers().clone();
                let body = match hop.method {
                    Method::Head => Body::default(),
                    _ => {
                        let cap = read_cap(&headers);
                        reply.body(cap).map_err(|e| in_chain(e, &redirects))?
                    }
                };
                return Ok(Fetched {
                    method: hop.method,
                    url: hop.url,
                    status,
                    headers,
                    body,
                    redirects,
                    unfollowed,
                });
            }
        }
    }
}

/// `a -301-> b -302-> c`.
pub fn chain(redirects: &[Redirect]) -> String {
    let mut out = String::new();
    for (i, r) in redirects.iter().enumerate() {
        if i == 0 {
            out.push_str(&r.from.to_string());
        }
        out.push_str(&format!(" -{}-> {}", r.status, r.to));
    }
    out
}

/// A failure, with the redirect that led to it when there was one.
fn in_chain(err: HttpError, redirects: &[Redirect]) -> ToolError {
    let mut tool = ToolError::from(err);
    if let Some(last) = redirects.last() {
        tool.message = format!(
            "{} (while following a {} redirect from {} to {})",
            tool.message, last.status, last.from, last.to
        );
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use warden_sdk::ErrorKind;

    /// Answers each request with the next scripted reply, recording requests.
    #[derive(Default)]
    struct Script {
        replies: VecDeque<Result<Canned, HttpError>>,
        sent: Vec<Hop>,
    }

    struct Canned {
        status: u16,
        headers: Headers,
        body: &'static str,
    }

    impl Reply for Canned {
        fn status(&self) -> u16 {
            self.status
        }
        fn headers(&self) -> &Headers {
            &self.headers
        }
        fn body(self, max: usize) -> Result<Body, HttpError> {
            let b = self.body.as_bytes();
            Ok(Body {
                bytes: b[..b.len().min(max)].to_vec(),
                truncated: b.len() > max,
                host_limit: None,
            })
        }
    }

    impl Exchange for Script {
        type Reply = Canned;
        fn send(&mut self, hop: &Hop) -> Result<Canned, HttpError> {
            self.sent.push(hop.clone());
            self.replies.pop_front().expect("an unscripted request")
        }
    }

    impl Script {
        fn reply(mut self, status: u16, location: Option<&str>, body: &'static str) -> Self {
            let headers = Headers::from_pairs(location.map(|l| ("Location", l)));
            self.replies.push_back(Ok(Canned {
                status,
                headers,
                body,
            }));
            self
        }
        fn fail(mut self, err: HttpError) -> Self {
            self.replies.push_back(Err(err));
            self
        }
    }

    fn hop(method: Method, url: &str, body: Option<&str>) -> Hop {
        Hop {
            method,
            url: Url::parse(url).unwrap(),
            headers: vec![
                ("Authorization".into(), "Bearer t".into()),
                ("Content-Type".into(), "application/json".into()),
                ("X-Keep".into(), "1".into()),
            ],
            body: body.map(str::to_string),
        }
    }

    #[test]
    fn follows_a_chain_and_reports_it() {
        let mut ex = Script::default()
            .reply(301, Some("/moved"), "")
            .reply(302, Some("https://other.example/final?x=1"), "")
            .reply(200, None, "done");
        let got = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/start", None),
            true,
            &|_| 100,
        )
        .unwrap();
        assert_eq!(
            (got.status, got.url.to_string()),
            (200, "https://other.example/final?x=1".into())
        );
        assert_eq!(got.body.bytes, b"done");
        assert_eq!(
            chain(&got.redirects),
            "https://a.example/start -301-> https://a.example/moved -302-> https://other.example/final?x=1"
        );
        let urls: Vec<String> = ex.sent.iter().map(|h| h.url.to_string()).collect();
        assert_eq!(urls.len(), 3);
        // Same origin keeps credentials; another origin does not.
        assert!(ex.sent[1].headers.iter().any(|(n, _)| n == "Authorization"));
        let names: Vec<&str> = ex.sent[2].headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["X-Keep"]);
    }

    #[test]
    fn methods_and_bodies_follow_the_status() {
        let post = || hop(Method::Post, "https://a.example/form", Some("{}"));
        for (status, method, body) in [
            (301, Method::Get, None),
            (302, Method::Get, None),
            (303, Method::Get, None),
            (307, Method::Post, Some("{}".to_string())),
            (308, Method::Post, Some("{}".to_string())),
        ] {
            let mut ex = Script::default()
                .reply(status, Some("/next"), "")
                .reply(200, None, "ok");
            fetch(&mut ex, post(), true, &|_| 100).unwrap();
            assert_eq!(
                (ex.sent[1].method, ex.sent[1].body.clone()),
                (method, body),
                "{status}"
            );
            let keeps_type = ex.sent[1].headers.iter().any(|(n, _)| n == "Content-Type");
            assert_eq!(keeps_type, ex.sent[1].body.is_some(), "{status}");
        }
        let mut ex = Script::default()
            .reply(303, Some("/next"), "")
            .reply(200, None, "ignored");
        let got = fetch(
            &mut ex,
            hop(Method::Head, "https://a.example/", None),
            true,
            &|_| 100,
        )
        .unwrap();
        assert_eq!(
            (ex.sent[1].method, got.body),
            (Method::Head, Body::default())
        );
    }

    #[test]
    fn unfollowed_redirects_say_why() {
        let mut ex = Script::default().reply(302, Some("/next"), "moved");
        let got = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/", None),
            false,
            &|_| 100,
        )
        .unwrap();
        assert_eq!(
            (got.status, got.unfollowed.as_deref()),
            (302, Some("follow_redirects is false"))
        );
        let mut ex = Script::default().reply(302, Some("ftp://files.example/x"), "");
        let got = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/", None),
            true,
            &|_| 100,
        )
        .unwrap();
        assert_eq!(
            got.unfollowed.as_deref(),
            Some(
                "its Location `ftp://files.example/x` cannot be followed: unsupported scheme `ftp`: only http and https are supported"
            )
        );
        let mut ex = Script::default().reply(301, None, "");
        let got = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/", None),
            true,
            &|_| 100,
        )
        .unwrap();
        assert_eq!(
            got.unfollowed.as_deref(),
            Some("the 301 response has no Location header")
        );
        let mut ex = Script::default().reply(304, Some("/x"), "");
        let got = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/", None),
            true,
            &|_| 100,
        )
        .unwrap();
        assert_eq!((got.status, got.unfollowed), (304, None));
        assert_eq!(ex.sent.len(), 1);
    }

    #[test]
    fn gives_up_after_five_hops() {
        let mut ex = Script::default();
        for i in 0..=MAX_REDIRECTS {
            ex = ex.reply(302, Some(["/a", "/b"][i % 2]), "");
        }
        let err = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/", None),
            true,
            &|_| 100,
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Io);
        assert!(
            err.message.starts_with(
                "more than 5 redirects, stopped: https://a.example/ -302-> https://a.example/a"
            ),
            "{}",
            err.message
        );
        assert_eq!(ex.sent.len(), MAX_REDIRECTS + 1);
    }

    #[test]
    fn a_denied_hop_names_the_redirect() {
        let mut ex = Script::default()
            .reply(302, Some("http://169.254.169.254/latest"), "")
            .fail(HttpError::Denied(
                "network access to 169.254.169.254:80 denied".into(),
            ));
        let err = fetch(
            &mut ex,
            hop(Method::Get, "https://a.example/", None),
            true,
            &|_| 100,
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::PermissionDenied);
        assert_eq!(
            err.message,
            "network access to 169.254.169.254:80 denied \
             (while following a 302 redirect from https://a.example/ to http://169.254.169.254/latest)"
        );
    }
}
