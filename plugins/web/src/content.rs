//! What a response body is (HTML, JSON, other text, binary) and how to turn
//! its bytes into text.
//!
//! Charsets: UTF-8 (the default), US-ASCII and ISO-8859-1 (both decoded as
//! windows-1252, as browsers do) and UTF-16 are decoded exactly; any other
//! charset is decoded as UTF-8 with invalid bytes replaced, and the output
//! says so. A byte-order mark wins over any declared charset; for HTML
//! without a declared charset, a `<meta charset>` in the first 1024 bytes
//! is honoured.

/// A parsed `Content-Type` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentType {
    /// `type/subtype`, lower-cased, e.g. `text/html`.
    pub essence: String,
    /// The `charset` parameter, lower-cased, when present.
    pub charset: Option<String>,
}

impl ContentType {
    /// Parse a header value such as `text/html; charset="UTF-8"`.
    pub fn parse(value: &str) -> Option<ContentType> {
        let mut parts = value.split(';');
        let essence = parts.next()?.trim().to_ascii_lowercase();
        if !essence.contains('/') {
            return None;
        }
        let charset = parts.find_map(|p| {
            let (k, v) = p.split_once('=')?;
            k.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| v.trim().trim_matches('"').to_ascii_lowercase())
        });
        Some(ContentType { essence, charset })
    }
}

/// How a body is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML or XHTML: converted to Markdown or text.
    Html,
    /// JSON: pretty-printed.
    Json,
    /// Any other text: shown as is.
    Text,
    /// Not text: described, never shown.
    Binary,
}

/// Decide what the body is from its declared type, or from its first bytes
/// when the server declared none.
pub fn classify(ct: Option<&ContentType>, body: &[u8]) -> Kind {
    let Some(ct) = ct else {
        return sniff(body);
    };
    let e = ct.essence.as_str();
    let (top, sub) = e.split_once('/').unwrap_or((e, ""));
    match (top, sub) {
        ("text", "html") | ("application", "xhtml+xml") => Kind::Html,
        ("application" | "text", "json") => Kind::Json,
        (_, s) if s.ends_with("+json") => Kind::Json,
        ("text", _) => Kind::Text,
        (_, s) if s.ends_with("+xml") => Kind::Text,
        (
            "application",
            "xml"
            | "javascript"
            | "ecmascript"
            | "x-javascript"
            | "x-www-form-urlencoded"
            | "yaml"
            | "x-yaml"
            | "toml"
            | "x-toml"
            | "sql"
            | "graphql"
            | "x-ndjson"
            | "x-sh"
            | "x-tex"
            | "rtf"
            | "x-httpd-php",
        ) => Kind::Text,
        _ => Kind::Binary,
    }
}

/// Guess the kind of an undeclared body.
fn sniff(body: &[u8]) -> Kind {
    let head = &body[..body.len().min(1024)];
    let text = strip_bom(head);
    let start: Vec<u8> = text
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take(16)
        .map(u8::to_ascii_lowercase)
        .collect();
    if [&b"<!doctype html"[..], b"<html", b"<head", b"<body"]
        .iter()
        .any(|p| start.starts_with(p))
    {
        return Kind::Html;
    }
    if head.contains(&0) && !head.starts_with(&[0xFF, 0xFE]) && !head.starts_with(&[0xFE, 0xFF]) {
        return Kind::Binary;
    }
    match std::str::from_utf8(head) {
        Ok(_) => Kind::Text,
        // A multi-byte character cut at the sniff boundary is still text.
        Err(e) if e.error_len().is_none() => Kind::Text,
        Err(_) => Kind::Binary,
    }
}

fn strip_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(b)
}

/// The encodings decoded exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Windows1252,
    Utf16Le,
    Utf16Be,
}

