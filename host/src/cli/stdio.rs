//! Writing to stdout and stderr without panicking on a closed pipe.
//!
//! `println!` panics when its reader has gone (`warden tool list | head`).
//! Every command writes through [`outln!`], [`out!`], [`errln!`] and
//! [`errw!`] instead: a write that fails marks the stream closed, and
//! nothing more is written to it. A command that only prints stops
//! quietly; `warden run` asks [`stdout_closed`] and ends its session.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout has failed (its reader went away).
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Write `args` to stdout, flushed; a failure marks stdout closed.
pub fn write_out(args: fmt::Arguments<'_>) {
    if stdout_closed() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if out.write_fmt(args).and_then(|()| out.flush()).is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Write `args` to stderr; a failure marks stderr closed.
pub fn write_err(args: fmt::Arguments<'_>) {
    if STDERR_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err.write_fmt(args).and_then(|()| err.flush()).is_err() {
        STDERR_CLOSED.store(true, Ordering::Relaxed);
    }
}

/// `println!` that never panics (see the module's docs).
macro_rules! outln {
    () => { $crate::cli::stdio::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::stdio::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that never panics.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::stdio::write_out(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => { $crate::cli::stdio::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::stdio::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that never panics.
macro_rules! errw {
    ($($arg:tt)*) => { $crate::cli::stdio::write_err(format_args!($($arg)*)) };
}
