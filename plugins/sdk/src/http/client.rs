//! The `wasi:http` plumbing behind [`Request::send`] and [`Response::body`].
//!
//! Resource lifetimes follow the WIT rules: a child (stream, pollable,
//! fields) is always dropped before its parent, and the request body is
//! written after `handle`, so a large body never fills a buffer nobody
//! drains.

use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    self, ErrorCode, Fields, FutureIncomingResponse, HeaderError, IncomingBody, IncomingResponse,
    OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasip2::io::streams::{InputStream, StreamError};

use super::{Body, Headers, HttpError, Method, Request, Response};

/// Largest chunk asked of the host per read or write.
const CHUNK: usize = 64 * 1024;
/// Largest chunk `blocking-write-and-flush` accepts.
const WRITE_CHUNK: usize = 4096;

/// Send `req` (already validated) and wait for the response head.
pub(super) fn send(req: Request) -> Result<Response, HttpError> {
    let fields = Fields::new();
    let mut has_length = false;
    for (name, value) in &req.headers {
        has_length |= name.eq_ignore_ascii_case("content-length");
        fields
            .append(name, value.as_bytes())
            .map_err(|e| header_error(name, e))?;
    }
    let sends_body = matches!(req.method, Method::Post | Method::Put | Method::Patch);
    if (sends_body || !req.body.is_empty()) && !has_length {
        let length = req.body.len().to_string();
        fields
            .append("content-length", length.as_bytes())
            .map_err(|e| header_error("content-length", e))?;
    }
    let outgoing = OutgoingRequest::new(fields);
    let refused = |what: &str| HttpError::Other(format!("the host refused the request {what}"));
    outgoing
        .set_method(&wasi_method(req.method))
        .map_err(|()| refused("method"))?;
    let scheme = match req.url.scheme() {
        "https" => Scheme::Https,
        _ => Scheme::Http,
    };
    outgoing
        .set_scheme(Some(&scheme))
        .map_err(|()| refused("scheme"))?;
    outgoing
        .set_authority(Some(&req.url.authority()))
        .map_err(|()| refused("authority"))?;
    outgoing
        .set_path_with_query(Some(&req.url.path_and_query()))
        .map_err(|()| refused("path"))?;
    let body = outgoing.body().map_err(|()| refused("body"))?;
    let options = req.timeout.map(|t| {
        let options = RequestOptions::new();
        let nanos = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        // A host that does not support a timeout keeps its own.
        let _ = options.set_connect_timeout(Some(nanos));
        let _ = options.set_first_byte_timeout(Some(nanos));
        let _ = options.set_between_bytes_timeout(Some(nanos));
        options
    });
    let future = outgoing_handler::handle(outgoing, options).map_err(HttpError::from_code)?;
    let sent = write_body(body, &req.body);
    let response = match (wait(&future), sent) {
        (Ok(response), Ok(())) => response,
        // A failed response explains a failed upload better than the upload.
        (Err(e), _) | (Ok(_), Err(e)) => return Err(e),
    };
    let status = response.status();
    let headers = {
        let fields = response.headers();
        Headers(
            fields
                .entries()
                .into_iter()
                .map(|(n, v)| {
                    (
                        n.to_ascii_lowercase(),
                        String::from_utf8_lossy(&v).into_owned(),
                    )
                })
                .collect(),
        )
    };
    Ok(Response {
        status,
        headers,
        body: BodyReader::new(response)?,
    })
}

fn wasi_method(m: Method) -> types::Method {
    match m {
        Method::Get => types::Method::Get,
        Method::Head => types::Method::Head,
        Method::Post => types::Method::Post,
        Method::Put => types::Method::Put,
        Method::Delete => types::Method::Delete,
        Method::Patch => types::Method::Patch,
        Method::Options => types::Method::Options,
    }
}

fn header_error(name: &str, e: HeaderError) -> HttpError {
    let reason = match e {
        HeaderError::InvalidSyntax => "the host rejected the name or value as invalid",
        HeaderError::Forbidden => "the host does not let plugins set this header",
        HeaderError::Immutable => "the headers can no longer be changed",
    };
    HttpError::InvalidHeader {
        name: name.to_string(),
        reason: reason.to_string(),
    }
}

/// Write the whole request body, then finish it.
fn write_body(body: OutgoingBody, bytes: &[u8]) -> Result<(), HttpError> {
    {
        let stream = body
            .write()
            .map_err(|()| HttpError::Other("the request body could not be opened".into()))?;
        for chunk in bytes.chunks(WRITE_CHUNK) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(stream_error)?;
        }
    }
    OutgoingBody::finish(body, None).map_err(HttpError::from_code)
}

/// Block until the response head arrives.
fn wait(future: &FutureIncomingResponse) -> Result<IncomingResponse, HttpError> {
    loop {
        match future.get() {
            Some(Ok(Ok(response))) => return Ok(response),
            Some(Ok(Err(code))) => return Err(HttpError::from_code(code)),
            Some(Err(())) => {
                return Err(HttpError::Other("the response was already taken".into()));
            }
            None => future.subscribe().block(),
        }
    }
}

fn stream_error(e: StreamError) -> HttpError {
    match e {
        StreamError::Closed => {
            HttpError::Connection("the connection closed while sending the request".into())
        }
        StreamError::LastOperationFailed(err) => match types::http_error_code(&err) {
            Some(code) => HttpError::from_code(code),
            None => HttpError::Connection(err.to_debug_string()),
        },
    }
}

/// The response body stream. Fields drop in declaration order: the stream
/// before the body, the body before the response that owns it.
pub(super) struct BodyReader {
    stream: InputStream,
    _body: IncomingBody,
    _response: IncomingResponse,
}

impl BodyReader {
    fn new(response: IncomingResponse) -> Result<Self, HttpError> {
        let body = response
            .consume()
            .map_err(|()| HttpError::Other("the response body was already taken".into()))?;
        let stream = body
            .stream()
            .map_err(|()| HttpError::Other("the response body could not be opened".into()))?;
        Ok(BodyReader {
            stream,
            _body: body,
            _response: response,
        })
    }

    /// Read until the end or one byte past `max`.
    pub(super) fn read(self, max: usize) -> Result<Body, HttpError> {
        let mut bytes = Vec::new();
        loop {
            let want = max.saturating_add(1).saturating_sub(bytes.len()).min(CHUNK);
            match self.stream.blocking_read(want as u64) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(err)) => {
                    let code = types::http_error_code(&err);
                    // The host's own response cap ended the body: keep what arrived.
                    if let Some(ErrorCode::HttpResponseBodySize(limit)) = code
                        && !bytes.is_empty()
                    {
                        let host_limit =
                            (bytes.len() <= max).then(|| limit.unwrap_or(bytes.len() as u64));
                        bytes.truncate(max);
                        return Ok(Body {
                            bytes,
                            truncated: true,
                            host_limit,
                        });
                    }
                    return Err(match code {
                        Some(code) => HttpError::from_code(code),
                        None => HttpError::Connection(err.to_debug_string()),
                    });
                }
            }
            if bytes.len() > max {
                bytes.truncate(max);
                return Ok(Body {
                    bytes,
                    truncated: true,
                    host_limit: None,
                });
            }
        }
        Ok(Body {
            bytes,
            truncated: false,
            host_limit: None,
        })
    }
}
