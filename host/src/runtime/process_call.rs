//! A call's processes: its process grant, and the commands it ran.

use crate::capability::process::{MAX_PROCESS_USES, ProcessGrant, ProcessUse};

/// A call's processes: its grant, and the commands it ran.
pub(crate) struct ProcessCall {
    pub(crate) grant: ProcessGrant,
    pub(crate) uses: Vec<ProcessUse>,
    pub(crate) uses_dropped: u64,
}

impl ProcessCall {
    pub(crate) fn new(grant: ProcessGrant) -> ProcessCall {
        ProcessCall {
            grant,
            uses: Vec::new(),
            uses_dropped: 0,
        }
    }

    /// Keep `used`, if the cap allows, else count it.
    pub(crate) fn note(&mut self, used: ProcessUse) {
        if self.uses.len() < MAX_PROCESS_USES {
            self.uses.push(used);
        } else {
            self.uses_dropped += 1;
        }
    }

    /// Take in the commands a worker of the same call ran.
    pub(crate) fn absorb(&mut self, other: ProcessCall) {
        for used in other.uses {
            self.note(used);
        }
        self.uses_dropped += other.uses_dropped;
    }
}
