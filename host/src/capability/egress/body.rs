//! Request and response bodies as they cross the boundary: counted,
//! capped, bounded by the call's deadline, and (for a response from a
//! credential's audience) stripped of the credential's value.
//!
//! Invariants: a request body never sends more than its cap; a response
//! body never yields more than its cap, and errors at the deadline or the
//! idle timeout instead of waiting; a redacted body never yields a
//! credential value, even split across frames.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use wasmtime_wasi_http::{Error as HttpError, WasiBody};

use super::credential::Redactor;

/// The guest's request body, counted and capped.
pub struct RequestBody {
    pub inner: WasiBody,
    pub sent: Arc<AtomicU64>,
    pub limit: u64,
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(f)) = &frame
            && let Some(data) = f.data_ref()
        {
            let total = self.sent.load(Ordering::Relaxed) + data.len() as u64;
            if total > self.limit {
                return Poll::Ready(Some(Err(HttpError::HttpRequestBodySize(Some(self.limit)))));
            }
            self.sent.store(total, Ordering::Relaxed);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body bounded in size and time.
pub struct ResponseBody {
    pub inner: hyper::body::Incoming,
    pub received: Arc<AtomicU64>,
    pub limit: u64,
    /// Fires at the call's deadline (or cancellation).
    pub stop: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// The guest's between-bytes timeout, if it set one.
    pub idle: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
    pub redact: Option<StreamRedactor>,
    /// The error to yield on the next poll (the cap, after the last bytes).
    pub ended: Option<HttpError>,
    /// Set once the body has yielded its end or its error.
    pub done: bool,
    /// Called once with what ended the body early, for the call's record.
    pub on_error: Option<Box<dyn FnOnce(String) + Send>>,
}

impl ResponseBody {
    fn fail(&mut self, err: HttpError) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        self.done = true;
        if let Some(f) = self.on_error.take() {
            f(err.to_string());
        }
        Poll::Ready(Some(Err(err)))
    }
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(err) = this.ended.take() {
            return this.fail(err);
        }
        if this.stop.as_mut().poll(cx).is_ready() {
            return this.fail(HttpError::ConnectionReadTimeout);
        }
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => {
                if let Some((_, sleep)) = &mut this.idle
                    && sleep.as_mut().poll(cx).is_ready()
                {
                    return this.fail(HttpError::ConnectionReadTimeout);
                }
                return Poll::Pending;
            }
            Poll::Ready(None) => {
                this.done = true;
                return match this.redact.as_mut().map(StreamRedactor::flush) {
                    Some(rest) if !rest.is_empty() => Poll::Ready(Some(Ok(Frame::data(rest)))),
                    _ => Poll::Ready(None),
                };
            }
            Poll::Ready(Some(Err(e))) => {
                let err = if e.is_timeout() {
                    HttpError::HttpResponseTimeout
                } else {
                    HttpError::from(e)
                };
                return this.fail(err);
            }
            Poll::Ready(Some(Ok(frame))) => frame,
        };
        if let Some((d, sleep)) = &mut this.idle {
            sleep.as_mut().reset(tokio::time::Instant::now() + *d);
        }
        let mut data = match frame.into_data() {
            Ok(data) => data,
            // Trailers: dropped when redacting, else passed on.
            Err(trailers) => {
                return match this.redact {
                    Some(_) => Poll::Ready(None),
                    None => Poll::Ready(Some(Ok(trailers))),
                };
            }
        };
        let before = this.received.load(Ordering::Relaxed);
        let room = this.limit.saturating_sub(before);
        let over = data.len() as u64 > room;
        if over {
            data.truncate(usize::try_from(room).unwrap_or(usize::MAX));
        }
        this.received
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        if over {
            this.ended = Some(HttpError::HttpResponseBodySize(Some(this.limit)));
            if data.is_empty() {
                return this.fail(HttpError::HttpResponseBodySize(Some(this.limit)));
            }
            if let Some(f) = this.on_error.take() {
                f(format!(
                    "the response body exceeded the {}-byte cap and was cut",
                    this.limit
                ));
            }
        }
        let data = match &mut this.redact {
            Some(r) => r.push(&data),
            None => data,
        };
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.done
            || (self.ended.is_none()
                && self.redact.as_ref().is_none_or(StreamRedactor::is_empty)
                && self.inner.is_end_stream())
    }
}

