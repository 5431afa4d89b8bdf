//! A command line, parsed with tree-sitter's bash grammar, as the simple
//! commands it runs ("parts") with their words, assignments and
//! redirections, plus a part for every construct that cannot be seen
//! through.
//!
//! Invariants: every command the shell could run appears as a part —
//! in pipelines, lists, subshells, groups, loops, substitutions, here-doc
//! bodies and written-out nested scripts (`bash -c '…'`, `eval …`); what
//! the grammar does not parse completely, or parses into syntax this walk
//! does not know, yields an opaque part rather than being skipped; and the
//! work is bounded: the input's size, the nesting depth, the number of
//! parts and the parser's time are capped.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser};

use super::analyze::analyze;
use super::hazard::{Analysis, Hazard};
use super::redirect::{Redirect, RedirectKind};
use super::word::{Word, unquote};

/// Longest command line parsed; a longer one is a single opaque part.
pub(crate) const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Deepest nesting of statements and substitutions walked.
const MAX_DEPTH: usize = 64;
/// Most parts a command line may have.
const MAX_PARTS: usize = 512;
/// Deepest nesting of written-out scripts (`bash -c 'eval …'`).
const MAX_SCRIPTS: usize = 3;
/// Most time the parser may take, over every nested script.
const PARSE_BUDGET: Duration = Duration::from_millis(250);
/// Longest part text kept for display.
const MAX_SHOWN: usize = 200;

/// One simple command of a command line, or an opaque construct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// As written (shortened for display).
    pub text: String,
    /// The words after quote removal, the program first.
    pub words: Vec<Word>,
    /// Names of the leading `VAR=value` assignments.
    pub assignments: Vec<String>,
    /// Its redirections, including those of enclosing groups.
    pub redirects: Vec<Redirect>,
    /// Wrappers looked through and hazards found.
    pub analysis: Analysis,
}

impl Part {
    /// A part that stands for a construct the policy cannot see through.
    pub(crate) fn opaque(text: &str, hazard: Hazard) -> Part {
        Part {
            text: shown(text),
            words: Vec::new(),
            assignments: Vec::new(),
            redirects: Vec::new(),
            analysis: Analysis {
                hazards: vec![hazard],
                ..Analysis::default()
            },
        }
    }
}

/// The parts of `command`. Never fails: what cannot be parsed becomes an
/// opaque part.
pub(crate) fn parse(command: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    script(command, 0, Instant::now() + PARSE_BUDGET, &mut parts);
    if parts.len() > MAX_PARTS {
        parts.truncate(MAX_PARTS);
        parts.push(Part::opaque(
            command,
            Hazard::TooComplex(format!("more than {MAX_PARTS} commands")),
        ));
    }
    parts
}

/// Parse one script (the command line, or a nested one) into `parts`.
fn script(src: &str, nesting: usize, deadline: Instant, parts: &mut Vec<Part>) {
    if src.len() > MAX_COMMAND_BYTES {
        parts.push(Part::opaque(
            src,
            Hazard::TooComplex(format!("longer than {MAX_COMMAND_BYTES} bytes")),
        ));
        return;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        parts.push(Part::opaque(
            src,
            Hazard::Unparsed("the shell grammar could not be loaded".into()),
        ));
        return;
    }
    let mut progress = |_: &ParseState| {
        if Instant::now() > deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = src.as_bytes();
    let tree = parser.parse_with_options(
        &mut |i, _| bytes.get(i..).unwrap_or_default(),
        None,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    let Some(tree) = tree else {
        parts.push(Part::opaque(
            src,
            Hazard::TooComplex("parsing it took too long".into()),
        ));
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        let why = first_error(root, src);
        parts.push(Part::opaque(src, Hazard::Unparsed(why)));
    }
    let mut walker = Walker {
        src,
        nesting,
        deadline,
        parts,
    };
    walker.statement(root, &[], 0);
}

/// Where the first syntax error is, in words.
fn first_error(root: Node<'_>, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_missing() {
            return format!("`{}` is missing", n.kind());
        }
        if n.is_error() {
            let text = src.get(n.byte_range()).unwrap_or_default();
            return format!("it does not parse near `{}`", shown_short(text));
        }
        stack.extend(kids(n).into_iter().rev().map(|(_, c)| c));
    }
    "it does not parse".into()
}

