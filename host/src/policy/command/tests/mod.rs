//! Unit tests of command-line parsing: the parts found, their words after
//! quote removal, and the hazards of each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile;
mod options;
mod parts;

use super::hazard::Hazard;
use super::parse::{Part, parse};

/// Each part's words, a `?` before a word known only at run time; opaque
/// parts (no words) are left out.
fn words(cmd: &str) -> Vec<String> {
    parse(cmd)
        .iter()
        .filter(|p| !p.words.is_empty())
        .map(|p| {
            p.words
                .iter()
                .map(|w| {
                    if w.literal {
                        w.text.clone()
                    } else {
                        format!("?{}", w.text)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The words of the command each part really runs (wrappers looked
/// through).
fn effective(part: &Part) -> String {
    let start = part.analysis.views.last().copied().unwrap_or(0);
    part.words
        .get(start..)
        .unwrap_or_default()
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every hazard of every part.
fn hazards(cmd: &str) -> Vec<Hazard> {
    parse(cmd)
        .into_iter()
        .flat_map(|p| p.analysis.hazards)
        .collect()
}

/// Whether some part of `cmd` is opaque: no rule could allow it.
fn opaque(cmd: &str) -> bool {
    hazards(cmd).iter().any(Hazard::opaque)
}

/// The options flagged as risky in `cmd`.
fn risky(cmd: &str) -> Vec<String> {
    hazards(cmd)
        .into_iter()
        .filter_map(|h| match h {
            Hazard::RiskyOption { option, .. } => Some(option),
            _ => None,
        })
        .collect()
}

/// The files `cmd` writes, as `how target`.
fn writes(cmd: &str) -> Vec<String> {
    hazards(cmd)
        .into_iter()
        .filter_map(|h| match h {
            Hazard::Write { target, how } => Some(format!("{how} {target}")),
            Hazard::WriteUnknown(how) => Some(format!("{how} ?")),
            _ => None,
        })
        .collect()
}
