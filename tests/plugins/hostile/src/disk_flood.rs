//! Tries to fill the disk: writes `bytes` into one workspace file through
//! one of the ways `wasi:filesystem` offers to write, until done or a write
//! fails, so tests can check the host's write quota on each of them.

use std::io::Write;

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Annotations, Context, Output, Tool, ToolError};
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags, filesystem_error_code,
};
use wasip2::io::streams::{OutputStream, StreamError};

/// Bytes a write passes at most (`blocking-write-and-flush` takes 4096).
const CHUNK: u64 = 64 << 10;
const SMALL: u64 = 4096;

#[derive(serde::Deserialize)]
pub struct FloodInput {
    /// Workspace-relative file to create and fill.
    path: String,
    /// How to write (see [`Via`]).
    via: Via,
    /// Bytes to try to write.
    bytes: u64,
    /// For `splice`: a workspace-relative file to copy from, again and again.
    #[serde(default)]
    source: Option<String>,
}

/// The ways a guest can put bytes into a file.
#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// `descriptor.write` at increasing offsets.
    Write,
    /// One byte written at the last offset, leaving a hole before it.
    Hole,
    /// `write-via-stream`, then `check-write`, `write` and `flush`.
    Stream,
    /// `write-via-stream`, then `blocking-write-and-flush`.
    BlockingStream,
    /// `append-via-stream`, then `blocking-write-and-flush`.
    Append,
    /// `write-via-stream`, then `blocking-write-zeroes-and-flush`.
    Zeroes,
    /// `write-via-stream`, then `blocking-splice` from `source`.
    Splice,
    /// `set-size`: all at once, then in steps.
    SetSize,
    /// `std::fs::File::write_all`, through wasi-libc.
    Std,
}

/// Why a write stopped.
fn code(e: ErrorCode) -> String {
    e.name().to_string()
}

fn stream_code(e: StreamError) -> String {
    match e {
        StreamError::LastOperationFailed(e) => {
            filesystem_error_code(&e).map_or_else(|| e.to_debug_string(), code)
        }
        StreamError::Closed => "closed".to_string(),
    }
}

fn open(dir: &Descriptor, path: &str) -> Result<Descriptor, String> {
    dir.open_at(
        PathFlags::empty(),
        path,
        OpenFlags::CREATE | OpenFlags::TRUNCATE,
        DescriptorFlags::READ | DescriptorFlags::WRITE,
    )
    .map_err(code)
}

/// Write `bytes` into `path` via `via`: the bytes written, and why it
/// stopped early if it did.
pub fn flood(input: &FloodInput) -> Result<(u64, Option<String>), ToolError> {
    let dir = crate::workspace_preopen()?;
    if let Via::Std = input.via {
        return Ok(flood_std(&input.path, input.bytes));
    }
    let file = match open(&dir, &input.path) {
        Ok(file) => file,
        Err(e) => return Ok((0, Some(format!("open: {e}")))),
    };
    let chunk = vec![b'x'; CHUNK as usize];
    let (total, mut done) = (input.bytes, 0u64);
    let left = |done: u64, most: u64| most.min(total - done) as usize;
    let stopped = match input.via {
        Via::Write => loop {
            if done >= total {
                break None;
            }
            match file.write(&chunk[..left(done, CHUNK)], done) {
                Ok(0) => break Some("wrote nothing".to_string()),
                Ok(n) => done += n,
                Err(e) => break Some(code(e)),
            }
        },
        Via::Hole => match file.write(b"x", total.saturating_sub(1)) {
            Ok(n) => {
                done = n;
                None
            }
            Err(e) => Some(code(e)),
        },
        Via::SetSize => match file.set_size(total) {
            Ok(()) => {
                done = total;
                None
            }
            // Refused at once: grow it step by step instead.
            Err(_) => loop {
                let next = (done + CHUNK).min(total);
                match file.set_size(next) {
                    Ok(()) if next == total => break None,
                    Ok(()) => done = next,
                    Err(e) => break Some(code(e)),
                }
            },
        },
        Via::Stream | Via::BlockingStream | Via::Zeroes | Via::Splice => {
            let out = file
                .write_via_stream(0)
                .map_err(|e| ToolError::io(code(e)))?;
            let source = match (&input.via, &input.source) {
                (Via::Splice, Some(source)) => Some(
                    dir.open_at(
                        PathFlags::empty(),
                        source,
                        OpenFlags::empty(),
                        DescriptorFlags::READ,
                    )
                    .map_err(|e| ToolError::io(format!("source: {}", code(e))))?,
                ),
                (Via::Splice, None) => {
                    return Err(ToolError::invalid_input("splice needs a source"));
                }
                _ => None,
            };
            stream(&out, input.via, total, &mut done, &chunk, source.as_ref())
        }
        Via::Append => {
            let out = file
                .append_via_stream()
                .map_err(|e| ToolError::io(code(e)))?;
            stream(&out, Via::BlockingStream, total, &mut done, &chunk, None)
        }
        Via::Std => None,
    };
    Ok((done, stopped))
}

