//! `warden tool list` and `warden tool show`: the catalog for a human (an
//! aligned table that fits the terminal) or as JSON.

use std::io::IsTerminal;

use serde_json::{Value, json};

use super::{Exit, fail, open_catalog};
use crate::base::{terminal_line, terminal_text};
use crate::capability::DeclaredCapabilities;
use crate::plugin::PluginEntry;
use crate::protocol::ToolSpec;

/// The columns of `tool list` before the description.
const HEADERS: [&str; 4] = ["TOOL", "PLUGIN", "ACCESS", "CAPABILITIES"];

pub fn list(json: bool) -> Exit {
    let catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if json {
        let tools: Vec<_> = catalog.tools().map(|(p, t)| tool_json(p, t)).collect();
        outln!("{}", json!({ "tools": tools }));
        return Exit::Success;
    }
    let rows: Vec<[String; 5]> = catalog
        .tools()
        .map(|(p, t)| {
            // A refused plugin's tools say why in place of their description.
            let description = match p.refused() {
                Some(why) => format!("REFUSED: {}", first_line(why)),
                None => first_sentence(&t.description).to_string(),
            };
            [
                terminal_line(t.name.as_str()),
                terminal_line(p.name()),
                access(t).to_string(),
                terminal_line(&capability_summary(&p.meta.manifest.capabilities)),
                terminal_line(&description),
            ]
        })
        .collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let room = terminal_width().map(|cols| {
        let used: usize = widths.iter().map(|w| w + 2).sum();
        cols.saturating_sub(used).max(20)
    });
    let line = |cells: [&str; 5]| {
        let mut text = String::new();
        for (cell, w) in cells.iter().zip(widths) {
            text.push_str(&format!("{cell:<w$}  "));
        }
        text.push_str(&fit(cells[4], room));
        outln!("{}", text.trim_end());
    };
    line([
        HEADERS[0],
        HEADERS[1],
        HEADERS[2],
        HEADERS[3],
        "DESCRIPTION",
    ]);
    for row in &rows {
        line([&row[0], &row[1], &row[2], &row[3], &row[4]]);
    }
    Exit::Success
}

/// `warden tool show NAME`: the whole description, the input schema, and
/// the decision and grant a call with no arguments gets under the policy.
pub fn show(name: &str, policy: Option<&str>, json: bool) -> Exit {
    let catalog = match open_catalog(json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some((p, t)) = catalog.find_tool(name) else {
        let msg = format!("unknown tool `{name}` (see `warden tool list`)");
        return fail(json, Exit::Usage, &msg);
    };
    if json {
        outln!("{}", tool_json(p, t));
        return Exit::Success;
    }
    outln!(
        "{} (plugin {}, {}, declares {})",
        terminal_line(t.name.as_str()),
        terminal_line(p.name()),
        access(t),
        terminal_line(&capability_summary(&p.meta.manifest.capabilities))
    );
    if let Some(why) = p.refused() {
        outln!("REFUSED: {}", terminal_line(why));
    }
    outln!();
    outln!("{}", terminal_text(t.description.trim_end()));
    outln!();
    outln!("input schema:");
    let schema = serde_json::to_string_pretty(&t.input_schema).unwrap_or_default();
    outln!("{}", terminal_text(&schema));
    outln!();
    let policy = match super::policy_cmd::effective(policy) {
        Ok(p) => p,
        Err(e) => return fail(false, Exit::Usage, &e),
    };
    outln!("a call with no arguments, under this policy:");
    super::policy_cmd::explain_in(&catalog, &policy, name, &json!({}), false)
}

/// One tool as `tool list --json` shows it.
fn tool_json(p: &PluginEntry, t: &ToolSpec) -> Value {
    let mut tool = json!({
        "name": t.name,
        "plugin": p.name(),
        "description": t.description,
        "read_only": t.annotations.read_only,
        "annotations": t.annotations,
        "capabilities": p.meta.manifest.capabilities,
        "input_schema": t.input_schema,
    });
    // Only a plugin whose bytes are not the approved ones says why.
    if let Some(why) = p.refused() {
        tool["refused"] = json!(why);
    }
    tool
}

fn access(t: &ToolSpec) -> &'static str {
    if t.annotations.read_only {
        "read-only"
    } else {
        "writes"
    }
}

/// `fs:read`, `fs:read-write net:https://*`, `net:3 destinations proc`.
fn capability_summary(caps: &DeclaredCapabilities) -> String {
    let mut parts = vec![format!("fs:{}", caps.filesystem.as_str())];
    match caps.network.as_slice() {
        [] => {}
        [one] => parts.push(format!("net:{one}")),
        many => parts.push(format!("net:{} destinations", many.len())),
    }
    if caps.processes {
        parts.push("processes".to_string());
    }
    parts.join(" ")
}

/// The description's first sentence (up to a `.` that ends a word and is
/// followed by a space or the end, not after `e.g`), else its first line.
fn first_sentence(text: &str) -> &str {
    let line = text.lines().next().unwrap_or("");
    let mut from = 0;
    while let Some(at) = line[from..].find(". ").map(|i| i + from) {
        let word = line[..at].rsplit(' ').next().unwrap_or("");
        if !matches!(word, "e.g" | "i.e" | "etc" | "vs") {
            return &line[..=at];
        }
        from = at + 2;
    }
    line
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// `text` cut to `room` characters with `…`, or whole when there is no limit.
fn fit(text: &str, room: Option<usize>) -> String {
    match room {
        Some(room) if text.chars().count() > room => {
            let mut cut: String = text.chars().take(room.saturating_sub(1)).collect();
            cut.push('…');
            cut
        }
        Some(_) | None => text.to_string(),
    }
}

/// The terminal's width when stdout is one, else `$COLUMNS` if set;
/// `None` (no limit) for a pipe.
fn terminal_width() -> Option<usize> {
    let stdout = std::io::stdout();
    if stdout.is_terminal()
        && let Ok(size) = rustix::termios::tcgetwinsize(&stdout)
        && size.ws_col > 0
    {
        return Some(usize::from(size.ws_col));
    }
    std::env::var("COLUMNS")
        .ok()?
        .parse()
        .ok()
        .filter(|c| *c > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences() {
        assert_eq!(
            first_sentence("Read a file. Lines are numbered."),
            "Read a file."
        );
        assert_eq!(
            first_sentence("Find files, e.g. `*.rs`. More."),
            "Find files, e.g. `*.rs`."
        );
        assert_eq!(first_sentence("No full stop\nsecond line"), "No full stop");
        assert_eq!(first_sentence("Ends here."), "Ends here.");
    }

    #[test]
    fn fitting() {
        assert_eq!(fit("abcdef", Some(4)), "abc…");
        assert_eq!(fit("abc", Some(4)), "abc");
        assert_eq!(fit("abcdef", None), "abcdef");
    }
}
