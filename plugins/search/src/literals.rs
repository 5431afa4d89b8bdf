//! The literals every match of a pattern contains, for the host's
//! prefilter ([`warden_sdk::walk::Filter`]).
//!
//! Invariant: a file that holds none of the literals returned has no match.
//! They are the pattern's prefixes (every match begins with one) or its
//! suffixes (every match ends with one), as `regex-syntax` extracts them
//! from the same syntax tree the regex compiles; a pattern whose matches
//! may begin and end with anything, or with the empty string, gets none.

use regex_syntax::ParserBuilder;
use regex_syntax::hir::Hir;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

/// The most needles the host takes in one filter.
const MAX_NEEDLES: usize = 64;
/// The longest needle the host takes.
const MAX_NEEDLE_LEN: usize = 256;

/// Literals one of which every match of `pattern` contains, parsed as the
/// search's regex is; `None` when there are none to require.
pub(crate) fn required(pattern: &str, case_insensitive: bool) -> Option<Vec<Vec<u8>>> {
    let hir = ParserBuilder::new()
        .utf8(false)
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(pattern)
        .ok()?;
    let prefixes = needles(&hir, ExtractKind::Prefix);
    let suffixes = needles(&hir, ExtractKind::Suffix);
    // The set whose shortest needle is longer rules out more files.
    let shortest = |set: &Vec<Vec<u8>>| set.iter().map(Vec::len).min().unwrap_or(0);
    match (prefixes, suffixes) {
        (Some(p), Some(s)) if shortest(&s) > shortest(&p) => Some(s),
        (Some(p), _) => Some(p),
        (None, s) => s,
    }
}

/// The `kind` literals of `hir` as at most [`MAX_NEEDLES`] non-empty
/// needles, cut shorter (each still a prefix or suffix of every match)
/// when there are too many.
fn needles(hir: &Hir, kind: ExtractKind) -> Option<Vec<Vec<u8>>> {
    let seq = Extractor::new().kind(kind.clone()).extract(hir);
    let longest = seq.max_literal_len()?;
    for keep in (1..=longest.min(MAX_NEEDLE_LEN)).rev() {
        let mut cut = seq.clone();
        if kind.is_suffix() {
            cut.keep_last_bytes(keep);
        } else {
            cut.keep_first_bytes(keep);
        }
        cut.dedup();
        let lits = cut.literals()?;
        if lits.len() <= MAX_NEEDLES {
            if lits.is_empty() || lits.iter().any(|l| l.is_empty()) {
                return None;
            }
            return Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::bytes::RegexBuilder;

    fn set(items: &[&str]) -> Option<Vec<Vec<u8>>> {
        Some(items.iter().map(|s| s.as_bytes().to_vec()).collect())
    }

    #[test]
    fn literals_and_their_variants_are_required() {
        assert_eq!(
            required("compatibility_hash", false),
            set(&["compatibility_hash"])
        );
        assert_eq!(required("foo|bar", false), set(&["foo", "bar"]));
        // The longer suffix rules out more than the prefix `fn `.
        assert_eq!(
            required(r"fn \w+_unchecked\(", false),
            set(&["_unchecked("])
        );
        let folded = required("ab", true).unwrap();
        assert_eq!(folded.len(), 4, "{folded:?}");
    }

    #[test]
    fn patterns_that_may_match_anything_require_nothing() {
        for pattern in [
            r"\d{3}",
            r"(?:foo)|.\A",
            "a*",
            "^",
            "",
            r"\w+",
            "(?i)[a-z]+",
        ] {
            assert_eq!(required(pattern, false), None, "{pattern}");
        }
    }

    /// Stops a prefilter that would skip a file holding a match: every
    /// match found in these texts holds one of the required literals.
    #[test]
    fn every_match_holds_a_required_literal() {
        let texts = [
            "temperature 300 \u{212A} kelvin\n",
            "STRASSE straße Straße\n",
            "fn get_unchecked(i) fn x_unchecked( fn_unchecked(\n",
            "UNREACHABLE unreachable Unreachable!\r\n",
            "ſtop stop STOP\n",
        ];
        let patterns = [
            ("kelvin", true),
            ("k", true),
            ("stop", true),
            ("straße", true),
            (r"fn \w+_unchecked\(", false),
            ("unreachable!", true),
            ("(?i)unreach|zz", false),
            (r"\bstop\b|kel", true),
        ];
        for (pattern, ci) in patterns {
            let needles = required(pattern, ci).unwrap_or_else(|| panic!("{pattern}"));
            let regex = RegexBuilder::new(pattern)
                .case_insensitive(ci)
                .multi_line(true)
                .crlf(true)
                .build()
                .unwrap();
            for text in texts {
                for m in regex.find_iter(text.as_bytes()) {
                    let hit = m.as_bytes();
                    assert!(
                        needles.iter().any(|n| hit.windows(n.len()).any(|w| w == n)),
                        "{pattern}: match {:?} holds none of {needles:?}",
                        String::from_utf8_lossy(hit)
                    );
                }
            }
        }
    }
}
