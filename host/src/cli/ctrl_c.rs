//! Ctrl-C for the commands that run guests: the first press asks the work
//! to stop (cancelling running guests, which then end with a `cancelled`
//! outcome and record); a second press exits at once with
//! [`EXIT_AT_ONCE`], without waiting for a guest to stop.

/// The exit code of a second Ctrl-C (128 + SIGINT, as a shell reports it).
pub const EXIT_AT_ONCE: i32 = 130;

/// Watch for Ctrl-C on a thread of its own: `first` runs on the first
/// press, and the process exits on the second. Until the watcher is set
/// up (a fraction of a millisecond), Ctrl-C ends the process as usual.
pub fn watch(first: impl Fn() + Send + 'static) {
    let _ = std::thread::Builder::new()
        .name("warden-ctrl-c".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                use tokio::signal::unix::{SignalKind, signal};
                let Ok(mut presses) = signal(SignalKind::interrupt()) else {
                    return;
                };
                let mut count = 0u32;
                while presses.recv().await.is_some() {
                    count += 1;
                    if count > 1 {
                        // Whatever was written is whole: session lines and
                        // audit records are each written in one `write`.
                        std::process::exit(EXIT_AT_ONCE);
                    }
                    first();
                }
            });
        });
}