/// The children of `node` with their field names.
fn kids<'t>(node: Node<'t>) -> Vec<(Option<&'t str>, Node<'t>)> {
    let mut cursor = node.walk();
    let mut out = Vec::new();
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// The commands of a left-nested `list` (`a && b || c`), in order.
fn chain(list: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![list];
    while let Some(n) = stack.pop() {
        for (_, c) in kids(n).into_iter().rev() {
            if c.kind() == "list" {
                stack.push(c);
            } else if c.is_named() {
                out.push(c);
            }
        }
    }
    out.reverse();
    out
}

/// `text` shortened for display.
fn shown(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_SHOWN) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn shown_short(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Arithmetic test operators: they evaluate variables' contents.
const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"];

/// Collects the parts of one script.
struct Walker<'s, 'p> {
    src: &'s str,
    nesting: usize,
    deadline: Instant,
    parts: &'p mut Vec<Part>,
}

/// Words, redirections, nested statements and nodes to scan for
/// substitutions, gathered while reading one command.
#[derive(Default)]
struct Pieces<'t> {
    words: Vec<(usize, Word)>,
    redirects: Vec<Redirect>,
    later: Vec<Node<'t>>,
    scans: Vec<Node<'t>>,
}

impl<'s> Walker<'s, '_> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or_default()
    }

    fn opaque(&mut self, n: Node<'_>, hazard: Hazard) {
        let part = Part::opaque(self.text(n), hazard);
        self.parts.push(part);
    }

    fn statement(&mut self, node: Node<'_>, inherited: &[Redirect], depth: usize) {
        if self.parts.len() > MAX_PARTS {
            return;
        }
        if depth > MAX_DEPTH {
            self.opaque(
                node,
                Hazard::TooComplex(format!("nested more than {MAX_DEPTH} levels deep")),
            );
            return;
        }
        let d = depth + 1;
        match node.kind() {
            "list" => {
                // `a && b || c` nests to the left: walk the chain as one level.
                for c in chain(node) {
                    self.statement(c, inherited, d);
                }
            }
            "program" | "pipeline" | "subshell" | "do_group" | "if_statement" | "elif_clause"
            | "else_clause" | "while_statement" | "case_statement" | "case_item"
            | "negated_command" | "ERROR" => self.children(node, inherited, d),
            "compound_statement" => {
                if kids(node).first().is_some_and(|(_, c)| c.kind() == "((") {
                    self.opaque(node, Hazard::Arithmetic);
                    self.scan(node, d);
                } else {
                    self.children(node, inherited, d);
                }
            }
            "for_statement" | "c_style_for_statement" => {
                if node.kind() == "c_style_for_statement" {
                    self.opaque(node, Hazard::Arithmetic);
                }
                for (field, c) in kids(node) {
                    match field {
                        Some("body") => self.statement(c, inherited, d),
                        Some("variable") => {}
                        Some(_) | None if c.is_named() => self.scan(c, d),
                        Some(_) | None => {}
                    }
                }
            }
            "redirected_statement" => self.redirected(node, inherited, d),
            "command" => {
                let display = self.text(node);
                self.command(node, display, inherited, Pieces::default(), d)
            }
            "declaration_command" | "unset_command" => self.declaration(node, inherited, d),
            "variable_assignment" | "variable_assignments" => {
                self.opaque(node, Hazard::ChangesShell("an assignment `x=…`".into()));
                self.scan(node, d);
            }
            "function_definition" => {
                self.opaque(node, Hazard::ChangesShell("a function definition".into()));
                for (field, c) in kids(node) {
                    if field == Some("body") {
                        self.statement(c, inherited, d);
                    }
                }
            }
            "test_command" => {
                if self.arithmetic_test(node) {
                    self.opaque(node, Hazard::Arithmetic);
                }
                self.scan(node, d);
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                let mut pieces = Pieces::default();
                self.redirect(node, &mut pieces);
                pieces.redirects.extend(inherited.iter().cloned());
                self.finish(self.text(node), Vec::new(), pieces, inherited, d);
            }
            "comment" => {}
            "word"
            | "string"
            | "raw_string"
            | "concatenation"
            | "number"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "ansi_c_string"
            | "translated_string"
            | "brace_expression"
            | "array"
            | "variable_name"
            | "test_operator"
            | "binary_expression"
            | "unary_expression"
            | "parenthesized_expression"
            | "ternary_expression"
            | "postfix_expression"
            | "regex"
            | "extglob_pattern"
            | "special_variable_name"
            | "string_content"
            | "heredoc_body"
            | "subscript" => self.scan(node, d),
            other => {
                self.opaque(
                    node,
                    Hazard::Unparsed(format!("`{other}` is shell syntax Warden does not check")),
                );
                self.children(node, inherited, d);
            }
        }
    }

    fn children(&mut self, node: Node<'_>, inherited: &[Redirect], depth: usize) {
        for (_, c) in kids(node) {
            if c.is_named() {
                self.statement(c, inherited, depth);
            }
        }
    }

    /// `[[ … ]]` (or `[ … ]`) with an operator that evaluates arithmetic.
    fn arithmetic_test(&self, node: Node<'_>) -> bool {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "test_operator" && ARITHMETIC_TESTS.contains(&self.text(n)) {
                return true;
            }
            stack.extend(kids(n).into_iter().map(|(_, c)| c));
        }
        false
    }

    /// A statement with redirections, which apply to every command in it.
    fn redirected(&mut self, node: Node<'_>, inherited: &[Redirect], d: usize) {
        let mut pieces = Pieces::default();
        let mut body = None;
        for (field, c) in kids(node) {
            if field == Some("body") {
                body = Some(c);
                continue;
            }
            match c.kind() {
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(c, &mut pieces)
                }
                "comment" => {}
                _ if c.is_named() => pieces.later.push(c),
                _ => {}
            }
        }
        match body {
            Some(b) if b.kind() == "command" => {
                let display = self.text(node);
                self.command(b, display, inherited, pieces, d)
            }
            Some(b) => {
                pieces.redirects.extend(inherited.iter().cloned());
                if !pieces.words.is_empty() {
                    self.opaque(
                        node,
                        Hazard::Unparsed("words follow the redirection of a group".into()),
                    );
                }
                let mine = std::mem::take(&mut pieces.redirects);
                self.tail(b, inherited, &mine, node.end_byte(), d);
                for n in pieces.scans {
                    self.scan(n, d);
                }
                for s in pieces.later {
                    self.statement(s, inherited, d);
                }
            }
            None => {
                pieces.redirects.extend(inherited.iter().cloned());
                self.finish(self.text(node), Vec::new(), pieces, inherited, d);
            }
        }
    }

    /// `body` with redirections the grammar hung on it: in `a && b > c` and
    /// `a | b > c` they belong to the last command only, as bash reads
    /// them; on a group or subshell, to every command in it.
    /// `end` is where the redirections end, to show them with the command.
    fn tail(
        &mut self,
        body: Node<'_>,
        inherited: &[Redirect],
        mine: &[Redirect],
        end: usize,
        d: usize,
    ) {
        if body.kind() == "command" {
            let display = self.src.get(body.start_byte()..end).unwrap_or_default();
            self.command(body, display, mine, Pieces::default(), d);
            return;
        }
        if !matches!(body.kind(), "list" | "pipeline") || d > MAX_DEPTH {
            self.statement(body, mine, d);
            return;
        }
        let named: Vec<Node<'_>> = kids(body)
            .into_iter()
            .map(|(_, c)| c)
            .filter(Node::is_named)
            .collect();
        if let Some((last, rest)) = named.split_last() {
            for c in rest {
                self.statement(*c, inherited, d + 1);
            }
            self.tail(*last, inherited, mine, end, d + 1);
        }
    }

    /// One redirection: what it writes or reads, and the words and
    /// statements the grammar attaches to it.
    fn redirect<'t>(&mut self, node: Node<'t>, pieces: &mut Pieces<'t>) {
        match node.kind() {
            "file_redirect" => {
                let (mut op, mut descriptor, mut target) = ("", "", None);
                for (field, c) in kids(node) {
                    match field {
                        Some("descriptor") => descriptor = self.text(c),
                        Some("destination") => {
                            pieces.scans.push(c);
                            let word = self.word(c);
                            if target.is_none() {
                                target = Some(word);
                            } else {
                                // `cmd >&2 arg`: the grammar hangs later
                                // arguments on the redirection.
                                pieces.words.push((c.start_byte(), word));
                            }
                        }
                        Some(_) | None if !c.is_named() => op = c.kind(),
                        Some(_) | None => pieces.scans.push(c),
                    }
                }
                let target = target.unwrap_or_else(|| Word {
                    text: String::new(),
                    literal: true,
                });
                let descriptor_like = target.literal
                    && (target.text == "-"
                        || (!target.text.is_empty()
                            && target.text.bytes().all(|b| b.is_ascii_digit())));
                let kind = match op {
                    "<" => RedirectKind::Read,
                    ">&-" | "<&-" => RedirectKind::Duplicate,
                    ">&" | "<&" if descriptor_like => RedirectKind::Duplicate,
                    "<&" => RedirectKind::Read,
                    _ => RedirectKind::Write,
                };
                pieces.redirects.push(Redirect {
                    kind,
                    how: format!("{descriptor}{op}"),
                    target,
                });
            }
            "heredoc_redirect" => {
                for (field, c) in kids(node) {
                    match c.kind() {
                        "heredoc_body" => pieces.scans.push(c),
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(c, pieces)
                        }
                        "heredoc_start" | "heredoc_end" | "heredoc_content" => {}
                        _ if field == Some("argument") => {
                            pieces.scans.push(c);
                            let word = self.word(c);
                            pieces.words.push((c.start_byte(), word));
                        }
                        _ if c.is_named() => pieces.later.push(c),
                        _ => {}
                    }
                }
            }
            _ => pieces.scans.push(node),
        }
    }

    /// A simple command; `pieces` holds what an enclosing
    /// `redirected_statement` attached to it.
    fn command<'t>(
        &mut self,
        node: Node<'t>,
        display: &str,
        inherited: &[Redirect],
        mut pieces: Pieces<'t>,
        d: usize,
    ) {
        let mut assignments = Vec::new();
        for (field, c) in kids(node) {
            match c.kind() {
                "variable_assignment" => {
                    if let Some(name) = c.child_by_field_name("name") {
                        assignments.push(self.text(name).to_string());
                    }
                    pieces.scans.push(c);
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(c, &mut pieces)
                }
                "comment" => {}
                _ if matches!(field, Some("name" | "argument")) => {
                    pieces.scans.push(c);
                    let word = self.word(c);
                    pieces.words.push((c.start_byte(), word));
                }
                _ if c.is_named() => {
                    self.opaque(
                        c,
                        Hazard::Unparsed(format!(
                            "`{}` inside a command is syntax Warden does not check",
                            c.kind()
                        )),
                    );
                    pieces.scans.push(c);
                }
                _ => {}
            }
        }
        pieces.redirects.extend(inherited.iter().cloned());
        self.finish(display, assignments, pieces, inherited, d);
    }

    /// `export`, `declare`, `local`, `readonly`, `typeset`, `unset`.
    fn declaration(&mut self, node: Node<'_>, inherited: &[Redirect], d: usize) {
        let mut pieces = Pieces::default();
        for (_, c) in kids(node) {
            if c.is_named() {
                pieces.scans.push(c);
                let word = self.word(c);
                pieces.words.push((c.start_byte(), word));
            } else if pieces.words.is_empty() {
                pieces.words.push((
                    c.start_byte(),
                    Word {
                        text: c.kind().to_string(),
                        literal: true,
                    },
                ));
            }
        }
        pieces.redirects.extend(inherited.iter().cloned());
        self.finish(self.text(node), Vec::new(), pieces, inherited, d);
    }

    /// Record the part, then what it contains and what it runs.
    fn finish(
        &mut self,
        display: &str,
        assignments: Vec<String>,
        mut pieces: Pieces<'_>,
        inherited: &[Redirect],
        d: usize,
    ) {
        pieces.words.sort_by_key(|(at, _)| *at);
        let words: Vec<Word> = pieces.words.into_iter().map(|(_, w)| w).collect();
        let mut analysis = analyze(&words, &assignments, &pieces.redirects);
        let scripts = std::mem::take(&mut analysis.scripts);
        self.parts.push(Part {
            text: shown(display),
            words,
            assignments,
            redirects: pieces.redirects,
            analysis,
        });
        for n in pieces.scans {
            self.scan(n, d);
        }
        for s in pieces.later {
            self.statement(s, inherited, d);
        }
        for s in scripts {
            if self.nesting >= MAX_SCRIPTS {
                self.parts.push(Part::opaque(
                    &s,
                    Hazard::TooComplex(format!(
                        "scripts nested more than {MAX_SCRIPTS} levels deep"
                    )),
                ));
            } else {
                script(&s, self.nesting + 1, self.deadline, self.parts);
            }
        }
    }

    /// Find substitutions and other opaque expansions inside a word or
    /// expression; the commands of a substitution become parts.
    fn scan(&mut self, node: Node<'_>, depth: usize) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if self.parts.len() > MAX_PARTS {
                return;
            }
            let hazard = match n.kind() {
                "command_substitution" => Some(Hazard::Substitution),
                "process_substitution" => Some(Hazard::ProcessSubstitution),
                "arithmetic_expansion" => Some(Hazard::Arithmetic),
                "expansion" => self.expansion_hazard(n),
                _ => None,
            };
            let substitution = matches!(n.kind(), "command_substitution" | "process_substitution");
            if let Some(h) = hazard {
                self.opaque(n, h);
            }
            for (_, c) in kids(n).into_iter().rev() {
                if substitution && c.is_named() {
                    self.statement(c, &[], depth + 1);
                } else {
                    stack.push(c);
                }
            }
        }
    }

    /// `${x:=v}` and `${x=v}` assign; `${a[i]}` evaluates `i`.
    fn expansion_hazard(&self, n: Node<'_>) -> Option<Hazard> {
        for (_, c) in kids(n) {
            if c.kind() == "subscript" {
                return Some(Hazard::Arithmetic);
            }
            if !c.is_named() && matches!(c.kind(), "=" | ":=") {
                return Some(Hazard::ChangesShell(format!("`{}`", self.text(n))));
            }
        }
        None
    }

    /// The word `n` stands for, after quote removal.
    fn word(&mut self, n: Node<'_>) -> Word {
        let text = self.text(n);
        if !n.is_named() || contains_substitution(n) {
            return Word::unknown(text);
        }
        match unquote(text) {
            Ok(w) => w,
            Err(why) => {
                self.opaque(
                    n,
                    Hazard::Unparsed(format!("`{}` has {why}", shown_short(text))),
                );
                Word::unknown(text)
            }
        }
    }
}

fn contains_substitution(n: Node<'_>) -> bool {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "command_substitution" | "process_substitution") {
            return true;
        }
        stack.extend(kids(n).into_iter().map(|(_, c)| c));
    }
    false
}
