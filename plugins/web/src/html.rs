//! HTML to readable Markdown (through `htmd`) or plain text.
//!
//! Before converting, the parsed page is cleaned: scripts, styles,
//! `noscript`, `template`, SVG and MathML, frames and embedded media, form
//! controls, navigation (`nav`, `role=navigation`) and hidden elements are
//! dropped; links and images are made absolute against the page's URL (or
//! its `<base href>`), `javascript:` links lose their target and inline
//! `data:` images are dropped. When the page marks its content with
//! `<main>` (or `role=main`), only that is shown. Nesting deeper than
//! [`MAX_DEPTH`] is flattened to its text, so a hostile page cannot exhaust
//! the stack.

use std::rc::Rc;

use htmd::HtmlToMarkdown;
use htmd::options::{BulletListMarker, HrStyle, Options};
use html5ever::tendril::StrTendril;
use markup5ever_rcdom::{Node, NodeData};
use warden_sdk::http::Url;

/// Elements nested deeper than this are replaced by their text.
pub const MAX_DEPTH: usize = 96;

/// Elements dropped with everything inside them.
const DROPPED: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "math", "iframe", "frame",
    "frameset", "object", "embed", "canvas", "video", "audio", "source", "track", "nav", "button",
    "input", "select", "option", "textarea", "dialog", "link", "meta",
];

/// How to render a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Markdown,
    Text,
}

/// A converted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The `<title>`, whitespace collapsed.
    pub title: Option<String>,
    /// The content as Markdown or text.
    pub content: String,
    /// True when only the page's `<main>` element was converted.
    pub main_only: bool,
}

/// Convert `html`, fetched from `url`.
pub fn convert(html: &str, url: &Url, style: Style) -> Page {
    let converter = HtmlToMarkdown::builder()
        .options(Options {
            bullet_list_marker: BulletListMarker::Dash,
            hr_style: HrStyle::Dashes,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            ..Options::default()
        })
        .build();
    let Ok(document) = converter.html_to_tree(html) else {
        return Page {
            title: None,
            content: String::new(),
            main_only: false,
        };
    };
    let title = find(&document, |n| tag(n) == Some("title")).map(|t| collapse(&text_of(&t)));
    let base = find(&document, |n| tag(n) == Some("base"))
        .and_then(|b| attr(&b, "href"))
        .and_then(|href| url.join(&href).ok())
        .unwrap_or_else(|| url.clone());
    clean(&document, &base);
    let main = find(&document, |n| {
        tag(n) == Some("main") || attr(n, "role").as_deref() == Some("main")
    })
    .filter(|m| !text_of(m).trim().is_empty());
    // `document` must outlive the conversion: dropping the last handle to a
    // node empties every node below it, `main` included.
    let root = main.as_ref().unwrap_or(&document);
    let content = match style {
        Style::Markdown => converter.tree_to_markdown(root),
        Style::Text => text::render(root),
    };
    Page {
        title: title.filter(|t| !t.is_empty()),
        content: tidy(&content),
        main_only: main.is_some(),
    }
}

fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attr(node: &Node, name: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == name)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

fn set_attr(node: &Node, name: &str, value: Option<&str>) {
    if let NodeData::Element { attrs, .. } = &node.data {
        let mut attrs = attrs.borrow_mut();
        match value {
            Some(v) => {
                for a in attrs.iter_mut().filter(|a| &*a.name.local == name) {
                    a.value = StrTendril::from(v);
                }
            }
            None => attrs.retain(|a| &*a.name.local != name),
        }
    }
}

