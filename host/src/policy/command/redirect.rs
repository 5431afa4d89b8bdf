//! A part's redirections.

use super::word::Word;

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    /// Reads a file (`<`, here-documents and here-strings are not kept).
    Read,
    /// Writes a file (`>`, `>>`, `>|`, `&>`, `&>>`, `>&FILE`).
    Write,
    /// Duplicates or closes a descriptor (`2>&1`, `>&-`).
    Duplicate,
}

/// One redirection of a part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// Read, write or duplicate.
    pub kind: RedirectKind,
    /// The operator as written, with its descriptor (`2>`).
    pub how: String,
    /// The file (or descriptor) it names.
    pub target: Word,
}
