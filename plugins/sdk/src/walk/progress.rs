//! Progress of a long walk: files seen, bytes read and time taken,
//! reported through [`crate::progress`] no more than twice a second, and
//! not at all for a walk that ends within half a second.

use std::time::{Duration, Instant};

/// Time between reports, and before the first.
const INTERVAL: Duration = Duration::from_millis(500);
/// Entries between looks at the clock (each look is a host call).
const CHECK_EVERY: u64 = 128;

/// Counts a walk and reports it now and then.
#[derive(Debug)]
pub struct WalkProgress {
    /// The tool, first word of each message.
    tool: &'static str,
    /// What an entry is called: `files`, `entries`.
    noun: &'static str,
    started: Instant,
    last: Instant,
    /// Entries seen by the walk.
    pub seen: u64,
    /// Bytes read.
    pub bytes: u64,
}

impl WalkProgress {
    /// A walk by `tool` starting now, counting `noun` (plural).
    pub fn new(tool: &'static str, noun: &'static str) -> Self {
        let now = Instant::now();
        WalkProgress {
            tool,
            noun,
            started: now,
            last: now,
            seen: 0,
            bytes: 0,
        }
    }

    /// Count one entry and `bytes` read; report when it is time to.
    pub fn entry(&mut self, bytes: u64) {
        self.seen += 1;
        self.bytes += bytes;
        if self.seen.is_multiple_of(CHECK_EVERY)
            && let Some(message) = self.due(Instant::now())
        {
            report(&message);
        }
    }

    /// The message to report at `now`, if one is due.
    fn due(&mut self, now: Instant) -> Option<String> {
        if now.duration_since(self.last) < INTERVAL {
            return None;
        }
        self.last = now;
        Some(self.message(now))
    }

    /// E.g. `grep: 12,345 files seen, 96.5 MiB read, 1.5 s`; a walk that
    /// reads nothing (`glob`) leaves out the bytes.
    fn message(&self, now: Instant) -> String {
        let read = if self.bytes == 0 {
            String::new()
        } else {
            format!(", {:.1} MiB read", self.bytes as f64 / f64::from(1 << 20))
        };
        format!(
            "{}: {} {} seen{read}, {:.1} s",
            self.tool,
            thousands(self.seen),
            self.noun,
            now.duration_since(self.started).as_secs_f64()
        )
    }
}

fn report(message: &str) {
    #[cfg(target_family = "wasm")]
    crate::progress(message, None);
    #[cfg(not(target_family = "wasm"))]
    let _ = message;
}

/// `n` with commas between thousands.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_only_after_the_interval_and_says_what_was_seen() {
        let mut p = WalkProgress::new("grep", "files");
        let t0 = p.started;
        p.seen = 12_345;
        p.bytes = 3 << 20;
        assert_eq!(p.due(t0 + Duration::from_millis(499)), None);
        assert_eq!(
            p.due(t0 + Duration::from_millis(1500)).as_deref(),
            Some("grep: 12,345 files seen, 3.0 MiB read, 1.5 s")
        );
        assert_eq!(p.due(t0 + Duration::from_millis(1700)), None);
        p.bytes = 0;
        assert_eq!(
            p.due(t0 + Duration::from_millis(2000)).as_deref(),
            Some("grep: 12,345 files seen, 2.0 s")
        );
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
