//! Tools that try to exhaust the host: CPU, memory, stdout, output size, the
//! log channel, and wall-clock time.

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use warden_sdk::serde_json::{Value, json};
use warden_sdk::{Context, LogLevel, Output, Tool, ToolError};

use crate::{NoInput, mib_to_bytes, no_input_schema};

/// Bytes between two touched bytes, so every page of an allocation is committed.
const PAGE: usize = 4096;

/// Loops forever without yielding to the host.
pub struct Spin;

impl Tool for Spin {
    type Input = NoInput;
    const NAME: &'static str = "spin";
    const DESCRIPTION: &'static str = "Loop forever; never returns.";

    fn input_schema(&self) -> Value {
        no_input_schema()
    }

    fn call(&self, _input: NoInput, _cx: &Context) -> Result<Output, ToolError> {
        let mut counter: u64 = 0;
        loop {
            counter = black_box(counter.wrapping_add(1));
        }
    }
}

/// Allocates and touches memory until the host stops it.
pub struct AllocBomb;

#[derive(serde::Deserialize)]
pub struct AllocBombInput {
    #[serde(default = "sixteen")]
    chunk_mib: usize,
}

fn sixteen() -> usize {
    16
}

impl Tool for AllocBomb {
    type Input = AllocBombInput;
    const NAME: &'static str = "alloc_bomb";
    const DESCRIPTION: &'static str = "Allocate chunk_mib MiB chunks forever, writing one byte per 4 KiB page and keeping every chunk alive.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"chunk_mib": {"type": "integer", "minimum": 1, "default": 16}}
        })
    }

    fn call(&self, input: AllocBombInput, _cx: &Context) -> Result<Output, ToolError> {
        let chunk = mib_to_bytes(input.chunk_mib.max(1))?;
        let mut kept: Vec<Vec<u8>> = Vec::new();
        loop {
            let mut block = vec![0u8; chunk];
            for byte in block.iter_mut().step_by(PAGE) {
                *byte = 1;
            }
            kept.push(black_box(block));
            black_box(&kept);
        }
    }
}

/// Writes to stdout until `mib` MiB have gone out.
pub struct FloodStdout;

#[derive(serde::Deserialize)]
pub struct FloodStdoutInput {
    #[serde(default = "sixty_four")]
    mib: usize,
}

fn sixty_four() -> usize {
    64
}

impl Tool for FloodStdout {
    type Input = FloodStdoutInput;
    const NAME: &'static str = "flood_stdout";
    const DESCRIPTION: &'static str = "Write mib MiB to stdout in 64 KiB pieces; returns \"done\".";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"mib": {"type": "integer", "minimum": 0, "default": 64}}
        })
    }

    fn call(&self, input: FloodStdoutInput, _cx: &Context) -> Result<Output, ToolError> {
        const PIECE: usize = 64 * 1024;
        let total = mib_to_bytes(input.mib)?;
        let mut piece = vec![b'x'; PIECE];
        piece[PIECE - 1] = b'\n';
        let mut out = std::io::stdout().lock();
        for _ in 0..total / PIECE {
            out.write_all(&piece)
                .map_err(|e| ToolError::io(format!("stdout write failed: {e}")))?;
        }
        out.flush()
            .map_err(|e| ToolError::io(format!("stdout flush failed: {e}")))?;
        Ok(Output::text("done"))
    }
}

/// Returns an output far larger than any host should accept.
pub struct FloodOutput;

#[derive(serde::Deserialize)]
pub struct FloodOutputInput {
    #[serde(default = "thirty_two")]
    mib: usize,
}

fn thirty_two() -> usize {
    32
}

impl Tool for FloodOutput {
    type Input = FloodOutputInput;
    const NAME: &'static str = "flood_output";
    const DESCRIPTION: &'static str = "Return a text output of mib MiB.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"mib": {"type": "integer", "minimum": 0, "default": 32}}
        })
    }

    fn call(&self, input: FloodOutputInput, _cx: &Context) -> Result<Output, ToolError> {
        Ok(Output::text("x".repeat(mib_to_bytes(input.mib)?)))
    }
}

/// Calls the host's log function many times with long lines.
pub struct FloodLog;

#[derive(serde::Deserialize)]
pub struct FloodLogInput {
    #[serde(default = "hundred_thousand")]
    count: u64,
}

fn hundred_thousand() -> u64 {
    100_000
}

impl Tool for FloodLog {
    type Input = FloodLogInput;
    const NAME: &'static str = "flood_log";
    const DESCRIPTION: &'static str = "Log count lines of 1 KiB each through the host.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 0, "default": 100000}}
        })
    }

    fn call(&self, input: FloodLogInput, _cx: &Context) -> Result<Output, ToolError> {
        let line = "l".repeat(1024);
        for _ in 0..input.count {
            warden_sdk::log(LogLevel::Info, &line);
        }
        Ok(Output::text(format!("logged {} lines", input.count)))
    }
}

/// Spins until the host reports the call cancelled.
pub struct IsCancelledSpin;

impl Tool for IsCancelledSpin {
    type Input = NoInput;
    const NAME: &'static str = "is_cancelled_spin";
    const DESCRIPTION: &'static str =
        "Poll is_cancelled in a tight loop; returns \"cancelled observed\" once it is true.";

    fn input_schema(&self) -> Value {
        no_input_schema()
    }

    fn call(&self, _input: NoInput, _cx: &Context) -> Result<Output, ToolError> {
        while !warden_sdk::is_cancelled() {
            std::hint::spin_loop();
        }
        Ok(Output::text("cancelled observed"))
    }
}

/// Takes `ms` milliseconds, sleeping in the host or spinning in the guest.
pub struct SleepMs;

#[derive(serde::Deserialize)]
pub struct SleepMsInput {
    ms: u64,
    #[serde(default)]
    busy: bool,
}

impl Tool for SleepMs {
    type Input = SleepMsInput;
    const NAME: &'static str = "sleep_ms";
    const DESCRIPTION: &'static str = "Wait ms milliseconds, then return \"slept\". \
         With busy=true, spin on the clock instead of calling std::thread::sleep.";

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "ms": {"type": "integer", "minimum": 0},
                "busy": {"type": "boolean", "default": false}
            },
            "required": ["ms"]
        })
    }

    fn call(&self, input: SleepMsInput, _cx: &Context) -> Result<Output, ToolError> {
        let wait = Duration::from_millis(input.ms);
        if input.busy {
            let start = Instant::now();
            while start.elapsed() < wait {
                std::hint::spin_loop();
            }
        } else {
            std::thread::sleep(wait);
        }
        Ok(Output::text("slept"))
    }
}
