//! Durability without waiting: a background thread that syncs a file on
//! request, folding the requests that arrive while it syncs into one
//! (group commit).
//!
//! Invariant: once [`BackgroundSync::wait`] returns `Ok`, everything
//! written to the file before the last [`BackgroundSync::request`] is on
//! disk.

use std::fs::File;

/// A thread that syncs one file on request, folding requests together.
/// Dropping it waits for the syncs already requested.
pub struct BackgroundSync {
    shared: std::sync::Arc<SyncState>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct SyncState {
    progress: std::sync::Mutex<SyncProgress>,
    changed: std::sync::Condvar,
}

#[derive(Default)]
struct SyncProgress {
    requested: u64,
    done: u64,
    closed: bool,
    error: Option<String>,
}

impl BackgroundSync {
    pub fn start(file: File) -> std::io::Result<BackgroundSync> {
        let shared = std::sync::Arc::new(SyncState::default());
        let state = shared.clone();
        let thread = std::thread::Builder::new()
            .name("warden-sync".into())
            .spawn(move || sync_loop(&file, &state))?;
        Ok(BackgroundSync {
            shared,
            thread: Some(thread),
        })
    }

    fn lock(&self) -> std::io::Result<std::sync::MutexGuard<'_, SyncProgress>> {
        self.shared
            .progress
            .lock()
            .map_err(|_| std::io::Error::other("the background sync failed"))
    }

    pub fn request(&self) -> std::io::Result<()> {
        let mut p = self.lock()?;
        if let Some(e) = p.error.take() {
            return Err(std::io::Error::other(e));
        }
        p.requested += 1;
        self.shared.changed.notify_all();
        Ok(())
    }

    pub fn wait(&self) -> std::io::Result<()> {
        let mut p = self.lock()?;
        while p.done < p.requested && p.error.is_none() {
            p = self
                .shared
                .changed
                .wait(p)
                .map_err(|_| std::io::Error::other("the background sync failed"))?;
        }
        match p.error.take() {
            Some(e) => Err(std::io::Error::other(e)),
            None => Ok(()),
        }
    }
}

fn sync_loop(file: &File, state: &SyncState) {
    let Ok(mut p) = state.progress.lock() else {
        return;
    };
    loop {
        while p.done >= p.requested && !p.closed {
            p = match state.changed.wait(p) {
                Ok(p) => p,
                Err(_) => return,
            };
        }
        if p.done >= p.requested {
            return;
        }
        let target = p.requested;
        drop(p);
        let result = file.sync_data();
        p = match state.progress.lock() {
            Ok(p) => p,
            Err(_) => return,
        };
        p.done = target;
        if let Err(e) = result {
            p.error = Some(e.to_string());
        }
        state.changed.notify_all();
    }
}

impl Drop for BackgroundSync {
    fn drop(&mut self) {
        if let Ok(mut p) = self.shared.progress.lock() {
            p.closed = true;
            self.shared.changed.notify_all();
        }
        if let Some(t) = self.thread.take() {
            // Pending syncs finish before the thread ends.
            let _ = t.join();
        }
    }
}
