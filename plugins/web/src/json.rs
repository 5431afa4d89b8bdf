//! Pretty-printing JSON text without parsing it into a map, so key order
//! and number spelling stay exactly as the server sent them, and a body cut
//! by the byte cap still comes out indented up to the cut.

/// `text` re-indented by two spaces per level; strings are copied verbatim.
pub fn pretty(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut depth = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                let mut escaped = false;
                for s in chars.by_ref() {
                    out.push(s);
                    match (escaped, s) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
            }
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
                if matches!(chars.peek(), Some('}' | ']')) {
                    if let Some(close) = chars.next() {
                        out.push(close);
                    }
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_and_keeps_order_and_strings() {
        let text = r#"{"z":1,"a":[1, 2.50,{}],"s":"x, {y}: \"q\" \\","e":[] ,"n":null}"#;
        assert_eq!(
            pretty(text),
            "{\n  \"z\": 1,\n  \"a\": [\n    1,\n    2.50,\n    {}\n  ],\n  \"s\": \"x, {y}: \\\"q\\\" \\\\\",\n  \"e\": [],\n  \"n\": null\n}"
        );
    }

    #[test]
    fn a_cut_document_is_indented_up_to_the_cut() {
        assert_eq!(
            pretty(r#"[{"a": "unfinish"#),
            "[\n  {\n    \"a\": \"unfinish"
        );
    }
}
