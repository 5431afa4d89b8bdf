//! The overlay budget of a `--review` run: what the run wrote to its
//! overlay is measured after each turn's calls, and over the cap the run
//! stops, as it does when another budget runs out.

use std::path::PathBuf;

use super::StopReason;

/// Where a `--review` run's writes go, and how much it may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewCap {
    /// The overlay's upper directory.
    pub upper: PathBuf,
    /// The most bytes the files there may hold.
    pub limit: u64,
}

impl ReviewCap {
    /// The stop reason when the overlay holds more than the cap.
    pub fn exceeded(&self) -> Option<StopReason> {
        let used = crate::overlay::tree_bytes(&self.upper);
        (used > self.limit).then_some(StopReason::ReviewCap {
            limit: self.limit,
            used,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_past_the_cap_stop_the_run() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/a"), [0u8; 60]).unwrap();
        let cap = ReviewCap {
            upper: dir.path().to_path_buf(),
            limit: 100,
        };
        assert_eq!(cap.exceeded(), None);
        std::fs::write(dir.path().join("b"), [0u8; 41]).unwrap();
        assert_eq!(
            cap.exceeded(),
            Some(StopReason::ReviewCap {
                limit: 100,
                used: 101
            })
        );
    }
}
