//! Durability without waiting (group commit): a background thread that
//! commits what is submitted in batches — everything that arrived while
//! the last batch was being written and synced goes in the next one. A
//! writer started with a linger also waits that long after the first item
//! of a batch for more to join it, unless someone waits for the items.
//!
//! Invariant: once [`GroupCommit::wait`] returns `Ok`, every item
//! submitted before it was committed ([`Commit::commit`] returned `Ok`:
//! written and synced); a failed commit is reported, once, to the next
//! `submit` or `wait`, never dropped; `wait` never waits for a linger.
//! Dropping the writer commits what is still queued before it returns.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How a batch is made durable, on the writer thread.
pub trait Commit: Send + 'static {
    type Item: Send + 'static;
    /// Write what `batch` holds (items in submission order) and sync it;
    /// called for one batch at a time.
    fn commit(&mut self, batch: Vec<Self::Item>) -> std::io::Result<()>;
}

/// The simplest commit: the items were already written to the file by the
/// caller; a batch only syncs it.
pub struct SyncFile(pub std::fs::File);

impl Commit for SyncFile {
    type Item = ();
    fn commit(&mut self, _batch: Vec<()>) -> std::io::Result<()> {
        self.0.sync_data()
    }
}

/// A background writer committing batches with a [`Commit`].
pub struct GroupCommit<C: Commit> {
    shared: Arc<Shared<C::Item>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// The writer waits here for items.
    wake: Condvar,
    /// `wait` waits here for the writer.
    committed: Condvar,
}

struct State<T> {
    queue: Vec<T>,
    /// Items submitted so far, and of those, committed.
    submitted: u64,
    durable: u64,
    /// Whether the writer is at work (and will look at the queue again
    /// before it sleeps), so a submit need not wake it.
    busy: bool,
    /// Threads in [`GroupCommit::wait`]: a lingering writer commits at once.
    waiters: usize,
    closed: bool,
    /// The last failure, reported once to the next submit or wait.
    error: Option<std::io::Error>,
}

fn poisoned() -> std::io::Error {
    std::io::Error::other("the background writer failed")
}

/// The most items a lingering writer lets a batch grow to before it
/// commits without waiting out the linger.
const MAX_LINGERING: usize = 256;

impl<C: Commit> GroupCommit<C> {
    /// Start the writer thread, named `name`, committing as soon as items
    /// arrive.
    pub fn start(name: &str, commit: C) -> std::io::Result<GroupCommit<C>> {
        GroupCommit::start_lingering(name, commit, Duration::ZERO)
    }

