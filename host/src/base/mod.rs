//! Value types and infrastructure every other module shares: cancellation,
//! limits, the call gate, what a guest reports, hashing, text cutting,
//! durable and atomic files, the secrets to redact, text made inert for a
//! terminal, the terminal prompt.
//!
//! The bottom layer: nothing here imports another Warden module.

mod atomic_file;
mod cancel;
pub mod durable;
mod gate;
mod guest_report;
mod hash;
mod limits;
pub mod prompt;
pub mod secrets;
mod terminal_text;
mod text;
mod verbosity;

pub use atomic_file::{PRIVATE_FILE, Rename, create_private_dir, write_atomic};
pub use cancel::{CANCEL_GRACE, CancelToken, Interrupt, Interrupted};
pub use gate::{CallGate, GateHold, GatePass};
pub use guest_report::{LogLevel, LogLine, ProgressEvent, ProgressSink};
pub use hash::sha256_hex;
pub use limits::{LIMIT_KEYS, LimitError, Limits, MAX_MEMORY_BYTES, MAX_WORKERS};
pub use terminal_text::{TerminalStream, terminal_line, terminal_text};
pub use text::{QUOTE_BYTES, cut_to, excerpt, keep_at_most, prefix};
pub use verbosity::Verbosity;
