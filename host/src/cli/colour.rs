//! Whether Warden's own styles (dimmed reasoning, coloured result marks)
//! reach stderr: `--color auto|always|never`, `NO_COLOR` and `TERM=dumb`.
//!
//! Nothing styles a pipe unless `--color always` says so; text from a
//! plugin or a model is made inert before any style wraps it.

use std::io::IsTerminal;
use std::sync::OnceLock;

use clap::ValueEnum;

/// When to style output (`--color`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// When stderr is a terminal, `NO_COLOR` is unset or empty, and `TERM` is not `dumb`.
    #[default]
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// A style Warden applies to its own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Dim,
    Green,
    Red,
    Yellow,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Dim => "2",
            Style::Green => "32",
            Style::Red => "31",
            Style::Yellow => "33",
        }
    }
}

static STDERR_STYLED: OnceLock<bool> = OnceLock::new();
static STDOUT_STYLED: OnceLock<bool> = OnceLock::new();

/// Decide once, for the process, whether stderr is styled.
pub fn choose(when: ColorWhen) {
    let env = |name: &str| std::env::var_os(name);
    let styled = styled(when, std::io::stderr().is_terminal(), &env);
    let _ = STDERR_STYLED.set(styled);
    let out = self::styled(when, std::io::stdout().is_terminal(), &env);
    let _ = STDOUT_STYLED.set(out);
}

/// Whether stderr takes styles (false until [`choose`] ran).
pub fn stderr_styled() -> bool {
    STDERR_STYLED.get().copied().unwrap_or(false)
}

/// `text` in `style` when stderr takes styles, else as it is.
pub fn paint(style: Style, text: &str) -> String {
    if stderr_styled() {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_string()
    }
}

/// `text` in `style` when stdout takes styles (a diff on a terminal).
pub fn paint_out(style: Style, text: &str) -> String {
    if STDOUT_STYLED.get().copied().unwrap_or(false) {
        format!("\x1b[{}m{text}\x1b[0m", style.code())
    } else {
        text.to_string()
    }
}

fn styled(
    when: ColorWhen,
    terminal: bool,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            let no_color = env("NO_COLOR").is_some_and(|v| !v.is_empty());
            let dumb = env("TERM").is_some_and(|t| t == "dumb");
            terminal && !no_color && !dumb
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_terminal_and_the_environment() {
        let none = |_: &str| None;
        assert!(styled(ColorWhen::Auto, true, &none));
        assert!(!styled(ColorWhen::Auto, false, &none));
        assert!(styled(ColorWhen::Always, false, &none));
        assert!(!styled(ColorWhen::Never, true, &none));
        let no_color = |k: &str| (k == "NO_COLOR").then(|| "1".into());
        assert!(!styled(ColorWhen::Auto, true, &no_color));
        assert!(styled(ColorWhen::Always, true, &no_color));
        let empty = |k: &str| (k == "NO_COLOR").then(|| "".into());
        assert!(styled(ColorWhen::Auto, true, &empty));
        let dumb = |k: &str| (k == "TERM").then(|| "dumb".into());
        assert!(!styled(ColorWhen::Auto, true, &dumb));
    }
}