    /// Start the writer thread, named `name`, which lets each batch gather
    /// items for up to `linger` after its first, unless someone waits:
    /// fewer, larger batches (one sync for many items) where items arrive
    /// in quick succession and nothing waits for each.
    pub fn start_lingering(
        name: &str,
        commit: C,
        linger: Duration,
    ) -> std::io::Result<GroupCommit<C>> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: Vec::new(),
                submitted: 0,
                durable: 0,
                busy: false,
                waiters: 0,
                closed: false,
                error: None,
            }),
            wake: Condvar::new(),
            committed: Condvar::new(),
        });
        let state = shared.clone();
        let thread = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || writer_loop(commit, &state, linger))?;
        Ok(GroupCommit {
            shared,
            thread: Some(thread),
        })
    }

    fn state(&self) -> std::io::Result<MutexGuard<'_, State<C::Item>>> {
        self.shared.state.lock().map_err(|_| poisoned())
    }

    /// Queue `item` for the next batch and return. Fails (once) if an
    /// earlier commit failed.
    pub fn submit(&self, item: C::Item) -> std::io::Result<()> {
        let mut s = self.state()?;
        if let Some(e) = s.error.take() {
            return Err(e);
        }
        s.queue.push(item);
        s.submitted += 1;
        if !s.busy || s.queue.len() == MAX_LINGERING {
            s.busy = true;
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Fails (once) if an earlier commit failed, as [`submit`](Self::submit)
    /// would, without queuing anything.
    pub fn take_error(&self) -> std::io::Result<()> {
        match self.state()?.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Wait until every item submitted so far is committed.
    pub fn wait(&self) -> std::io::Result<()> {
        let mut s = self.state()?;
        let target = s.submitted;
        if s.durable < target {
            // A lingering writer commits now.
            s.waiters += 1;
            self.shared.wake.notify_one();
            while s.durable < target && s.error.is_none() {
                s = match self.shared.committed.wait(s) {
                    Ok(s) => s,
                    Err(_) => return Err(poisoned()),
                };
            }
            s.waiters -= 1;
        }
        match s.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl<C: Commit> Drop for GroupCommit<C> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.shared.state.lock() {
            s.closed = true;
            self.shared.wake.notify_one();
        }
        if let Some(t) = self.thread.take() {
            // The writer commits what is queued before it ends.
            let _ = t.join();
        }
    }
}

fn writer_loop<C: Commit>(mut commit: C, shared: &Shared<C::Item>, linger: Duration) {
    let Ok(mut s) = shared.state.lock() else {
        return;
    };
    loop {
        while s.queue.is_empty() && !s.closed {
            s.busy = false;
            s = match shared.wake.wait(s) {
                Ok(s) => s,
                Err(_) => return,
            };
        }
        if s.queue.is_empty() {
            return;
        }
        s.busy = true;
        let until = Instant::now() + linger;
        while s.waiters == 0 && !s.closed && s.queue.len() < MAX_LINGERING {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            s = match shared.wake.wait_timeout(s, left) {
                Ok((s, _)) => s,
                Err(_) => return,
            };
        }
        let batch = std::mem::take(&mut s.queue);
        let upto = s.submitted;
        drop(s);
        let result = commit.commit(batch);
        s = match shared.state.lock() {
            Ok(s) => s,
            Err(_) => return,
        };
        s.durable = upto;
        if let Err(e) = result {
            s.error = Some(e);
        }
        shared.committed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each batch; fails the batches holding a `fail` item.
    struct Batches(Arc<Mutex<Vec<Vec<&'static str>>>>);

    impl Commit for Batches {
        type Item = &'static str;
        fn commit(&mut self, batch: Vec<&'static str>) -> std::io::Result<()> {
            let failed = batch.contains(&"fail");
            self.0.lock().unwrap().push(batch);
            if failed {
                return Err(std::io::Error::other("disk full"));
            }
            Ok(())
        }
    }

    #[test]
    fn every_item_is_committed_in_order_before_wait_returns() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let writer = GroupCommit::start("test", Batches(seen.clone())).unwrap();
        let items = ["a", "b", "c", "d", "e"];
        for item in items {
            writer.submit(item).unwrap();
        }
        writer.wait().unwrap();
        let flat: Vec<&str> = seen.lock().unwrap().concat();
        assert_eq!(flat, items);
    }

    #[test]
    fn a_failed_commit_is_reported_once_and_dropping_commits_the_rest() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let writer = GroupCommit::start("test", Batches(seen.clone())).unwrap();
        writer.submit("fail").unwrap();
        let err = writer.wait().unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        writer.wait().unwrap();
        writer.submit("later").unwrap();
        drop(writer);
        assert_eq!(seen.lock().unwrap().concat(), ["fail", "later"]);
    }

    #[test]
    fn a_lingering_writer_gathers_a_batch_and_a_waiter_does_not_wait_out_the_linger() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let linger = Duration::from_secs(30);
        let writer = GroupCommit::start_lingering("test", Batches(seen.clone()), linger).unwrap();
        writer.submit("a").unwrap();
        // Without a linger, "a" would be committed alone meanwhile.
        std::thread::sleep(Duration::from_millis(50));
        for item in ["b", "c", "d"] {
            writer.submit(item).unwrap();
        }
        let asked = Instant::now();
        writer.wait().unwrap();
        assert!(asked.elapsed() < linger / 2, "wait waited out the linger");
        assert_eq!(*seen.lock().unwrap(), [vec!["a", "b", "c", "d"]]);
        // Dropping commits what lingers, without waiting either.
        writer.submit("e").unwrap();
        let dropped = Instant::now();
        drop(writer);
        assert!(dropped.elapsed() < linger / 2, "drop waited out the linger");
        assert_eq!(seen.lock().unwrap().concat(), ["a", "b", "c", "d", "e"]);
    }
}
