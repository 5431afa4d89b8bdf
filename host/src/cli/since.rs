//! `--since TIME`: RFC 3339 with an offset (`2026-11-22T10:00:00+02:00`),
//! UTC (`…Z`, or no zone at all), minutes without seconds, or a plain date
//! (`2026-11-22`, its midnight UTC).

use std::time::{Duration, SystemTime};

/// Parse `--since`, for clap.
pub fn parse(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    let hint = "use RFC 3339, e.g. 2026-11-22T10:00:00+02:00, 2026-11-22T08:00:00Z or 2026-11-22";
    let (local, offset) = split_offset(text).ok_or_else(|| format!("bad offset; {hint}"))?;
    let full = match local.len() {
        10 => format!("{local}T00:00:00"),
        16 => format!("{local}:00"),
        _ => local.to_string(),
    };
    let at = humantime::parse_rfc3339_weak(&full).map_err(|e| format!("{e}; {hint}"))?;
    let moved = if offset >= 0 {
        at.checked_sub(Duration::from_secs(offset.unsigned_abs()))
    } else {
        at.checked_add(Duration::from_secs(offset.unsigned_abs()))
    };
    moved.ok_or_else(|| format!("out of range; {hint}"))
}

/// The time without its zone, and the zone's offset east of UTC in
/// seconds (`None` for a malformed offset).
fn split_offset(text: &str) -> Option<(&str, i64)> {
    if let Some(local) = text.strip_suffix(['Z', 'z']) {
        return Some((local, 0));
    }
    // An offset follows the time part: `±HH:MM` or `±HHMM` after a `T` or space.
    let time_at = text.find(['T', 't', ' ']);
    let sign_at = time_at.and_then(|t| text[t..].rfind(['+', '-']).map(|i| t + i));
    let Some(at) = sign_at else {
        return Some((text, 0));
    };
    let digits: String = text[at + 1..].chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = digits[2..].parse().ok()?;
    if hours > 23 || minutes > 59 {
        return None;
    }
    let secs = hours * 3600 + minutes * 60;
    Some((
        &text[..at],
        if &text[at..=at] == "-" { -secs } else { secs },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).unwrap()
    }

    #[test]
    fn forms() {
        let eight = utc("2026-11-22T08:00:00Z");
        assert_eq!(parse("2026-11-22T08:00:00Z").unwrap(), eight);
        assert_eq!(parse("2026-11-22T08:00:00").unwrap(), eight);
        assert_eq!(parse("2026-11-22T10:00:00+02:00").unwrap(), eight);
        assert_eq!(parse("2026-11-22T03:30:00-04:30").unwrap(), eight);
        assert_eq!(parse("2026-11-22 08:00").unwrap(), eight);
        assert_eq!(parse("2026-11-22T10:00+0200").unwrap(), eight);
        assert_eq!(parse("2026-11-22").unwrap(), utc("2026-11-22T00:00:00Z"));
        assert_eq!(
            parse("2026-11-22T08:00:00.5Z").unwrap(),
            eight + Duration::from_millis(500)
        );
    }

    #[test]
    fn bad_input_says_what_to_write() {
        for bad in [
            "yesterday",
            "2026-13-01",
            "2026-11-22T10:00:00+2",
            "2026-11-22T10:00+25:00",
            "",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }
}
