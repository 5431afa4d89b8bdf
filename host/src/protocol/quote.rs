//! Quoting untrusted text (a model's arguments, a guest's error) in
//! messages and records: a prefix cut on a character boundary, with a
//! marker giving the whole size.
//!
//! Invariant: an excerpt of `text` is never longer than its `max` plus a
//! short marker, whatever `text` holds.

use std::borrow::Cow;

/// The longest prefix of a bad value an error message quotes.
pub const QUOTE_BYTES: usize = 200;

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// `text` if it is at most `max` bytes; else its first `max` bytes (cut on
/// a character boundary) and `… [N bytes in all]`.
pub fn excerpt(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!(
        "{}… [{} bytes in all]",
        prefix(text, max),
        text.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_cuts_on_a_character_boundary_and_says_how_long_the_text_was() {
        assert_eq!(excerpt("short", 10), "short");
        let text = "é".repeat(1000);
        let cut = excerpt(&text, 201);
        assert_eq!(cut, format!("{}… [2000 bytes in all]", "é".repeat(100)));
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("", 5), "");
    }
}
