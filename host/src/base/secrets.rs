//! The secrets this process resolved (model API keys, egress credential
//! values), and their redaction from everything Warden writes or shows.
//!
//! Invariant: a value is [`register`]ed where it is resolved, before it can
//! reach any output, and stays registered for the life of the process;
//! every writer of the audit log, session files, `--json` events and error
//! messages passes its text through [`redact`] (or [`redact_json`] for a
//! serialized JSON line, [`StreamRedactor`] for text that arrives in
//! pieces), which replaces each registered value with [`REDACTED`].
//! Values shorter than [`MIN_SECRET_BYTES`] are not registered.

use std::borrow::Cow;
use std::sync::RwLock;

/// Values shorter than this are not secrets worth redacting (and replacing
/// them would mangle ordinary text).
pub const MIN_SECRET_BYTES: usize = 8;

/// What a secret becomes.
pub const REDACTED: &str = "[redacted]";

/// A registered value: as it is, and as it appears inside a JSON string.
struct Known {
    raw: String,
    escaped: Vec<u8>,
}

/// Longest first, so a value containing another is replaced whole.
static REGISTRY: RwLock<Vec<Known>> = RwLock::new(Vec::new());

/// Remember `value` (trimmed) as a secret this process holds.
pub fn register(value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_BYTES {
        return;
    }
    let Ok(mut known) = REGISTRY.write() else {
        return;
    };
    if known.iter().any(|k| k.raw == value) {
        return;
    }
    let quoted = serde_json::to_vec(value).unwrap_or_default();
    let escaped = quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default()
        .to_vec();
    known.push(Known {
        raw: value.to_string(),
        escaped,
    });
    known.sort_by_key(|k| std::cmp::Reverse(k.raw.len()));
}

/// Whether any value is registered.
pub fn any() -> bool {
    with_known(|known| !known.is_empty())
}

/// Run `f` over the registered values; a poisoned registry (a panic while
/// registering) is read as it is.
fn with_known<R>(f: impl FnOnce(&[Known]) -> R) -> R {
    match REGISTRY.read() {
        Ok(k) => f(&k),
        Err(poisoned) => f(&poisoned.into_inner()[..]),
    }
}

fn replace_all(text: &str, known: &[Known]) -> Option<String> {
    let mut out: Option<String> = None;
    for k in known {
        let current = out.as_deref().unwrap_or(text);
        if current.contains(&k.raw) {
            out = Some(current.replace(&k.raw, REDACTED));
        }
    }
    out
}

/// `text` with every registered value replaced by [`REDACTED`].
pub fn redact(text: &str) -> Cow<'_, str> {
    match with_known(|known| replace_all(text, known)) {
        Some(s) => Cow::Owned(s),
        None => Cow::Borrowed(text),
    }
}

/// A serialized JSON document (as `serde_json` writes it) with every
/// registered value replaced inside its strings, keys included; `None`
/// when it holds none. Numbers and the structure are never touched.
pub fn redact_json(json: &[u8]) -> Option<Vec<u8>> {
    with_known(|known| {
        let hit = known
            .iter()
            .any(|k| memchr::memmem::find(json, &k.escaped).is_some());
        if !hit {
            return None;
        }
        let mut out = Vec::with_capacity(json.len());
        let mut i = 0;
        while i < json.len() {
            if json[i] != b'"' {
                out.push(json[i]);
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < json.len() && json[end] != b'"' {
                end += if json[end] == b'\\' { 2 } else { 1 };
            }
            let span = &json[i..(end + 1).min(json.len())];
            let redacted = serde_json::from_slice::<String>(span)
                .ok()
                .and_then(|s| replace_all(&s, known))
                .and_then(|s| serde_json::to_vec(&s).ok());
            match redacted {
                Some(bytes) => out.extend_from_slice(&bytes),
                None => out.extend_from_slice(span),
            }
            i = end + 1;
        }
        Some(out)
    })
}

/// `value` with every registered value replaced in its strings and keys.
pub fn redact_value(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (k, mut v) in entries {
                redact_value(&mut v);
                map.insert(redact(&k).into_owned(), v);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Text that arrives in pieces (a streamed answer): a registered value
/// split across two pieces is still replaced, by holding back a tail that
/// could be the start of one until the next piece or [`finish`](Self::finish).
#[derive(Debug, Default)]
pub struct StreamRedactor {
    carry: String,
}

impl StreamRedactor {
    /// Take `piece`; returns what can be shown now.
    pub fn push(&mut self, piece: &str) -> String {
        self.carry.push_str(piece);
        let carry = std::mem::take(&mut self.carry);
        with_known(|known| {
            if known.is_empty() {
                return carry;
            }
            let mut text = replace_all(&carry, known).unwrap_or(carry);
            let hold = known
                .iter()
                .map(|k| held_prefix(&text, &k.raw))
                .max()
                .unwrap_or(0);
            self.carry = text.split_off(text.len() - hold);
            text
        })
    }

    /// Everything still held back, redacted.
    pub fn finish(&mut self) -> String {
        let carry = std::mem::take(&mut self.carry);
        redact(&carry).into_owned()
    }
}

/// The length of the longest end of `text` that is a proper start of
/// `secret` (0 if none).
fn held_prefix(text: &str, secret: &str) -> usize {
    (1..secret.len())
        .rev()
        .filter(|&n| secret.is_char_boundary(n))
        .find(|&n| text.ends_with(&secret[..n]))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_values_are_redacted_in_text_and_json_strings_only() {
        register("sk-unit-registry-0042");
        register("12345678901");
        register("short");
        assert_eq!(
            redact("key sk-unit-registry-0042 short"),
            "key [redacted] short"
        );
        let line = serde_json::to_vec(&serde_json::json!({
            "sk-unit-registry-0042": "a\nsk-unit-registry-0042\"",
            "n": 12345678901u64,
            "s": "12345678901",
        }))
        .unwrap();
        let out = redact_json(&line).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"[redacted]": "a\n[redacted]\"", "n": 12345678901u64, "s": "[redacted]"})
        );
        assert_eq!(redact_json(b"{\"a\":\"nothing\"}"), None);
    }

    #[test]
    fn a_value_split_across_pieces_is_still_redacted() {
        register("sk-unit-stream-9876");
        let mut s = StreamRedactor::default();
        let mut shown = String::new();
        for piece in [
            "the key is sk-",
            "unit-str",
            "eam-9876 and sk-u",
            "nrelated",
        ] {
            shown += &s.push(piece);
        }
        shown += &s.finish();
        assert_eq!(shown, "the key is [redacted] and sk-unrelated");
    }
}
