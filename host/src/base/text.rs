//! Cutting text the host keeps or quotes (from a guest, a model, a
//! client): always on a character boundary, with a marker when something
//! was cut.
//!
//! Invariants: a kept or quoted string is never longer than its `max` plus
//! a short marker, whatever the original held; a kept string is copied
//! when cut, so it never holds on to the allocation of a larger one.

use std::borrow::Cow;

/// The longest prefix of a bad value an error message quotes.
pub const QUOTE_BYTES: usize = 200;

/// The largest index `<= max` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    &text[..floor_char_boundary(text, max)]
}

/// `s` cut to at most `max` bytes, in a string that allocates only what it
/// holds.
pub fn cut_to(s: &str, max: usize) -> String {
    prefix(s, max).to_owned()
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

/// `s` as the host keeps it: whole if it fits in `max` bytes, else its first
/// `max` bytes and a marker saying how many were cut. The result never
/// holds more than `max` bytes plus the marker, whatever `s` allocated.
pub fn keep_at_most(s: String, max: usize) -> String {
    if s.len() <= max {
        if s.capacity() > s.len() {
            let mut s = s;
            s.shrink_to_fit();
            return s;
        }
        return s;
    }
    let cut = s.len() - floor_char_boundary(&s, max);
    let mut kept = String::with_capacity(max + 40);
    kept.push_str(&s[..s.len() - cut]);
    kept.push_str(&format!(" […{cut} bytes cut]"));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_string_keeps_only_what_it_holds() {
        let mut big = String::with_capacity(1 << 20);
        big.push_str(&"é".repeat(300));
        let kept = keep_at_most(big, 101);
        assert!(kept.starts_with(&"é".repeat(50)));
        assert!(kept.ends_with(" […500 bytes cut]"), "{kept}");
        assert!(kept.capacity() < 200, "{}", kept.capacity());

        let mut small = String::with_capacity(1 << 20);
        small.push_str("short");
        let kept = keep_at_most(small, 100);
        assert_eq!(kept, "short");
        assert!(kept.capacity() < 100);

        let cut = cut_to("ab€cd", 4);
        assert_eq!(cut, "ab");
        assert_eq!(cut_to("abc", 10), "abc");
    }

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