/// The first node, in document order, that `pred` accepts.
fn find(root: &Rc<Node>, pred: impl Fn(&Node) -> bool) -> Option<Rc<Node>> {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if pred(&node) {
            return Some(node);
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

/// All text under `root`, concatenated.
fn text_of(root: &Rc<Node>) -> String {
    let mut out = String::new();
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            out.push_str(&contents.borrow());
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    out
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Drop boilerplate and hidden elements, resolve links, flatten deep nesting.
fn clean(document: &Rc<Node>, base: &Url) {
    let mut stack = vec![(document.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth >= MAX_DEPTH && !node.children.borrow().is_empty() {
            let text = Node::new(NodeData::Text {
                contents: std::cell::RefCell::new(StrTendril::from(collapse(&text_of(&node)))),
            });
            text.parent.set(Some(Rc::downgrade(&node)));
            *node.children.borrow_mut() = vec![text];
            continue;
        }
        node.children.borrow_mut().retain(|child| keep(child, base));
        for child in node.children.borrow().iter() {
            stack.push((child.clone(), depth + 1));
        }
    }
}

/// False for a node to drop; fixes up links and images it keeps.
fn keep(node: &Node, base: &Url) -> bool {
    let Some(name) = tag(node) else {
        return !matches!(
            node.data,
            NodeData::Comment { .. } | NodeData::ProcessingInstruction { .. }
        );
    };
    if DROPPED.contains(&name)
        || attr(node, "hidden").is_some()
        || attr(node, "aria-hidden").as_deref() == Some("true")
        || attr(node, "role").as_deref() == Some("navigation")
        || attr(node, "style").is_some_and(|s| {
            let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            s.to_ascii_lowercase().contains("display:none")
        })
    {
        return false;
    }
    match name {
        "a" | "area" => {
            if let Some(href) = attr(node, "href") {
                let lower = href.trim().to_ascii_lowercase();
                if lower.starts_with("javascript:") {
                    set_attr(node, "href", None);
                } else if !href.starts_with('#') {
                    let resolved = absolute(base, &href);
                    set_attr(node, "href", Some(&resolved));
                }
            }
            true
        }
        "img" => {
            let src = attr(node, "src").unwrap_or_default();
            let alt = attr(node, "alt").unwrap_or_default();
            if src.trim().is_empty()
                || src.trim().to_ascii_lowercase().starts_with("data:")
                || alt.trim().is_empty()
            {
                return false;
            }
            set_attr(node, "src", Some(&absolute(base, &src)));
            true
        }
        _ => true,
    }
}

/// `reference` made absolute against `base` when it is an http(s) link,
/// keeping its `#fragment` (a [`Url`] has none: it is never sent); other
/// schemes (`mailto:`, `tel:`) are kept as they are.
fn absolute(base: &Url, reference: &str) -> String {
    let reference = reference.trim();
    let (target, fragment) = match reference.split_once('#') {
        Some((target, fragment)) => (target, Some(fragment)),
        None => (reference, None),
    };
    match (base.join(target), fragment) {
        (Ok(u), Some(fragment)) => format!("{u}#{fragment}"),
        (Ok(u), None) => u.to_string(),
        (Err(_), _) => reference.to_string(),
    }
}

/// Trailing spaces off lines (but Markdown hard breaks), at most one blank
/// line in a row, no blank lines at either end.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0;
    for line in s.lines() {
        let trimmed = line.trim_end();
        let line = if line.ends_with("  ") && !trimmed.is_empty() {
            line
        } else {
            trimmed
        };
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// Plain text: blocks on their own lines, list items as `- `, table cells
/// separated by ` | `, link targets and images left out.
mod text {
    use super::{Node, NodeData, Rc, tag};

    const BLOCKS: &[&str] = &[
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "ul",
    ];

    #[derive(Default)]
    struct Out {
        text: String,
        space: bool,
    }

    impl Out {
        fn word(&mut self, s: &str) {
            if self.space && !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push(' ');
            }
            self.space = false;
            self.text.push_str(s);
        }

        fn newline(&mut self) {
            self.space = false;
            if !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push('\n');
            }
        }

        fn block(&mut self) {
            self.newline();
            if !self.text.is_empty() && !self.text.ends_with("\n\n") {
                self.text.push('\n');
            }
        }
    }

    pub fn render(root: &Rc<Node>) -> String {
        let mut out = Out::default();
        walk(root, &mut out, false);
        out.text
    }

    fn walk(node: &Rc<Node>, out: &mut Out, pre: bool) {
        match &node.data {
            NodeData::Text { contents } => {
                let text = contents.borrow();
                if pre {
                    out.word(&text);
                    return;
                }
                if text.starts_with(char::is_whitespace) {
                    out.space = true;
                }
                for w in text.split_whitespace() {
                    out.word(w);
                    out.space = true;
                }
                out.space = text.ends_with(char::is_whitespace);
            }
            NodeData::Element { .. } => {
                let name = tag(node).unwrap_or_default();
                match name {
                    "br" => out.newline(),
                    "pre" => {
                        out.block();
                        children(node, out, true);
                        out.block();
                    }
                    "li" => {
                        out.newline();
                        out.word("- ");
                        children(node, out, pre);
                        out.newline();
                    }
                    "tr" => {
                        out.newline();
                        let mut first = true;
                        for cell in node.children.borrow().iter() {
                            if matches!(tag(cell), Some("td" | "th")) {
                                if !first {
                                    out.word(" |");
                                    out.space = true;
                                }
                                first = false;
                            }
                            walk(cell, out, pre);
                        }
                        out.newline();
                    }
                    n if BLOCKS.contains(&n) => {
                        out.block();
                        children(node, out, pre);
                        out.block();
                    }
                    _ => children(node, out, pre),
                }
            }
            _ => children(node, out, pre),
        }
    }

    fn children(node: &Rc<Node>, out: &mut Out, pre: bool) {
        for child in node.children.borrow().iter() {
            walk(child, out, pre);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str) -> Page {
        convert(
            html,
            &Url::parse("https://site.example/docs/page").unwrap(),
            Style::Markdown,
        )
    }

    fn text(html: &str) -> String {
        convert(
            html,
            &Url::parse("https://site.example/docs/page").unwrap(),
            Style::Text,
        )
        .content
    }

    #[test]
    fn markdown_keeps_structure() {
        let page = md(
            "<html><head><title> The\n Title </title><style>p{}</style></head><body>\
            <h1>Heading</h1><p>A <b>bold</b> and <em>soft</em> <a href=\"../other?x=1\">link</a> \
            to <a href=\"/guide#setup\">setup</a>.</p>\
            <ul><li>one</li><li>two</li></ul><ol><li>first</li><li>second</li></ol>\
            <pre><code class=\"language-rust\">fn main() {\n    x();\n}</code></pre>\
            <p>Inline <code>code</code>.</p></body></html>",
        );
        assert_eq!(page.title.as_deref(), Some("The Title"));
        assert!(!page.main_only);
        assert_eq!(
            page.content,
            "# Heading\n\nA **bold** and *soft* [link](https://site.example/other?x=1) \
             to [setup](https://site.example/guide#setup).\n\n\
             - one\n- two\n\n1. first\n2. second\n\n```rust\nfn main() {\n    x();\n}\n```\n\n\
             Inline `code`."
        );
    }

    #[test]
    fn markdown_tables() {
        let page = md("<table><thead><tr><th>Name</th><th>Size</th></tr></thead>\
            <tbody><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></tbody></table>");
        assert_eq!(
            page.content,
            "| Name | Size |\n| ---- | ---- |\n| a    | 1    |\n| b    | 2    |"
        );
    }

    #[test]
    fn boilerplate_and_hidden_content_is_dropped() {
        let html = "<body><nav><a href=\"/\">Home</a></nav><script>alert(1)</script>\
            <noscript>enable js</noscript><svg><text>svg text</text></svg>\
            <div hidden>hidden</div><div aria-hidden=\"true\">aria</div>\
            <div style=\"display: none\">styled away</div><div role=\"navigation\">menu</div>\
            <form><input value=\"q\"><button>Go</button></form><iframe src=\"x\"></iframe>\
            <!-- a comment --><p>Kept.</p>\
            <img src=\"data:image/png;base64,AAAA\" alt=\"inline\"><img src=\"/a.png\">\
            <img src=\"pic.png\" alt=\"A picture\"><a href=\"javascript:void(0)\">js link</a>\
            <a href=\"#top\">top</a> <a href=\"mailto:x@y.example\">mail</a></body>";
        assert_eq!(
            md(html).content,
            "Kept.\n\n![A picture](https://site.example/docs/pic.png)js link[top](#top) [mail](mailto:x@y.example)"
        );
    }

    #[test]
    fn main_element_wins_and_base_href_resolves() {
        let html = "<head><base href=\"https://cdn.example/root/\"></head><body>\
            <header>Site header</header><main><p>Article <a href=\"next\">next</a></p></main>\
            <footer>Footer</footer></body>";
        let page = md(html);
        assert!(page.main_only);
        assert_eq!(
            page.content,
            "Article [next](https://cdn.example/root/next)"
        );
        // An empty <main> (a script-rendered shell) does not hide the page.
        let page = md("<body><main> </main><p>Body text</p></body>");
        assert!(!page.main_only);
        assert_eq!(page.content, "Body text");
    }

    #[test]
    fn text_mode_is_plain() {
        let t = text(
            "<title>T</title><h1>Head</h1><p>One <a href=\"/x\">link</a>\ntwo.</p>\
            <ul><li>a</li><li>b <b>bold</b></li></ul>\
            <table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>\
            <pre>  keep\n    spacing</pre><p>line<br>break</p>",
        );
        assert_eq!(
            t,
            "Head\n\nOne link two.\n\n- a\n- b bold\n\nk | v\n1 | 2\n\n  keep\n    spacing\n\nline\nbreak"
        );
    }

    #[test]
    fn deep_nesting_is_flattened_within_a_small_stack() {
        let depth = 3_000;
        let html = format!(
            "{}deep text{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        // The wasm32-wasip2 main stack is 1 MiB; convert on a thread no bigger.
        let out = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || (md(&html).content, text(&html)))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(out.0, "deep text");
        assert_eq!(out.1, "deep text");
    }
}
