//! Per-call limits a caller asks for, held under the ceilings a policy sets.
//!
//! Invariant: a limit the policy sets (deadline, memory, output, HTTP
//! bytes and requests, workers, bytes written) is a ceiling: a call gets the policy's value unless its caller asked for
//! less, and a request for more is refused, never granted. Limits the
//! policy leaves unset keep the runtime default and may be set freely
//! within the engine's bounds.

use std::time::Duration;

use super::LimitOverrides;
use crate::base::Limits;

/// A requested limit above the policy's ceiling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "limit {key}={requested} is above the ceiling of {ceiling} that the policy sets; \
     ask for at most {ceiling}, or use a policy that allows more"
)]
pub struct LimitAboveCeiling {
    /// The limit, as the CLI spells it (`deadline-ms`, `memory-mib`, `output-bytes`).
    pub key: &'static str,
    /// What was asked for, in the key's unit.
    pub requested: u64,
    /// The most the policy allows, in the key's unit.
    pub ceiling: u64,
}

impl LimitOverrides {
    /// `base` with the policy's limits (`self`) applied, then the caller's
    /// `requests` on top: each may lower a limit the policy sets, never
    /// raise it; limits the policy leaves unset take the request as is.
    pub fn with_requests(
        &self,
        requests: &LimitOverrides,
        base: Limits,
    ) -> Result<Limits, LimitAboveCeiling> {
        let mut limits = self.apply(base);
        if let Some(d) = requests.deadline {
            check("deadline-ms", millis(d), self.deadline.map(millis))?;
            limits.deadline = d;
        }
        if let Some(m) = requests.memory_bytes {
            check("memory-mib", mib(m), self.memory_bytes.map(mib))?;
            limits.memory_bytes = m;
        }
        if let Some(o) = requests.output_bytes {
            check(
                "output-bytes",
                o as u64,
                self.output_bytes.map(|c| c as u64),
            )?;
            limits.output_bytes = o;
        }
        let counts = [
            (
                "http-request-bytes",
                requests.http_request_bytes,
                self.http_request_bytes,
                &mut limits.http_request_bytes,
            ),
            (
                "http-response-bytes",
                requests.http_response_bytes,
                self.http_response_bytes,
                &mut limits.http_response_bytes,
            ),
            (
                "http-requests",
                requests.http_requests,
                self.http_requests,
                &mut limits.http_requests,
            ),
            (
                "write-bytes",
                requests.write_bytes,
                self.write_bytes,
                &mut limits.write_bytes,
            ),
        ];
        for (key, requested, ceiling, limit) in counts {
            if let Some(r) = requested {
                check(key, r, ceiling)?;
                *limit = r;
            }
        }
        if let Some(w) = requests.workers {
            check("workers", w.into(), self.workers.map(u64::from))?;
            limits.workers = w;
        }
        Ok(limits)
    }
}

fn check(key: &'static str, requested: u64, ceiling: Option<u64>) -> Result<(), LimitAboveCeiling> {
    match ceiling {
        Some(ceiling) if requested > ceiling => Err(LimitAboveCeiling {
            key,
            requested,
            ceiling,
        }),
        Some(_) | None => Ok(()),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn mib(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> LimitOverrides {
        LimitOverrides {
            deadline: Some(Duration::from_secs(10)),
            memory_bytes: Some(128 << 20),
            http_requests: Some(4),
            ..LimitOverrides::default()
        }
    }

    #[test]
    fn the_policy_value_applies_unless_a_request_lowers_it() {
        let none = LimitOverrides::default();
        let l = policy().with_requests(&none, Limits::default()).unwrap();
        assert_eq!(
            (l.deadline, l.memory_bytes),
            (Duration::from_secs(10), 128 << 20)
        );
        let lower = LimitOverrides {
            deadline: Some(Duration::from_secs(2)),
            memory_bytes: Some(64 << 20),
            output_bytes: Some(5 << 20),
            http_requests: Some(3),
            http_response_bytes: Some(1 << 30),
            ..LimitOverrides::default()
        };
        let l = policy().with_requests(&lower, Limits::default()).unwrap();
        assert_eq!(l.deadline, Duration::from_secs(2));
        assert_eq!(l.memory_bytes, 64 << 20);
        // The policy sets no output limit: the request stands, above the default too.
        assert_eq!(l.output_bytes, 5 << 20);
        assert_eq!((l.http_requests, l.http_response_bytes), (3, 1 << 30));
        let equal = LimitOverrides {
            deadline: Some(Duration::from_secs(10)),
            ..LimitOverrides::default()
        };
        assert!(policy().with_requests(&equal, Limits::default()).is_ok());
    }

    #[test]
    fn a_request_above_the_ceiling_is_refused() {
        let higher = LimitOverrides {
            memory_bytes: Some(256 << 20),
            ..LimitOverrides::default()
        };
        let e = policy()
            .with_requests(&higher, Limits::default())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "limit memory-mib=256 is above the ceiling of 128 that the policy sets; \
             ask for at most 128, or use a policy that allows more"
        );
        let later = LimitOverrides {
            deadline: Some(Duration::from_millis(10_001)),
            ..LimitOverrides::default()
        };
        let e = policy()
            .with_requests(&later, Limits::default())
            .unwrap_err();
        assert_eq!(
            (e.key, e.requested, e.ceiling),
            ("deadline-ms", 10_001, 10_000)
        );
        let more_requests = LimitOverrides {
            http_requests: Some(5),
            ..LimitOverrides::default()
        };
        let e = policy()
            .with_requests(&more_requests, Limits::default())
            .unwrap_err();
        assert_eq!((e.key, e.requested, e.ceiling), ("http-requests", 5, 4));
    }

    #[test]
    fn the_write_quota_is_a_ceiling_too() {
        let policy = LimitOverrides {
            write_bytes: Some(1 << 20),
            ..LimitOverrides::default()
        };
        let none = LimitOverrides::default();
        let l = policy.with_requests(&none, Limits::default()).unwrap();
        assert_eq!(
            l.write_bytes,
            1 << 20,
            "the policy's value, not the 1 GiB default"
        );
        let less = LimitOverrides {
            write_bytes: Some(4096),
            ..LimitOverrides::default()
        };
        let l = policy.with_requests(&less, Limits::default()).unwrap();
        assert_eq!(l.write_bytes, 4096);
        let more = LimitOverrides {
            write_bytes: Some((1 << 20) + 1),
            ..LimitOverrides::default()
        };
        let e = policy.with_requests(&more, Limits::default()).unwrap_err();
        assert_eq!(
            (e.key, e.requested, e.ceiling),
            ("write-bytes", (1 << 20) + 1, 1 << 20)
        );
    }

    #[test]
    fn workers_are_a_ceiling_too() {
        let policy = LimitOverrides {
            workers: Some(2),
            ..LimitOverrides::default()
        };
        let none = LimitOverrides::default();
        let l = policy.with_requests(&none, Limits::default()).unwrap();
        assert_eq!(l.workers, 2);
        let one = LimitOverrides {
            workers: Some(1),
            ..LimitOverrides::default()
        };
        assert_eq!(
            policy
                .with_requests(&one, Limits::default())
                .unwrap()
                .workers,
            1
        );
        let more = LimitOverrides {
            workers: Some(4),
            ..LimitOverrides::default()
        };
        let e = policy.with_requests(&more, Limits::default()).unwrap_err();
        assert_eq!((e.key, e.requested, e.ceiling), ("workers", 4, 2));
    }
}
