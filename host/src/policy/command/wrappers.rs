//! Wrappers Warden looks through to the command they run: `env`, `nice`,
//! `timeout`, `nohup`, `time`, `command`, `builtin`, `exec`, `stdbuf` and
//! `xargs` (which runs its command with arguments read from input).
//!
//! Invariant: a wrapper's own options are read as the program reads them;
//! an option Warden does not know, or one known only when the command
//! runs, means the command it runs cannot be found, which is a hazard.

use super::hazard::{Analysis, Hazard, is_name, write_to};
use super::word::Word;

/// Options of a wrapper, in the GNU style: clustered short flags, short
/// options whose value is attached or the next word, long options with
/// `=value` or the next word.
struct Opts {
    short: &'static str,
    short_value: &'static str,
    long: &'static [&'static str],
    long_value: &'static [&'static str],
    /// `-5` (as `nice -5`) is an option.
    numeric: bool,
}

/// Where the operands start, and each option that took a value.
type Parsed = (usize, Vec<(String, Option<Word>)>);

impl Opts {
    fn parse(&self, program: &str, args: &[Word]) -> Result<Parsed, Hazard> {
        let mut values = Vec::new();
        let mut k = 0;
        while let Some(w) = args.get(k) {
            if !w.literal {
                return Err(Hazard::ArgumentsUnknown(program.to_string()));
            }
            let t = w.text.as_str();
            if t == "--" {
                return Ok((k + 1, values));
            }
            if let Some(long) = t.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, v)) => (format!("--{n}"), Some(v)),
                    None => (t.to_string(), None),
                };
                if self.long_value.contains(&name.as_str()) {
                    let value = match inline {
                        Some(v) => Some(Word {
                            text: v.to_string(),
                            literal: true,
                        }),
                        None => {
                            k += 1;
                            args.get(k).cloned()
                        }
                    };
                    values.push((name, value));
                } else if !self.long.contains(&name.as_str()) || inline.is_some() {
                    return Err(unknown_option(program, t));
                }
                k += 1;
                continue;
            }
            let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else {
                return Ok((k, values));
            };
            if self.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
                k += 1;
                continue;
            }
            for (i, c) in cluster.char_indices() {
                if self.short_value.contains(c) {
                    let rest = &cluster[i + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        k += 1;
                        args.get(k).cloned()
                    } else {
                        Some(Word {
                            text: rest.to_string(),
                            literal: true,
                        })
                    };
                    values.push((format!("-{c}"), value));
                    break;
                }
                if !self.short.contains(c) {
                    return Err(unknown_option(program, t));
                }
            }
            k += 1;
        }
        Ok((k, values))
    }
}

fn unknown_option(program: &str, option: &str) -> Hazard {
    Hazard::Unparsed(format!(
        "`{program} {option}` is an option Warden does not know, so the command it runs \
         cannot be found"
    ))
}

/// If `name` is a wrapper, how many of `args` come before the command it
/// runs (`None`: it runs no other command).
pub(super) fn wrapper(
    name: &str,
    args: &[Word],
    a: &mut Analysis,
) -> Result<Option<usize>, Hazard> {
    let opts = match name {
        "env" => Opts {
            short: "i0v",
            short_value: "uC",
            long: &["--ignore-environment", "--null", "--debug"],
            long_value: &["--unset", "--chdir"],
            numeric: false,
        },
        "nice" => Opts {
            short: "",
            short_value: "n",
            long: &[],
            long_value: &["--adjustment"],
            numeric: true,
        },
        "timeout" => Opts {
            short: "v",
            short_value: "sk",
            long: &["--preserve-status", "--foreground", "--verbose"],
            long_value: &["--signal", "--kill-after"],
            numeric: false,
        },
        "nohup" | "builtin" => Opts {
            short: "",
            short_value: "",
            long: &[],
            long_value: &[],
            numeric: false,
        },
        "time" => Opts {
            short: "pvqa",
            short_value: "fo",
            long: &["--portability", "--verbose", "--quiet", "--append"],
            long_value: &["--format", "--output"],
            numeric: false,
        },
        "command" => Opts {
            short: "pvV",
            short_value: "",
            long: &[],
            long_value: &[],
            numeric: false,
        },
        "exec" => Opts {
            short: "cl",
            short_value: "a",
            long: &[],
            long_value: &[],
            numeric: false,
        },
        "stdbuf" => Opts {
            short: "",
            short_value: "ioe",
            long: &[],
            long_value: &["--input", "--output", "--error"],
            numeric: false,
        },
        "xargs" => return xargs(args, a),
        _ => return Ok(None),
    };
    if name == "env"
        && args
            .iter()
            .any(|w| w.text == "-S" || w.text.starts_with("--split-string"))
    {
        return Err(Hazard::Evaluates("`env -S`".into()));
    }
    let (mut k, values) = opts.parse(name, args)?;
    for (option, value) in &values {
        if name == "time" && matches!(option.as_str(), "-o" | "--output") {
            a.hazards.push(write_to(value.as_ref(), "`time -o`"));
        }
    }
    if name == "command" && args[..k].iter().any(|w| w.text.contains(['v', 'V'])) {
        return Ok(None);
    }
    if name == "exec" {
        a.hazards.push(Hazard::Evaluates("`exec`".into()));
    }
    if name == "timeout" {
        k += 1; // the duration
    }
    if name == "env" {
        while let Some(w) = args.get(k) {
            match w.text.split_once('=') {
                Some((var, _)) if w.literal && is_name(var) => {
                    a.hazards.push(Hazard::Assignment(var.to_string()));
                    k += 1;
                }
                Some(_) | None => break,
            }
        }
    }
    Ok((k < args.len()).then_some(k))
}

/// `xargs [options] [command [initial-arguments]]`: the command runs with
/// arguments read from input. Without a command it runs `echo`.
fn xargs(args: &[Word], a: &mut Analysis) -> Result<Option<usize>, Hazard> {
    let opts = Opts {
        short: "0rtpxeil",
        short_value: "adEILnPs",
        long: &[
            "--null",
            "--no-run-if-empty",
            "--verbose",
            "--interactive",
            "--exit",
            "--open-tty",
            "--eof",
            "--replace",
            "--max-lines",
        ],
        long_value: &[
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
        numeric: false,
    };
    // `-e`, `-i` and `-l` take an optional value, attached only.
    let (k, values) = opts.parse("xargs", args)?;
    let replace = values
        .iter()
        .find(|(o, _)| o == "-I")
        .and_then(|(_, v)| v.as_ref())
        .map(|v| v.text.clone())
        .or_else(|| {
            args[..k]
                .iter()
                .any(|w| w.text.starts_with("-i") || w.text.starts_with("--replace"))
                .then(|| "{}".to_string())
        });
    if let (Some(r), Some(program)) = (&replace, args.get(k))
        && program.text.contains(r.as_str())
    {
        return Err(Hazard::ProgramUnknown(program.text.clone()));
    }
    a.trailing_unknown = true;
    Ok((k < args.len()).then_some(k))
}
