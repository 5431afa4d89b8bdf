//! Who hears that a component is being compiled: the only slow step of
//! loading a plugin (seconds on a fresh data directory), so a caller can
//! say so. The runtime reports; it never prints.
//!
//! Every [`CompileEvent::Started`] is followed by exactly one
//! [`CompileEvent::Finished`] for the same plugin, whether the load
//! succeeded or not.

use std::sync::Arc;

/// A step of compiling one component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileEvent<'a> {
    /// The component is not in the compile cache: compiling and checking
    /// it starts now. `plugin` is the name its manifest gives.
    Started { plugin: &'a str },
    /// Compiling and checking it ended (either way).
    Finished { plugin: &'a str },
}

/// Called on the loading thread at each [`CompileEvent`].
pub type CompileObserver = Arc<dyn Fn(CompileEvent<'_>) + Send + Sync>;

/// Reports [`CompileEvent::Finished`] when dropped, so an early return
/// still ends what [`CompileEvent::Started`] began.
pub(super) struct Compiling<'a> {
    observer: Option<&'a CompileObserver>,
    plugin: &'a str,
}

impl<'a> Compiling<'a> {
    /// Report that `plugin` starts compiling.
    pub(super) fn start(observer: Option<&'a CompileObserver>, plugin: &'a str) -> Self {
        if let Some(o) = observer {
            o(CompileEvent::Started { plugin });
        }
        Compiling { observer, plugin }
    }
}

impl Drop for Compiling<'_> {
    fn drop(&mut self) {
        if let Some(o) = self.observer {
            o(CompileEvent::Finished {
                plugin: self.plugin,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn every_start_is_finished_even_on_an_early_return() {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = seen.clone();
        let observer: CompileObserver = Arc::new(move |e| {
            if let Ok(mut l) = log.lock() {
                l.push(format!("{e:?}"));
            }
        });
        let fails = || -> Result<(), ()> {
            let _compiling = Compiling::start(Some(&observer), "fs");
            Err(())
        };
        assert!(fails().is_err());
        assert_eq!(
            *seen.lock().unwrap(),
            ["Started { plugin: \"fs\" }", "Finished { plugin: \"fs\" }"]
        );
    }
}
