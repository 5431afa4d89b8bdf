//! Reading a download as a stream that stops at the cap: never more than
//! `cap` bytes are buffered, whatever the server claims or sends.

use futures_util::{Stream, StreamExt};

use super::FetchError;

/// Read `stream` (the body of `what`, announced as `expected` bytes if the
/// server said) into memory, refusing past `cap` bytes. A body that ends
/// before `expected` is truncated. Callers check the digest of what is
/// returned, so an error after every expected byte arrived (a checking
/// stream's own verdict) is left to that check.
pub(super) async fn read_capped<S, E>(
    mut stream: S,
    what: &str,
    cap: u64,
    expected: Option<u64>,
) -> Result<Vec<u8>, FetchError>
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let too_large = || FetchError::TooLarge {
        what: what.to_string(),
        cap: cap / (1024 * 1024),
    };
    if expected.is_some_and(|n| n > cap) {
        return Err(too_large());
    }
    let truncated = |got: usize, expected: u64| FetchError::Truncated {
        what: what.to_string(),
        got: got as u64,
        expected,
    };
    let mut buf = Vec::with_capacity(expected.unwrap_or(0).min(cap) as usize);
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => {
                if (buf.len() + bytes.len()) as u64 > cap {
                    return Err(too_large());
                }
                buf.extend_from_slice(&bytes);
            }
            Err(e) => match expected {
                Some(n) if (buf.len() as u64) < n => return Err(truncated(buf.len(), n)),
                Some(_) => return Ok(buf),
                None => return Err(FetchError::Network(format!("reading {what}: {e}"))),
            },
        }
    }
    match expected {
        Some(n) if (buf.len() as u64) < n => Err(truncated(buf.len(), n)),
        Some(_) | None => Ok(buf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(
        parts: Vec<Result<&'static [u8], &'static str>>,
    ) -> impl Stream<Item = Result<bytes::Bytes, &'static str>> + Unpin {
        futures_util::stream::iter(parts.into_iter().map(|p| p.map(bytes::Bytes::from_static)))
    }

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn the_cap_stops_a_stream_that_lies_about_or_omits_its_length() {
        let over = run(read_capped(
            chunks(vec![Ok(b"abcd"), Ok(b"efgh")]),
            "x",
            6,
            None,
        ));
        assert!(matches!(over, Err(FetchError::TooLarge { .. })), "{over:?}");
        let claimed = run(read_capped(chunks(vec![Ok(b"ab")]), "x", 6, Some(7)));
        assert!(
            matches!(claimed, Err(FetchError::TooLarge { .. })),
            "{claimed:?}"
        );
        let short = run(read_capped(
            chunks(vec![Ok(b"ab"), Err("eof")]),
            "x",
            6,
            Some(5),
        ));
        assert!(
            matches!(
                short,
                Err(FetchError::Truncated {
                    got: 2,
                    expected: 5,
                    ..
                })
            ),
            "{short:?}"
        );
        let ended = run(read_capped(chunks(vec![Ok(b"ab")]), "x", 6, Some(5)));
        assert!(
            matches!(ended, Err(FetchError::Truncated { .. })),
            "{ended:?}"
        );
        let whole = run(read_capped(
            chunks(vec![Ok(b"ab"), Ok(b"cd")]),
            "x",
            6,
            Some(4),
        ));
        assert_eq!(whole.unwrap(), b"abcd");
    }
}
