//! What the kernel offers for confinement, probed once per process.
//!
//! Invariant: [`Support::admit`] refuses a mode whose layers the kernel
//! lacks, naming what is missing; nothing runs with less than its mode
//! requires. The `WARDEN_SIMULATE_NO_*` variables (for tests) can only
//! remove support, so they can only cause refusals.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::{ConfinementMode, ProcessBound, ProcessError, cgroup, sys};

/// The Landlock ABI [`ConfinementMode::Full`] requires.
pub const REQUIRED_LANDLOCK_ABI: u8 = 6;

/// What this kernel and this process can confine with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The kernel's Landlock ABI; 0 without Landlock.
    pub landlock_abi: u8,
    /// Whether a process can be made in new user, mount, pid, network, ipc
    /// and uts namespaces, or why not.
    pub namespaces: Result<(), NamespaceError>,
    /// Whether seccomp filters are available.
    pub seccomp: bool,
    /// Where a pids cgroup can be made for each call.
    pub pids_cgroup: Option<PathBuf>,
    /// Whether the host runs as root (which `RLIMIT_NPROC` does not bind).
    pub root: bool,
}

/// Why a process cannot be made in new namespaces.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceError {
    /// Simulated for tests.
    #[error("simulated by WARDEN_SIMULATE_NO_USERNS")]
    Simulated,
    /// The kernel refused to make the probe process, in its words.
    #[error("{0}")]
    Refused(String),
    /// The probe process did not exit cleanly.
    #[error("the probe process failed")]
    ProbeFailed,
}

/// The probed support, cached for the life of the process. The first call
/// starts a probe process in new namespaces (about half a millisecond), so
/// only a process call asks for it; confining the host needs only
/// [`landlock_abi`] and [`pids_cgroup_parent`].
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(Support::probe)
}

/// The kernel's Landlock ABI (0 without Landlock), asked once.
pub fn landlock_abi() -> u8 {
    static ABI: OnceLock<u8> = OnceLock::new();
    *ABI.get_or_init(|| match simulated_missing("LANDLOCK") {
        true => 0,
        false => sys::landlock_abi(),
    })
}

/// Where a pids cgroup can be made for each call, probed once.
pub fn pids_cgroup_parent() -> Option<PathBuf> {
    static PARENT: OnceLock<Option<PathBuf>> = OnceLock::new();
    PARENT
        .get_or_init(|| match simulated_missing("CGROUP") {
            true => None,
            false => cgroup::probe_parent(),
        })
        .clone()
}

/// Refuses a kernel whose Landlock cannot express the process rules.
pub fn require_landlock(abi: u8) -> Result<(), ProcessError> {
    match abi {
        0 => Err(ProcessError::Unavailable {
            missing: "Landlock (this kernel does not have it enabled)".into(),
        }),
        abi if abi < REQUIRED_LANDLOCK_ABI => Err(ProcessError::Unavailable {
            missing: format!(
                "Landlock ABI {REQUIRED_LANDLOCK_ABI} (Linux 6.12+) for TCP and scope rules; \
                 this kernel has ABI {abi}"
            ),
        }),
        _ => Ok(()),
    }
}

fn simulated_missing(what: &str) -> bool {
    std::env::var_os(format!("WARDEN_SIMULATE_NO_{what}")).is_some_and(|v| v == "1")
}

impl Support {
    /// Probes the kernel now (uncached, but for the Landlock ABI and the
    /// cgroup parent, which are asked once).
    pub fn probe() -> Support {
        let namespaces = match simulated_missing("USERNS") {
            true => Err(NamespaceError::Simulated),
            false => probe_namespaces(),
        };
        Support {
            landlock_abi: landlock_abi(),
            namespaces,
            seccomp: !simulated_missing("SECCOMP") && sys::seccomp_available(),
            pids_cgroup: pids_cgroup_parent(),
            root: rustix::process::geteuid().is_root(),
        }
    }

