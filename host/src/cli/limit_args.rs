//! The per-call limit flags of `warden tool call` and `warden mcp`.

use clap::Args;

use crate::base::Limits;
use crate::policy::LimitOverrides;

/// Per-call limits asked for on the command line.
#[derive(Debug, Clone, Default, Args)]
pub struct LimitArgs {
    /// Wall-clock deadline in milliseconds [default: 30000].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: Option<u64>,
    /// Memory cap in MiB [default: 256].
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub memory_mib: Option<u64>,
    /// Result text cap in bytes [default: 1048576].
    #[arg(long, value_name = "BYTES")]
    pub max_output_bytes: Option<usize>,
    /// Set any per-call limit, e.g. `--limit log-lines=50` (repeatable). Keys:
    /// deadline-ms, memory-mib, output-bytes, stdio-bytes, log-lines, log-bytes,
    /// progress-events, hostcall-fuel, resource-handles, random-bytes,
    /// http-request-bytes, http-response-bytes, http-requests, workers, write-bytes.
    /// A limit the policy sets is a ceiling: asking for more is a usage error.
    #[arg(long = "limit", value_name = "KEY=VALUE")]
    pub limits: Vec<String>,
}

/// The limits the flags set: those no policy governs, applied to the
/// defaults, and the deadline, memory, output, HTTP, workers and write
/// limits asked for,
/// which a policy caps (the pipeline refuses a request above its ceiling).
pub(super) fn requested_limits(args: &LimitArgs) -> Result<(Limits, LimitOverrides), String> {
    let mut limits = Limits::default();
    let mut requests = LimitOverrides::default();
    let mut settings: Vec<(String, u64)> = Vec::new();
    settings.extend(args.timeout_ms.map(|v| ("deadline-ms".to_string(), v)));
    settings.extend(args.memory_mib.map(|v| ("memory-mib".to_string(), v)));
    settings.extend(
        args.max_output_bytes
            .map(|v| ("output-bytes".to_string(), v as u64)),
    );
    for setting in &args.limits {
        let (k, v) = setting
            .split_once('=')
            .ok_or_else(|| format!("--limit {setting}: expected KEY=VALUE"))?;
        let value = v
            .parse::<u64>()
            .map_err(|_| format!("--limit {setting}: {v} is not a whole number"))?;
        settings.push((k.to_string(), value));
    }
    for (key, value) in settings {
        limits.set(&key, value)?;
        match key.as_str() {
            "deadline-ms" => requests.deadline = Some(limits.deadline),
            "memory-mib" => requests.memory_bytes = Some(limits.memory_bytes),
            "output-bytes" => requests.output_bytes = Some(limits.output_bytes),
            "http-request-bytes" => requests.http_request_bytes = Some(value),
            "http-response-bytes" => requests.http_response_bytes = Some(value),
            "http-requests" => requests.http_requests = Some(value),
            "workers" => requests.workers = Some(limits.workers),
            "write-bytes" => requests.write_bytes = Some(value),
            _ => {}
        }
    }
    Ok((limits, requests))
}
