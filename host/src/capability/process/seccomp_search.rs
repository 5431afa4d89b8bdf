//! A binary search over the listed call numbers, put in front of
//! seccompiler's linear chain, so that the filter costs little to install:
//! the kernel emulates a new filter for every call number to build its
//! allow cache, and a linear chain is walked whole for every number it
//! does not list.
//!
//! Invariant: the program decides every call exactly as the chain and the
//! `clone3` filter it replaces would together (checked by evaluating both
//! for every number and a set of arguments in the tests): a number the
//! chain does not list is allowed, `clone3` gets `ENOSYS`, every listed
//! number goes on into the chain unchanged; and a number at or above the
//! x32 bit, which the chain would allow, gets `ENOSYS` (an x32 `socket`
//! must not pass where the native one is denied).

use seccompiler::{BpfProgram, sock_filter};

/// Why the search could not be laid out over seccompiler's program.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot lay out the seccomp search: {0}")]
pub(super) struct SearchError(&'static str);

// From <linux/bpf_common.h>: class | size | mode, class | op | source.
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP: u16 = 0x05;
const BPF_JMP_JA: u16 = BPF_JMP;
const BPF_JMP_JEQ_K: u16 = BPF_JMP | 0x10;
const BPF_JMP_JGE_K: u16 = BPF_JMP | 0x30;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// The offset of the call number in `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
/// `__X32_SYSCALL_BIT`: x86-64's x32 calls are the native numbers with it.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Where an instruction of the search goes.
#[derive(Clone, Copy)]
enum To {
    Next,
    At(usize),
    /// Into the chain (the first instruction after the search).
    Chain,
    /// The `ENOSYS` return (the search's last instruction).
    Enosys,
}

struct Insn {
    code: u16,
    k: u32,
    jt: To,
    jf: To,
}

/// `chain` (seccompiler's program) with a search over `listed` (the numbers
/// it has rules for) inserted after its load of the call number, and
/// `enosys` (`clone3`) answered with `ENOSYS` there.
pub(super) fn with_search(
    chain: BpfProgram,
    listed: &[u32],
    enosys: u32,
) -> Result<BpfProgram, SearchError> {
    let bad = SearchError;
    let load = chain
        .iter()
        .position(|i| i.code == BPF_LD_W_ABS && i.k == NR_OFFSET)
        .ok_or_else(|| bad("no load of the call number"))?;
    // Nothing before the load may jump past it: the search goes there.
    for (at, insn) in chain.iter().enumerate().take(load) {
        let far = match insn.code & 0x07 {
            BPF_JMP if insn.code == BPF_JMP_JA => at + 1 + insn.k as usize,
            BPF_JMP => at + 1 + usize::from(insn.jt.max(insn.jf)),
            _ => at,
        };
        if far > load {
            return Err(bad("the prologue jumps past the load"));
        }
    }
    let mut keys: Vec<(u32, To)> = listed.iter().map(|&nr| (nr, To::Chain)).collect();
    keys.push((enosys, To::Enosys));
    keys.sort_by_key(|(nr, _)| *nr);
    keys.dedup_by_key(|(nr, _)| *nr);
    // x32 calls (the number with bit 30 set, same audit arch) would pass
    // a filter that lists only the native numbers: none is allowed.
    let mut search = vec![Insn {
        code: BPF_JMP_JGE_K,
        k: X32_SYSCALL_BIT,
        jt: To::Enosys,
        jf: To::Next,
    }];
    node(&keys, &mut search);
    search.push(Insn {
        code: BPF_RET_K,
        k: SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        jt: To::Next,
        jf: To::Next,
    });
    let end = search.len();
    let offset = |at: usize, to: To| -> Result<u8, SearchError> {
        let target = match to {
            To::Next => at + 1,
            To::At(t) => t,
            To::Chain => end,
            To::Enosys => end - 1,
        };
        u8::try_from(target - at - 1).map_err(|_| bad("a jump is too long"))
    };
    let mut program: BpfProgram = chain[..=load].to_vec();
    for (at, insn) in search.iter().enumerate() {
        program.push(sock_filter {
            code: insn.code,
            jt: offset(at, insn.jt)?,
            jf: offset(at, insn.jf)?,
            k: insn.k,
        });
    }
    program.extend_from_slice(&chain[load + 1..]);
    Ok(program)
}

/// Emits the search over the sorted `keys`: small ranges as a run of
/// comparisons ending in "allow", larger ones split in two.
fn node(keys: &[(u32, To)], out: &mut Vec<Insn>) {
    if keys.len() <= 3 {
        for &(nr, to) in keys {
            out.push(Insn {
                code: BPF_JMP_JEQ_K,
                k: nr,
                jt: to,
                jf: To::Next,
            });
        }
        out.push(Insn {
            code: BPF_RET_K,
            k: SECCOMP_RET_ALLOW,
            jt: To::Next,
            jf: To::Next,
        });
        return;
    }
    let (low, high) = keys.split_at(keys.len() / 2);
    let split = out.len();
    out.push(Insn {
        code: BPF_JMP_JGE_K,
        k: high[0].0,
        jt: To::Next,
        jf: To::Next,
    });
    node(low, out);
    out[split].jt = To::At(out.len());
    node(high, out);
}

#[cfg(test)]
pub(super) mod tests {
    use seccompiler::sock_filter;

    /// Runs a classic BPF seccomp program over `struct seccomp_data`
    /// (`nr`, `arch`, `args`), for the instructions seccompiler and the
    /// search emit; panics on any other.
    pub(in super::super) fn eval(
        program: &[sock_filter],
        nr: u32,
        arch: u32,
        args: [u64; 6],
    ) -> u32 {
        let word = |offset: u32| -> u32 {
            match offset {
                0 => nr,
                4 => arch,
                16..=63 => {
                    let arg = args[(offset as usize - 16) / 8];
                    match offset % 8 {
                        0 => arg as u32,
                        _ => (arg >> 32) as u32,
                    }
                }
                other => panic!("load of offset {other}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            pc += 1;
            match i.code {
                0x20 => acc = word(i.k),
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x15 | 0x25 | 0x35 | 0x45 => {
                    let taken = match i.code {
                        0x15 => acc == i.k,
                        0x25 => acc > i.k,
                        0x35 => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                0x06 => return i.k,
                other => panic!("instruction {other:#x}"),
            }
        }
    }
}
