//! Options that turn a read-only program into a writer or an executor,
//! program by program: the one list, mirrored in `policies/README.md`.
//!
//! Invariant: for every program listed here, each option that writes a
//! file or runs another program yields a hazard; an option written as its
//! long form, with `=value`, or inside a cluster of short flags counts the
//! same. Checks err towards a hazard.

use super::hazard::{Hazard, write_to};
use super::word::Word;

/// Add the hazards of `args`, the arguments of `program` (a basename).
/// Returns whether `program` is one whose options are checked.
pub(crate) fn program_options(program: &str, args: &[Word], out: &mut Vec<Hazard>) -> bool {
    let mut risky =
        |k: usize, effect: &'static str| out.push(risky_option(program, args, k, effect));
    let text = |k: usize| args.get(k).map_or("", |w| w.text.as_str());
    match program {
        "find" => {
            for k in 0..args.len() {
                match text(k) {
                    "-exec" | "-execdir" | "-ok" | "-okdir" => {
                        risky(k, "runs a command for each file")
                    }
                    "-delete" => risky(k, "deletes files"),
                    "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                        risky(k, "writes its output to a file")
                    }
                    _ => {}
                }
            }
        }
        "fd" | "fdfind" => {
            for k in 0..args.len() {
                let t = text(k);
                if matches!(t, "-x" | "-X") || t.starts_with("--exec") {
                    risky(k, "runs a command for each file");
                }
            }
        }
        "rg" => {
            for k in 0..args.len() {
                let t = text(k);
                if t == "--pre" || t.starts_with("--pre=") {
                    risky(k, "runs a program on every file searched");
                }
            }
        }
        "git" => git(args, out),
        "sed" | "gsed" => sed(args, &mut risky),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args, &mut risky),
        "cargo" => {
            for k in 0..args.len() {
                let t = text(k);
                if t == "--config" || t.starts_with("--config=") {
                    risky(k, "sets configuration, which can name programs to run");
                }
            }
        }
        "tar" | "bsdtar" => {
            for k in 0..args.len() {
                let t = text(k);
                let cluster = t.strip_prefix('-').filter(|c| !c.starts_with('-'));
                let old_style = k == 0 && !t.starts_with('-');
                let executes = [
                    "--to-command",
                    "--use-compress-program",
                    "--checkpoint-action",
                    "--info-script",
                    "--new-volume-script",
                    "--rsh-command",
                ]
                .iter()
                .any(|o| t.starts_with(o))
                    || cluster
                        .or(old_style.then_some(t))
                        .is_some_and(|c| c.contains(['I', 'F']));
                if executes {
                    risky(k, "runs a program");
                }
            }
        }
        "printf" => {
            if args.iter().any(|w| w.text == "-v") {
                out.push(Hazard::ChangesShell("`printf -v`".into()));
            }
        }
        "sort" => return sort(args, out),
        "tee" => return tee(args, out),
        _ => return false,
    }
    true
}

/// The hazard of option `args[k]` of `program`.
fn risky_option(program: &str, args: &[Word], k: usize, effect: &'static str) -> Hazard {
    Hazard::RiskyOption {
        program: program.to_string(),
        option: args.get(k).map(|w| w.text.clone()).unwrap_or_default(),
        index: k + 1,
        effect,
    }
}

/// `git`: configuration and programs set on the command line, before the
/// subcommand (`-c`, `--config-env`, `--exec-path=`), and options after it
/// that run a program or write a file.
fn git(args: &[Word], out: &mut Vec<Hazard>) {
    let risky = |k: usize, effect: &'static str| risky_option("git", args, k, effect);
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if !t.starts_with('-') {
            break;
        }
        match t {
            "-c" | "--config-env" => {
                out.push(risky(
                    k,
                    "sets configuration, which can name programs to run",
                ));
                k += 1;
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => k += 1,
            _ if t.starts_with("--config-env=") || t.starts_with("--exec-path=") => {
                out.push(risky(
                    k,
                    "sets configuration, which can name programs to run",
                ));
            }
            _ => {}
        }
        k += 1;
    }
    for k in k..args.len() {
        let t = args.get(k).map_or("", |w| w.text.as_str());
        if t == "--output" {
            out.push(write_to(args.get(k + 1), "`git --output`"));
        } else if let Some(file) = t.strip_prefix("--output=") {
            out.push(write_to(Some(&literal(file)), "`git --output`"));
        } else if t.starts_with("--output") {
            out.push(risky(k, "writes files"));
        } else if t.starts_with("--upload-pack")
            || t.starts_with("--receive-pack")
            || t.starts_with("--exec=")
            || t == "--exec"
            || t.starts_with("--open-files-in-pager")
            || t.starts_with("-O")
            || t.starts_with("--ext-diff")
        {
            out.push(risky(k, "runs a program"));
        }
    }
}