    /// How processes are bounded under `mode`, or why `mode` cannot run here.
    pub fn admit(&self, mode: ConfinementMode) -> Result<ProcessBound, ProcessError> {
        let missing = |what: String| Err(ProcessError::Unavailable { missing: what });
        require_landlock(self.landlock_abi)?;
        if let Err(why) = &self.namespaces {
            return missing(format!("unprivileged user namespaces ({why})"));
        }
        if !self.seccomp {
            return missing("seccomp filters".into());
        }
        if self.pids_cgroup.is_some() {
            return Ok(ProcessBound::Cgroup);
        }
        if !self.root {
            return Ok(ProcessBound::Rlimit);
        }
        match mode {
            ConfinementMode::Full => missing(
                "a bound on the number of processes: no writable pids cgroup, and RLIMIT_NPROC \
                 does not bind root; run Warden as a normal user, delegate a cgroup to it, or \
                 name the mode `unbounded-processes`"
                    .into(),
            ),
            ConfinementMode::UnboundedProcesses => Ok(ProcessBound::Unbounded),
        }
    }
}

/// Starts a child in every namespace a confined process gets, which exits
/// at once.
fn probe_namespaces() -> Result<(), NamespaceError> {
    extern "C" fn exit_at_once(_: *mut libc::c_void) -> libc::c_int {
        sys::exit(0)
    }
    let mask = sys::block_signals();
    // SAFETY: the child calls only sys::exit, which is async-signal-safe,
    // with every signal still blocked.
    let cloned = unsafe { sys::clone_vm_child(exit_at_once, std::ptr::null_mut()) };
    sys::set_signal_mask(&mask);
    let (_, pidfd) = match cloned {
        Ok(child) => child,
        Err(e) => return Err(NamespaceError::Refused(e.to_string())),
    };
    let status = rustix::process::waitid(
        rustix::process::WaitId::PidFd(std::os::fd::AsFd::as_fd(&pidfd)),
        rustix::process::WaitIdOptions::EXITED,
    );
    match status {
        Ok(Some(s)) if s.exit_status() == Some(0) => Ok(()),
        Ok(_) => Err(NamespaceError::ProbeFailed),
        Err(e) => Err(NamespaceError::Refused(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Support {
        Support {
            landlock_abi: 7,
            namespaces: Ok(()),
            seccomp: true,
            pids_cgroup: None,
            root: true,
        }
    }

    #[test]
    fn a_kernel_without_a_layer_is_refused_naming_it() {
        let cases = [
            (
                Support {
                    landlock_abi: 0,
                    ..full()
                },
                "Landlock",
            ),
            (
                Support {
                    landlock_abi: 4,
                    ..full()
                },
                "ABI 6",
            ),
            (
                Support {
                    namespaces: Err(NamespaceError::Refused("EPERM".into())),
                    ..full()
                },
                "namespaces",
            ),
            (
                Support {
                    seccomp: false,
                    ..full()
                },
                "seccomp",
            ),
            (full(), "number of processes"),
        ];
        for (support, named) in cases {
            let err = support.admit(ConfinementMode::Full).unwrap_err();
            assert!(err.to_string().contains(named), "{err}");
        }
    }

    #[test]
    fn only_a_named_weaker_mode_runs_root_without_a_process_bound() {
        let root = full();
        assert_eq!(
            root.admit(ConfinementMode::UnboundedProcesses).unwrap(),
            ProcessBound::Unbounded
        );
        let user = Support {
            root: false,
            ..full()
        };
        assert_eq!(
            user.admit(ConfinementMode::Full).unwrap(),
            ProcessBound::Rlimit
        );
        let cgroup = Support {
            pids_cgroup: Some("/x".into()),
            ..full()
        };
        assert_eq!(
            cgroup.admit(ConfinementMode::Full).unwrap(),
            ProcessBound::Cgroup
        );
    }
}