/// The body as text, and a note when the charset could not be honoured.
pub fn decode(body: &[u8], kind: Kind, declared: Option<&str>) -> (String, Option<String>) {
    if let Some((enc, len)) = bom(body) {
        return (decode_with(&body[len..], enc), None);
    }
    let meta = match (kind, declared) {
        (Kind::Html, None) => meta_charset(body),
        _ => None,
    };
    let label = match kind {
        // JSON is UTF-8 (RFC 8259) whatever the header says.
        Kind::Json => None,
        _ => declared.map(str::to_string).or(meta),
    };
    match label.as_deref().map(encoding_for) {
        None => (decode_with(body, Encoding::Utf8), None),
        Some(Some(enc)) => (decode_with(body, enc), None),
        Some(None) => {
            let label = label.unwrap_or_default();
            (
                decode_with(body, Encoding::Utf8),
                Some(format!(
                    "charset `{label}` is not supported: decoded as UTF-8, invalid bytes shown as \u{fffd}"
                )),
            )
        }
    }
}

fn bom(body: &[u8]) -> Option<(Encoding, usize)> {
    match body {
        [0xEF, 0xBB, 0xBF, ..] => Some((Encoding::Utf8, 3)),
        [0xFF, 0xFE, ..] => Some((Encoding::Utf16Le, 2)),
        [0xFE, 0xFF, ..] => Some((Encoding::Utf16Be, 2)),
        _ => None,
    }
}

/// The encoding for a WHATWG charset label, if decoded exactly.
fn encoding_for(label: &str) -> Option<Encoding> {
    match label.trim() {
        "utf-8" | "utf8" | "unicode-1-1-utf-8" | "unicode11utf8" | "unicode20utf8"
        | "x-unicode20utf8" => Some(Encoding::Utf8),
        "us-ascii" | "ascii" | "ansi_x3.4-1968" | "iso-8859-1" | "iso8859-1" | "iso_8859-1"
        | "iso88591" | "latin1" | "l1" | "cp819" | "ibm819" | "iso-ir-100" | "csisolatin1"
        | "windows-1252" | "cp1252" | "x-cp1252" => Some(Encoding::Windows1252),
        "utf-16" | "utf-16le" | "ucs-2" | "unicode" | "csunicode" | "iso-10646-ucs-2" => {
            Some(Encoding::Utf16Le)
        }
        "utf-16be" | "unicodefffe" => Some(Encoding::Utf16Be),
        _ => None,
    }
}

fn decode_with(body: &[u8], enc: Encoding) -> String {
    match enc {
        Encoding::Utf8 => {
            // A character cut by the byte cap is dropped, not replaced.
            let end = match std::str::from_utf8(body) {
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                _ => body.len(),
            };
            String::from_utf8_lossy(&body[..end]).into_owned()
        }
        Encoding::Windows1252 => body.iter().map(|&b| windows_1252(b)).collect(),
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let units = body.chunks_exact(2).map(|p| match enc {
                Encoding::Utf16Le => u16::from_le_bytes([p[0], p[1]]),
                _ => u16::from_be_bytes([p[0], p[1]]),
            });
            char::decode_utf16(units)
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect()
        }
    }
}

/// Windows-1252, which browsers use for ISO-8859-1 and US-ASCII too.
fn windows_1252(b: u8) -> char {
    const HIGH: [char; 32] = [
        '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž',
        '\u{8f}', '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}',
        'ž', 'Ÿ',
    ];
    match b {
        0x80..=0x9F => HIGH[usize::from(b - 0x80)],
        _ => char::from(b),
    }
}