/// Redacts credential values from a stream of chunks, holding back a
/// chunk's tail while it could be the start of a value.
pub struct StreamRedactor {
    redactor: Redactor,
    needles: Vec<(Vec<u8>, Vec<u8>)>,
    carry: Vec<u8>,
}

impl StreamRedactor {
    pub fn new(redactor: Redactor) -> StreamRedactor {
        let needles = redactor.byte_pairs();
        StreamRedactor {
            redactor,
            needles,
            carry: Vec::new(),
        }
    }

    /// Take a chunk; return what can be released now.
    pub fn push(&mut self, chunk: &[u8]) -> Bytes {
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(chunk);
        let mut out = Vec::with_capacity(buf.len());
        let mut i = 0;
        'scan: while i < buf.len() {
            let rest = &buf[i..];
            // Held back first: a value still arriving here may be longer
            // than one that already matches (`ab` and `abcd`), and matching
            // the shorter would let the rest of the longer one through.
            if self
                .needles
                .iter()
                .any(|(n, _)| rest.len() < n.len() && n.starts_with(rest))
            {
                self.carry = rest.to_vec();
                break;
            }
            // Longest first, as the redactor orders them.
            for (needle, mark) in &self.needles {
                if rest.starts_with(needle) {
                    out.extend_from_slice(mark);
                    i += needle.len();
                    continue 'scan;
                }
            }
            out.push(buf[i]);
            i += 1;
        }
        Bytes::from(out)
    }

    /// Whether nothing is held back.
    pub fn is_empty(&self) -> bool {
        self.carry.is_empty()
    }

    /// The held-back tail at the end of the stream (it held no whole value).
    pub fn flush(&mut self) -> Bytes {
        Bytes::from(self.redactor.bytes(&std::mem::take(&mut self.carry)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capability::egress::credential::{LoadedCredential, Secret};

    fn credential(name: &str, value: &str) -> LoadedCredential {
        let handle = format!(
            "name = \"{name}\"\naudience = \"https://a.test\"\nheader = \"x-key\"\nenv = \"A\"\n"
        );
        LoadedCredential {
            handle: toml::from_str(&handle).unwrap(),
            value: Ok(Secret::for_test(value)),
        }
    }

    /// Stream `input` through `r` cut into chunks of every size, and check
    /// each comes out as `expected`.
    fn redacts_at_every_split(r: &Redactor, input: &[u8], expected: &str) {
        for split in 1..input.len() {
            let mut s = StreamRedactor::new(r.clone());
            let mut out = Vec::new();
            for chunk in input.chunks(split) {
                out.extend_from_slice(&s.push(chunk));
            }
            out.extend_from_slice(&s.flush());
            assert_eq!(String::from_utf8(out).unwrap(), expected, "split {split}");
        }
    }

    #[test]
    fn values_split_across_chunks_are_redacted() {
        let r = Redactor::new(&[credential("k", "abcdefgh12")]);
        redacts_at_every_split(
            &r,
            b"xx abcdefgh12 yy abcdefgh12 abcdefg zz abcdefgh1",
            "xx [REDACTED:k] yy [REDACTED:k] abcdefg zz abcdefgh1",
        );
    }

    #[test]
    fn a_value_that_starts_another_never_cuts_the_longer_one() {
        let r = Redactor::new(&[
            credential("short", "tok-1234"),
            credential("long", "tok-1234-5678-90"),
        ]);
        redacts_at_every_split(
            &r,
            b"a tok-1234-5678-90 b tok-1234 c tok-1234-5 d",
            "a [REDACTED:long] b [REDACTED:short] c [REDACTED:short]-5 d",
        );
    }
}
