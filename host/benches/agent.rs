//! Cost of the turn loop itself, and what parallel reads buy.
//!
//! - `turn_overhead`: 20 turns, each calling a tool that does not exist (so
//!   no tool runs: what is left is request building, stream handling,
//!   scheduling, the pipeline's rejection, events and the session record
//!   with its sync at the turn boundary), plus the final answer; reported
//!   per run, divide by 21 for one turn.
//! - `reads_1` and `reads_8`: one turn with one `read_file` call, and one
//!   turn with eight, then the answer (default parallelism, 4); then their
//!   ratio from runs made side by side (printed, not a criterion result).
//!
//! The model is a recording played back in process, so no model time counts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use warden::agent::{Agent, AgentConfig, Interrupt, LoopLimits, SessionStore};
use warden::home::Home;
use warden::plugin::Catalog;
use warden::policy::Policy;
use warden::provider::{Provider, ReplayProvider};

const AUTO: &str = "name = \"bench\"\ndescription = \"bench\"\nmode = \"auto\"\n\
[grants.default]\nworkspace = \"read-write\"\nnetwork = []\n";

fn recording(path: &Path, turns: &[Vec<(String, String, String)>]) {
    let mut text = json!({"warden_replay": 1, "source": "bench"}).to_string() + "\n";
    for calls in turns {
        let t = json!({
            "text": "",
            "tool_calls": calls.iter().map(|(id, name, args)| json!({"id": id, "name": name, "arguments": args})).collect::<Vec<_>>(),
            "usage": null,
            "finish": {"type": "tool_calls"},
        });
        text += &(t.to_string() + "\n");
    }
    text += &(json!({"text": "done", "tool_calls": [], "usage": null, "finish": {"type": "stop"}})
        .to_string()
        + "\n");
    std::fs::write(path, text).unwrap();
}

struct Bench {
    catalog: Arc<Catalog>,
    policy: Arc<Policy>,
    store: SessionStore,
    ws: std::path::PathBuf,
    rt: tokio::runtime::Runtime,
}

impl Bench {
    fn run(&self, replay: &Path) {
        let mut config = AgentConfig::new(self.ws.clone(), "bench".into());
        config.loops = LoopLimits {
            same_call: 1000,
            same_text: 1000,
            consecutive_errors: 1000,
        };
        let agent = Agent {
            catalog: self.catalog.clone(),
            policy: self.policy.clone(),
            provider: Provider::Replay(ReplayProvider::open(replay).unwrap()),
            recorder: None,
            config,
            events: Arc::new(|_| {}),
            interrupt: Interrupt::default(),
            audit: None,
            approvals: Arc::new(warden::approval::Approvals::non_interactive()),
            interaction: None,
        };
        self.rt.block_on(async {
            let mut session = self
                .store
                .create("bench", "ws", "bench", "replay", "bench")
                .unwrap();
            let summary = agent.run(&mut session, Vec::new(), "bench", 0).await;
            assert!(summary.reason.is_success(), "{}", summary.reason);
        });
    }
}

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let home = Home::at(home.path().to_path_buf());
    let ws = tempfile::tempdir().unwrap();
    for i in 0..8 {
        std::fs::write(
            ws.path().join(format!("f{i}.txt")),
            "one\ntwo\nthree\n".repeat(20),
        )
        .unwrap();
    }
    let b = Bench {
        catalog: Arc::new(Catalog::open(&home).unwrap()),
        policy: Arc::new(Policy::parse(AUTO, "bench.toml").unwrap()),
        store: SessionStore::new(&home),
        ws: std::fs::canonicalize(ws.path()).unwrap(),
        rt: tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap(),
    };
    let scripts = tempfile::tempdir().unwrap();

    let overhead = scripts.path().join("overhead.jsonl");
    let turns: Vec<_> = (0..20)
        .map(|i| {
            vec![(
                format!("c{i}"),
                "no_such_tool".to_string(),
                format!("{{\"i\":{i}}}"),
            )]
        })
        .collect();
    recording(&overhead, &turns);
    c.bench_function("turn_overhead_21_turns", |bn| bn.iter(|| b.run(&overhead)));

    let mut reads = Vec::new();
    for n in [1usize, 8] {
        let path = scripts.path().join(format!("reads{n}.jsonl"));
        let calls = (0..n)
            .map(|i| {
                (
                    format!("r{i}"),
                    "read_file".to_string(),
                    format!("{{\"path\":\"f{i}.txt\"}}"),
                )
            })
            .collect();
        recording(&path, &[calls]);
        b.run(&path); // warm the compiled component
        c.bench_function(&format!("reads_{n}"), |bn| bn.iter(|| b.run(&path)));
        reads.push(path);
    }
    paired_ratio(&b, &reads[0], &reads[1]);
}

/// Pairs of runs for the parallel-reads ratio.
const PAIRS: usize = 300;

/// `reads_8 / reads_1` from runs made side by side. Absolute times on a
/// shared VM drift between criterion's groups, which run seconds apart, and
/// the ratio of two medians inherits that drift; within a pair it cancels.
/// Prints the median ratio and its interquartile range.
fn paired_ratio(b: &Bench, one: &Path, eight: &Path) {
    let time = |path: &Path| {
        let start = std::time::Instant::now();
        b.run(path);
        start.elapsed().as_secs_f64()
    };
    // Alternate which run goes first, so neither always finds the caches warm.
    let mut ones = Vec::with_capacity(PAIRS);
    let mut eights = Vec::with_capacity(PAIRS);
    let mut ratios: Vec<f64> = (0..PAIRS)
        .map(|i| {
            let (t1, t8) = if i % 2 == 0 {
                let t8 = time(eight);
                (time(one), t8)
            } else {
                let t1 = time(one);
                (t1, time(eight))
            };
            ones.push(t1);
            eights.push(t8);
            t8 / t1
        })
        .collect();
    let quantile = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    println!(
        "reads_8 / reads_1, {PAIRS} side-by-side pairs: median {:.2}x (interquartile {:.2}x to {:.2}x); \
         medians {:.2} ms and {:.2} ms",
        quantile(&mut ratios, 0.5),
        quantile(&mut ratios, 0.25),
        quantile(&mut ratios, 0.75),
        quantile(&mut ones, 0.5) * 1e3,
        quantile(&mut eights, 0.5) * 1e3,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
