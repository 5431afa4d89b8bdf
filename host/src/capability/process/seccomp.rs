//! The seccomp filter every confined process runs under, compiled to BPF
//! once, in the parent.
//!
//! Invariant: the denied calls fail with `EPERM` (never kill), so tools see
//! an ordinary error: sockets other than `AF_UNIX`, namespace and mount
//! calls, tracing, kernel keyrings, BPF, io_uring, userfaultfd, module and
//! kexec loading, other processes' memory, and clone flags that make
//! namespaces. `clone3` fails with `ENOSYS`, since its flags cannot be
//! inspected, so the C library falls back to `clone`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::seccomp_search;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Calls denied outright.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_syslog,
    libc::SYS_vhangup,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_lookup_dcookie,
    libc::SYS_pidfd_getfd,
    libc::SYS_fanotify_init,
];

/// Clone flags that create namespaces.
const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// Why the seccomp filter could not be compiled, in seccompiler's words.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub(super) struct FilterError(String);

/// The compiled programs, in the order they are installed, or why they
/// could not be built.
pub(super) fn programs() -> Result<&'static [BpfProgram], FilterError> {
    static PROGRAMS: OnceLock<Result<Vec<BpfProgram>, FilterError>> = OnceLock::new();
    PROGRAMS.get_or_init(build).as_deref().map_err(Clone::clone)
}

/// One program: seccompiler's chain with a search in front of it that also
/// answers `clone3` (see `seccomp_search`).
fn build() -> Result<Vec<BpfProgram>, FilterError> {
    let (chain, listed) = chain().map_err(|e| FilterError(e.to_string()))?;
    let clone3 = libc::SYS_clone3 as u32;
    let searched = seccomp_search::with_search(chain, &listed, clone3)
        .map_err(|e| FilterError(e.to_string()))?;
    Ok(vec![searched])
}

/// seccompiler's program for the denied calls, and the numbers it lists.
fn chain() -> Result<(BpfProgram, Vec<u32>), seccompiler::BackendError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| seccompiler::BackendError::InvalidTargetArch(std::env::consts::ARCH.into()))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?;
    rules.insert(
        libc::SYS_socket,
        vec![SeccompRule::new(vec![not_unix.clone()])?],
    );
    rules.insert(
        libc::SYS_socketpair,
        vec![SeccompRule::new(vec![not_unix])?],
    );
    let mut clone_rules = Vec::new();
    for &flag in NAMESPACE_FLAGS {
        let cond = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?;
        clone_rules.push(SeccompRule::new(vec![cond])?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    let listed = rules.keys().map(|&nr| nr as u32).collect();
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let deny = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch)?;
    Ok((deny.try_into()?, listed))
}

#[cfg(test)]
mod tests {
    use super::super::seccomp_search::tests::eval;

    #[test]
    fn the_filter_compiles_for_this_architecture() {
        let programs = super::programs().unwrap();
        assert_eq!(programs.len(), 1);
        assert!(!programs[0].is_empty() && programs[0].len() < u16::MAX as usize);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_searched_filter_decides_every_call_as_the_chain_and_the_clone3_filter_did() {
        const X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
        const I386: u32 = 3 | 0x4000_0000;
        let (chain, listed) = super::chain().unwrap();
        let searched = &super::programs().unwrap()[0];
        assert!(searched.len() > chain.len());
        let mut firsts: Vec<u64> = vec![0, 1, 2, 10, 16, u64::MAX, 1 << 32, (1 << 32) | 1];
        for &flag in super::NAMESPACE_FLAGS {
            firsts.extend([flag, flag | libc::SIGCHLD as u64, !flag]);
        }
        let mut numbers: Vec<u32> = (0..1024).collect();
        numbers.extend(listed.iter().map(|nr| nr | 0x4000_0000));
        numbers.extend([u32::MAX, 0x4000_0000]);
        let mut denied = 0;
        for nr in numbers {
            for arch in [X86_64, I386] {
                for &first in &firsts {
                    let args = [first, 0, 0, 0, 0, 0];
                    let native = arch == X86_64;
                    let enosys = native && (nr == libc::SYS_clone3 as u32 || nr >= 0x4000_0000);
                    let expected = match enosys {
                        true => 0x0005_0000 | libc::ENOSYS as u32,
                        false => eval(&chain, nr, arch, args),
                    };
                    let got = eval(searched, nr, arch, args);
                    assert_eq!(got, expected, "nr {nr} arch {arch:#x} arg0 {first:#x}");
                    denied += usize::from(got != 0x7fff_0000);
                }
            }
        }
        assert!(denied > 0);
        // The x32 number of a denied call is refused too.
        let x32_socket = libc::SYS_socket as u32 | 0x4000_0000;
        let args = [libc::AF_INET as u64, 0, 0, 0, 0, 0];
        assert_eq!(
            eval(searched, x32_socket, X86_64, args),
            0x0005_0000 | libc::ENOSYS as u32
        );
    }
}
