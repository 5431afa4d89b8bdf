//! Words of a command line after quote removal, and the plain words of a
//! rule's prefix.
//!
//! Invariant: a [`Word`] is `literal` only if its text is exactly what the
//! program will receive: no expansion, substitution, glob, brace or tilde
//! can change it when the shell runs. A word whose quoting cannot be read
//! with certainty is an error, never a guess.

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// After quote removal when literal; as written otherwise.
    pub text: String,
    /// Whether `text` is exactly the argument the program receives.
    pub literal: bool,
}

impl Word {
    /// A word known only when the command runs, shown as written.
    pub(crate) fn unknown(text: &str) -> Word {
        Word {
            text: text.to_string(),
            literal: false,
        }
    }
}

/// Remove the quotes of one shell word, as written in `src` (whose bounds
/// the parser found). An error says why the quoting cannot be trusted.
pub(crate) fn unquote(src: &str) -> Result<Word, &'static str> {
    let mut out = String::with_capacity(src.len());
    let mut literal = true;
    let mut chars = src.chars();
    let mut first = true;
    // Where the last unquoted `{` was pushed, to spot brace expansion.
    let mut brace: Option<usize> = None;
    while let Some(c) = chars.next() {
        let at_start = std::mem::replace(&mut first, false);
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(n) => out.push(n),
                None => out.push('\\'),
            },
            '\'' => loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(n) => out.push(n),
                    None => return Err("an unterminated single quote"),
                }
            },
            '"' => loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(n @ ('$' | '`' | '"' | '\\')) => out.push(n),
                        Some('\n') => {}
                        Some(n) => {
                            out.push('\\');
                            out.push(n);
                        }
                        None => return Err("an unterminated double quote"),
                    },
                    // An expansion inside quotes: the word is not known,
                    // and its end cannot be found without the parser.
                    Some('$' | '`') => return Ok(Word::unknown(src)),
                    Some(n) => out.push(n),
                    None => return Err("an unterminated double quote"),
                }
            },
            '$' | '`' => return Ok(Word::unknown(src)),
            '*' | '?' | '[' => {
                literal = false;
                out.push(c);
            }
            '~' if at_start => {
                literal = false;
                out.push(c);
            }
            '{' => {
                brace = Some(out.len());
                out.push(c);
            }
            '}' => {
                if brace.is_some_and(|b| out.len() > b + 1) {
                    literal = false;
                }
                out.push(c);
            }
            c if c.is_whitespace() || matches!(c, '|' | '&' | ';' | '<' | '>' | '(' | ')') => {
                return Err("a word boundary the parser did not see");
            }
            c => out.push(c),
        }
    }
    if literal {
        Ok(Word { text: out, literal })
    } else {
        Ok(Word::unknown(src))
    }
}

/// Characters a rule prefix may not contain: a prefix is plain words.
const NOT_IN_PREFIX: &[char] = &[
    '\'', '"', '\\', '$', '`', ';', '&', '|', '<', '>', '(', ')', '{', '}', '*', '?', '[', ']',
    '~', '#',
];

/// What is wrong with a rule's prefix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PrefixError {
    /// No words at all.
    #[error("a prefix needs at least the program, e.g. `git status`")]
    Empty,
    /// A character of shell syntax, shown escaped if it is a control.
    #[error(
        "`{shown}` is shell syntax; a prefix is plain words separated by spaces, \
         matched against each command after quotes are removed"
    )]
    ShellSyntax { shown: String },
    /// A variable assignment where the program should be.
    #[error(
        "a prefix starts with the program; to let a rule's commands set variables, \
         list their names in `env`"
    )]
    Assignment,
}

/// Split a rule's prefix (`git status`) into its words, or say what is
/// wrong with it.
pub(crate) fn prefix_words(prefix: &str) -> Result<Vec<String>, PrefixError> {
    let words: Vec<String> = prefix.split_whitespace().map(str::to_string).collect();
    let Some(program) = words.first() else {
        return Err(PrefixError::Empty);
    };
    if let Some(c) = prefix
        .chars()
        .find(|c| NOT_IN_PREFIX.contains(c) || (c.is_control() && !c.is_whitespace()))
    {
        let shown = if c.is_control() {
            c.escape_debug().to_string()
        } else {
            c.to_string()
        };
        return Err(PrefixError::ShellSyntax { shown });
    }
    if program.contains('=') {
        return Err(PrefixError::Assignment);
    }
    Ok(words)
}
