//! Why a policy could not be loaded: every error names the file, the line
//! and the column, and says what to change.

use std::ops::Range;
use std::path::PathBuf;

/// A policy that cannot be used. Warden never runs under a policy it could
/// not fully parse and validate.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The policy file could not be read.
    #[error("cannot read policy file {}: {source}; check the path and its permissions", path.display())]
    Read {
        /// The file that was asked for.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The text is not TOML, or does not have the shape of a policy
    /// (unknown keys, wrong types, missing fields, bad values).
    #[error("{origin}:{line}:{col}: {message}")]
    Syntax {
        /// Where the text came from (a file name).
        origin: String,
        /// 1-based line of the offending text.
        line: usize,
        /// 1-based column (in characters) of the offending text.
        col: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The policy is well-formed TOML but cannot be used as written: a bad
    /// glob or regex, a duplicate rule name, an unreachable or contradictory
    /// rule.
    #[error("{origin}:{line}:{col}: {message}")]
    Invalid {
        /// Where the text came from (a file name).
        origin: String,
        /// 1-based line of the offending text.
        line: usize,
        /// 1-based column (in characters) of the offending text.
        col: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Why the patterns of a policy's rules, each valid on its own, cannot be
/// compiled together.
#[derive(Debug, thiserror::Error)]
pub(super) enum PatternError {
    /// A glob that does not compile.
    #[error("{0}")]
    Glob(#[from] globset::Error),
    /// A glob in a rule's `writes` that does not compile.
    #[error("{}; fix the pattern", .0.kind())]
    WriteGlob(globset::Error),
    /// The combined regex set of one argument is too large.
    #[error("{0}; split the policy's argument matchers or simplify them")]
    TooLarge(#[from] regex::Error),
}

/// Turns byte spans of one policy text into located errors.
pub(super) struct Locator<'a> {
    text: &'a str,
    origin: &'a str,
}

impl<'a> Locator<'a> {
    pub(super) fn new(text: &'a str, origin: &'a str) -> Self {
        Locator { text, origin }
    }

    /// 1-based line and column of byte `offset` (clamped to the text).
    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// A TOML or shape error, located by toml's own span.
    pub(super) fn syntax(&self, err: &toml::de::Error) -> PolicyError {
        let (line, col) = self.line_col(err.span().map_or(0, |r| r.start));
        let mut message = err.message().trim_end().to_string();
        if message.starts_with("unknown field") {
            message.push_str("; remove it or fix its spelling (see policies/README.md)");
        }
        PolicyError::Syntax {
            origin: self.origin.to_string(),
            line,
            col,
            message,
        }
    }

    /// A validation error at `span`.
    pub(super) fn invalid(&self, span: Range<usize>, message: String) -> PolicyError {
        let (line, col) = self.line_col(span.start);
        PolicyError::Invalid {
            origin: self.origin.to_string(),
            line,
            col,
            message,
        }
    }

    /// The line `span` starts on, to point at a related definition.
    pub(super) fn line_of(&self, span: &Range<usize>) -> usize {
        self.line_col(span.start).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let loc = Locator::new("ab\ncdé f\n", "p.toml");
        assert_eq!(loc.line_col(0), (1, 1));
        assert_eq!(loc.line_col(3), (2, 1));
        assert_eq!(loc.line_col(8), (2, 5));
        assert_eq!(loc.line_col(999), (3, 1));
    }
}