/// `sed`: in-place edits, scripts read from files, and scripts that may
/// write (`w`, `W`) or run commands (`e`). Any of those letters in a
/// script counts, unless `--sandbox` forbids them.
fn sed(args: &[Word], risky: &mut dyn FnMut(usize, &'static str)) {
    let text = |k: usize| args.get(k).map_or("", |w| w.text.as_str());
    let mut scripts: Vec<(usize, &str)> = Vec::new();
    let mut explicit = false;
    let mut sandbox = false;
    let mut operands = Vec::new();
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if t == "--" {
            operands.extend(k + 1..args.len());
            break;
        } else if t == "--sandbox" {
            sandbox = true;
        } else if t.starts_with("--in-place") {
            risky(k, "edits files in place");
        } else if t == "--expression" {
            explicit = true;
            scripts.push((k + 1, text(k + 1)));
            k += 1;
        } else if let Some(script) = t.strip_prefix("--expression=") {
            explicit = true;
            scripts.push((k, script));
        } else if t.starts_with("--file") {
            risky(k, "reads a script that can write files or run commands");
            explicit = true;
            if t == "--file" {
                k += 1;
            }
        } else if t == "--line-length" {
            k += 1;
        } else if t.starts_with("--") {
        } else if let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (i, c) in cluster.char_indices() {
                let attached = i + 1 < cluster.len();
                match c {
                    'i' => {
                        risky(k, "edits files in place");
                        break;
                    }
                    'f' => {
                        risky(k, "reads a script that can write files or run commands");
                        explicit = true;
                        if !attached {
                            k += 1;
                        }
                        break;
                    }
                    'e' => {
                        explicit = true;
                        if attached {
                            scripts.push((k, &cluster[i + 1..]));
                        } else {
                            scripts.push((k + 1, text(k + 1)));
                            k += 1;
                        }
                        break;
                    }
                    'l' => {
                        if !attached {
                            k += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else {
            operands.push(k);
        }
        k += 1;
    }
    if !explicit && let Some(&k) = operands.first() {
        scripts.push((k, text(k)));
    }
    if sandbox {
        return;
    }
    for (k, script) in scripts {
        if script.contains(['w', 'W', 'e']) {
            risky(k, "may write files (`w`) or run commands (`e`)");
        }
    }
}

/// `awk`: programs read from files or loaded as extensions, and programs
/// that may write (`>`), pipe (`|`) or run commands (`system`).
fn awk(args: &[Word], risky: &mut dyn FnMut(usize, &'static str)) {
    let mut program = None;
    let mut from_file = false;
    let mut k = 0;
    while let Some(w) = args.get(k) {
        let t = w.text.as_str();
        if t == "--" {
            k += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        match t {
            "-F" | "-v" | "--field-separator" | "--assign" => k += 1,
            "-f" | "--file" | "-i" | "--include" | "-l" | "--load" | "-E" | "--exec" => {
                from_file = true;
                risky(k, "reads a program that can write files or run commands");
                k += 1;
            }
            "-e" | "--source" => {
                program = Some(k + 1);
                k += 1;
            }
            _ if t.starts_with("-f") || t.starts_with("--file=") || t.starts_with("--load=") => {
                from_file = true;
                risky(k, "reads a program that can write files or run commands");
            }
            _ => {}
        }
        k += 1;
    }
    if program.is_none() && !from_file {
        program = Some(k);
    }
    if let Some(p) = program
        && args
            .get(p)
            .is_some_and(|w| w.text.contains("system") || w.text.contains(['|', '>', '@']))
    {
        risky(p, "may write files (`>`) or run commands (`system`, `|`)");
    }
}

/// `sort -o FILE` writes FILE; `--compress-program` runs a program.
fn sort(args: &[Word], out: &mut Vec<Hazard>) -> bool {
    for (k, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if t == "-o" || t == "--output" {
            out.push(write_to(args.get(k + 1), "`sort -o`"));
        } else if let Some(file) = t.strip_prefix("--output=") {
            out.push(write_to(Some(&literal(file)), "`sort -o`"));
        } else if let Some(file) = t.strip_prefix("-o") {
            out.push(write_to(Some(&literal(file)), "`sort -o`"));
        } else if t.starts_with("--compress-program") {
            out.push(Hazard::RiskyOption {
                program: "sort".into(),
                option: t.to_string(),
                index: k + 1,
                effect: "runs a program",
            });
        } else if t.starts_with('-') && !t.starts_with("--") && t.contains('o') {
            out.push(Hazard::WriteUnknown("`sort -o`".into()));
        }
    }
    true
}

/// `tee FILE…` writes every FILE.
fn tee(args: &[Word], out: &mut Vec<Hazard>) -> bool {
    let mut options = true;
    for w in args {
        let t = w.text.as_str();
        if options && t == "--" {
            options = false;
        } else if options && t.starts_with('-') && t.len() > 1 {
        } else {
            out.push(write_to(Some(w), "`tee`"));
        }
    }
    true
}

fn literal(text: &str) -> Word {
    Word {
        text: text.to_string(),
        literal: true,
    }
}
