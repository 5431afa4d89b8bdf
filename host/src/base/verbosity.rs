//! How much a command says beyond its results: `-q`, the default, `-v`.

use super::LogLevel;

/// How much a command prints on stderr besides results and errors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Results and errors only (`-q`).
    Quiet,
    /// Also warnings that change what happens, and plugin warnings.
    #[default]
    Normal,
    /// Also notes (how a grant was narrowed) and every plugin log line (`-v`).
    Verbose,
}

impl Verbosity {
    /// Whether a plugin's log line at `level` is shown.
    pub fn shows_log(self, level: LogLevel) -> bool {
        match self {
            Verbosity::Quiet => false,
            Verbosity::Normal => matches!(level, LogLevel::Warn | LogLevel::Error),
            Verbosity::Verbose => true,
        }
    }

    /// Whether notes (grant cuts, network use, dropped output) are shown.
    pub fn shows_notes(self) -> bool {
        self == Verbosity::Verbose
    }

    /// Whether warnings and status lines are shown.
    pub fn shows_warnings(self) -> bool {
        self != Verbosity::Quiet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert!(!Verbosity::Normal.shows_log(LogLevel::Debug));
        assert!(Verbosity::Normal.shows_log(LogLevel::Warn));
        assert!(Verbosity::Verbose.shows_log(LogLevel::Debug));
        assert!(!Verbosity::Quiet.shows_log(LogLevel::Error));
        assert!(!Verbosity::Normal.shows_notes() && Verbosity::Verbose.shows_notes());
        assert!(!Verbosity::Quiet.shows_warnings());
    }
}
