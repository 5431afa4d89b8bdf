//! Every relative link in `README.md`, `docs/*.md` and `policies/README.md`
//! leads to a file that exists, and a `#fragment` to a heading in it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::support::repo;

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![repo().join("README.md"), repo().join("policies/README.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    docs
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The targets of the inline links `[text](target)` in `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn relative_links_in_the_docs_resolve() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = match link.split_once('#') {
                Some((f, frag)) => (f, Some(frag)),
                None => (link.as_str(), None),
            };
            let target = if file.is_empty() {
                doc.clone()
            } else {
                dir.join(file)
            };
            let name = doc.strip_prefix(repo()).unwrap_or(&doc).display();
            if !target.exists() {
                broken.push(format!("{name}: {link} (no such file)"));
                continue;
            }
            let Some(fragment) = fragment else { continue };
            if target.extension().is_some_and(|e| e == "md") {
                let target_text = std::fs::read_to_string(&target).unwrap();
                if !anchors(&target_text).contains(fragment) {
                    broken.push(format!("{name}: {link} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_links_the_performance_figures() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(links(&readme).iter().any(|l| l == "docs/performance.md"));
}

#[test]
fn headings_become_github_anchors() {
    assert_eq!(slug("Hard links"), "hard-links");
    assert_eq!(slug("`warden audit caps`"), "warden-audit-caps");
    assert_eq!(slug("Configuration and keys"), "configuration-and-keys");
    assert_eq!(
        slug("Commands (the `shell` tool)"),
        "commands-the-shell-tool"
    );
}