/// Write through `out` until `total` or an error.
fn stream(
    out: &OutputStream,
    via: Via,
    total: u64,
    done: &mut u64,
    chunk: &[u8],
    source: Option<&Descriptor>,
) -> Option<String> {
    while *done < total {
        let step = SMALL.min(total - *done);
        let result = match via {
            Via::BlockingStream => out
                .blocking_write_and_flush(&chunk[..step as usize])
                .map(|()| step),
            Via::Zeroes => out.blocking_write_zeroes_and_flush(step).map(|()| step),
            Via::Splice => match source.map(|s| s.read_via_stream(0)) {
                Some(Ok(from)) => out.blocking_splice(&from, CHUNK.min(total - *done)),
                Some(Err(e)) => return Some(format!("source: {}", code(e))),
                None => return Some("no source".to_string()),
            },
            _ => match out.check_write() {
                Ok(0) => {
                    out.subscribe().block();
                    continue;
                }
                Ok(permit) => {
                    let n = permit.min(CHUNK).min(total - *done);
                    out.write(&chunk[..n as usize]).map(|()| n)
                }
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(0) => return Some("wrote nothing".to_string()),
            Ok(n) => *done += n,
            Err(e) => return Some(stream_code(e)),
        }
    }
    out.blocking_flush().err().map(stream_code)
}

fn flood_std(path: &str, total: u64) -> (u64, Option<String>) {
    let path = format!("/workspace/{path}");
    let mut file = match std::fs::File::create(&path) {
        Ok(f) => f,
        Err(e) => return (0, Some(format!("open: {e}"))),
    };
    let chunk = vec![b'x'; CHUNK as usize];
    let mut done = 0;
    while done < total {
        let n = CHUNK.min(total - done) as usize;
        if let Err(e) = file.write_all(&chunk[..n]) {
            return (done, Some(format!("{e} (kind: {:?})", e.kind())));
        }
        done += n as u64;
    }
    (done, None)
}

/// Writes `bytes` into a workspace file one way, stopping at the first
/// refused write.
pub struct WriteFlood;

impl Tool for WriteFlood {
    type Input = FloodInput;
    const NAME: &'static str = "write_flood";
    const DESCRIPTION: &'static str = "Create a workspace file and write `bytes` into it through \
         one WASI write path, stopping at the first write that fails.";
    const ANNOTATIONS: Annotations = Annotations::DESTRUCTIVE;

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "via": {"enum": ["write", "hole", "stream", "blocking_stream", "append",
                                 "zeroes", "splice", "set_size", "std"]},
                "bytes": {"type": "integer", "minimum": 0},
                "source": {"type": "string"}
            },
            "required": ["path", "via", "bytes"]
        })
    }

    fn call(&self, input: FloodInput, _cx: &Context) -> Result<Output, ToolError> {
        match flood(&input)? {
            (done, None) => Ok(Output::text(format!("wrote {done} bytes"))),
            (done, Some(why)) => Err(ToolError::io(format!(
                "stopped after {done} bytes via {:?}: {why}",
                input.via
            ))),
        }
    }
}
