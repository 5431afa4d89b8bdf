//! The `warden` binary's start-up layout, opt-in for release packaging
//! (`WARDEN_STARTUP_LAYOUT=1`): on Linux, `host/link/startup.ld` then puts
//! the code a cold `warden tool call` runs together at the front of the
//! text. Its names come from a profile of one toolchain; as the code or the
//! toolchain drifts from it they stop matching and the section shrinks, so
//! its size is checked only in a build that asked for the layout. Regenerate
//! it with `python3 host/link/profile_startup.py`.

#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// A cold `read_file` call ran 1.9 MB of the binary's code when the script
/// was made; half of that still matching means the layout has rotted.
const MIN_STARTUP_BYTES: u64 = 1 << 20;

#[derive(Clone, Copy, Debug)]
struct Section {
    addr: u64,
    size: u64,
}

/// The section headers of a 64-bit little-endian ELF file, by name.
fn elf_sections(path: &str) -> HashMap<String, Section> {
    let mut file = File::open(path).unwrap();
    let mut header = [0u8; 64];
    file.read_exact(&mut header).unwrap();
    assert_eq!(
        &header[..6],
        b"\x7fELF\x02\x01",
        "{path}: not a 64-bit LE ELF"
    );
    let u16_at = |b: &[u8], at: usize| u64::from(u16::from_le_bytes([b[at], b[at + 1]]));
    let u32_at =
        |b: &[u8], at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().unwrap()));
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let (shoff, shentsize, shnum, shstrndx) = (
        u64_at(&header, 0x28),
        u16_at(&header, 0x3a),
        u16_at(&header, 0x3c),
        u16_at(&header, 0x3e),
    );
    let mut table = vec![0u8; usize::try_from(shentsize * shnum).unwrap()];
    file.seek(SeekFrom::Start(shoff)).unwrap();
    file.read_exact(&mut table).unwrap();
    let entry = |i: u64| &table[usize::try_from(i * shentsize).unwrap()..][..64];
    let names_header = entry(shstrndx);
    let mut names = vec![0u8; usize::try_from(u64_at(names_header, 0x20)).unwrap()];
    file.seek(SeekFrom::Start(u64_at(names_header, 0x18)))
        .unwrap();
    file.read_exact(&mut names).unwrap();
    (0..shnum)
        .map(|i| {
            let e = entry(i);
            let start = usize::try_from(u32_at(e, 0)).unwrap();
            let len = names[start..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8_lossy(&names[start..start + len]).into_owned();
            let section = Section {
                addr: u64_at(e, 0x10),
                size: u64_at(e, 0x20),
            };
            (name, section)
        })
        .collect()
}

/// Whether `host/build.rs` linked the binary with the layout.
fn layout_linked() -> bool {
    env!("WARDEN_STARTUP_LAYOUT_LINKED") == "1"
}

#[test]
fn the_default_build_does_not_depend_on_the_layout() {
    if layout_linked() {
        return;
    }
    let sections = elf_sections(env!("CARGO_BIN_EXE_warden"));
    assert!(
        !sections.contains_key(".text.warden_start"),
        "the binary was linked with host/link/startup.ld without WARDEN_STARTUP_LAYOUT=1"
    );
}

#[test]
fn with_the_layout_the_code_a_cold_call_runs_is_laid_out_together_before_the_rest() {
    if !layout_linked() {
        return;
    }
    let sections = elf_sections(env!("CARGO_BIN_EXE_warden"));
    let startup = sections
        .get(".text.warden_start")
        .unwrap_or_else(|| panic!("no .text.warden_start section: was host/link/startup.ld used?"));
    let text = sections[".text"];
    assert!(
        startup.size >= MIN_STARTUP_BYTES,
        "only {} bytes of code match host/link/startup.ld: regenerate it",
        startup.size
    );
    assert!(
        startup.addr + startup.size <= text.addr,
        "{startup:?} is not before .text {text:?}"
    );
}
