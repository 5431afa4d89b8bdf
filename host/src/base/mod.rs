//! Value types and infrastructure every other module shares: cancellation,
//! limits, the call gate, what a guest reports, hashing, text cutting,
//! durable files.
//!
//! The bottom layer: nothing here imports another Warden module.

mod cancel;
pub mod durable;
mod gate;
mod guest_report;
mod hash;
mod limits;
mod text;

pub use cancel::{CANCEL_GRACE, CancelToken, Interrupt, Interrupted};
pub use gate::{CallGate, GateHold, GatePass};
pub use guest_report::{LogLevel, LogLine, ProgressEvent, ProgressSink};
pub use hash::sha256_hex;
pub use limits::{LIMIT_KEYS, Limits, MAX_MEMORY_BYTES, MAX_WORKERS};
pub use text::floor_char_boundary;