/// The charset of a `<meta charset=…>` or `<meta http-equiv content="…;
/// charset=…">` in the first 1024 bytes, lower-cased.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = &body[..body.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let text = String::from_utf8_lossy(&lower);
    let mut rest = text.as_ref();
    while let Some(i) = rest.find("<meta") {
        rest = &rest[i + 5..];
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        if let Some(j) = tag.find("charset=") {
            let value = tag[j + 8..].trim_start_matches(['"', '\'', ' ']);
            let end = value
                .find(|c: char| c == '"' || c == '\'' || c == ';' || c == '/' || c.is_whitespace())
                .unwrap_or(value.len());
            if end > 0 {
                return Some(value[..end].to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ct(s: &str) -> ContentType {
        ContentType::parse(s).unwrap()
    }

    #[test]
    fn parses_content_types() {
        assert_eq!(
            ct("Text/HTML; Charset=\"UTF-8\""),
            ContentType {
                essence: "text/html".into(),
                charset: Some("utf-8".into())
            }
        );
        assert_eq!(ct("application/json").charset, None);
        assert_eq!(ContentType::parse("garbage"), None);
    }

    #[test]
    fn classifies_declared_and_sniffed_bodies() {
        let kind = |s: &str| classify(Some(&ct(s)), b"");
        assert_eq!(kind("text/html"), Kind::Html);
        assert_eq!(kind("application/xhtml+xml"), Kind::Html);
        assert_eq!(kind("application/json"), Kind::Json);
        assert_eq!(kind("application/problem+json"), Kind::Json);
        assert_eq!(kind("text/markdown"), Kind::Text);
        assert_eq!(kind("application/atom+xml"), Kind::Text);
        assert_eq!(kind("application/javascript"), Kind::Text);
        assert_eq!(kind("image/png"), Kind::Binary);
        assert_eq!(kind("application/octet-stream"), Kind::Binary);
        assert_eq!(kind("application/pdf"), Kind::Binary);
        assert_eq!(classify(None, b"  <!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(classify(None, b"\xEF\xBB\xBF<html>"), Kind::Html);
        assert_eq!(classify(None, "plain caf\u{e9}".as_bytes()), Kind::Text);
        assert_eq!(classify(None, b"\x89PNG\r\n\x1a\n\0\0"), Kind::Binary);
        assert_eq!(classify(None, b"\xff\xd8\xff\xe0 jpeg"), Kind::Binary);
        assert_eq!(classify(None, b""), Kind::Text);
    }

    #[test]
    fn decodes_charsets() {
        let text = |b: &[u8], k, c| decode(b, k, c).0;
        assert_eq!(
            text(b"caf\xe9 \x80", Kind::Text, Some("iso-8859-1")),
            "café €"
        );
        assert_eq!(text(b"caf\xe9", Kind::Text, Some("windows-1252")), "café");
        assert_eq!(text("café".as_bytes(), Kind::Text, None), "café");
        assert_eq!(text(b"\xFF\xFEh\0i\0", Kind::Text, Some("latin1")), "hi");
        assert_eq!(text(b"\xFE\xFF\0h\0i", Kind::Text, None), "hi");
        assert_eq!(text(b"\xEF\xBB\xBFok", Kind::Text, Some("latin1")), "ok");
        // JSON ignores a wrong charset label.
        assert_eq!(
            text("\"é\"".as_bytes(), Kind::Json, Some("latin1")),
            "\"é\""
        );
        // A character cut by the cap disappears rather than turning into U+FFFD.
        assert_eq!(text(&"aé".as_bytes()[..2], Kind::Text, None), "a");
        let html = b"<html><head><meta charset=\"ISO-8859-1\"><title>caf\xe9</title>";
        assert!(text(html, Kind::Html, None).contains("café"));
        let equiv = b"<meta http-equiv=Content-Type content='text/html; charset=windows-1252'>\xe9";
        assert!(text(equiv, Kind::Html, None).ends_with('é'));
        let (shown, note) = decode(b"\x82\xa0", Kind::Text, Some("shift_jis"));
        assert_eq!(shown, "\u{fffd}\u{fffd}");
        assert_eq!(
            note.as_deref(),
            Some(
                "charset `shift_jis` is not supported: decoded as UTF-8, invalid bytes shown as \u{fffd}"
            )
        );
    }
}
