//! A decision against a generated policy of 1,000 rules (the goal is
//! ≤ 20 µs median): exact tool names, tool globs and `*`, with glob, prefix
//! and regex argument matchers; one call a deny rule matches, one no rule
//! matches (every candidate rule is evaluated, then the mode decides).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use warden::policy::{CallFacts, DecidedBy, Policy, Verdict};
use warden::protocol::Annotations;

const RULES: usize = 1_000;

/// 1,000 rules, a quarter of each shape, none shadowing another.
fn generate() -> String {
    let mut s = String::from("name = \"bench\"\nmode = \"ask\"\n");
    for i in 0..RULES {
        let (tools, decision, matcher) = match i % 4 {
            0 => (
                format!("[\"tool_{}\"]", i % 37),
                "deny",
                format!("path = {{ glob = \"deny_{i}/**\" }}"),
            ),
            1 => (
                format!("[\"mcp_{}_*\"]", i % 11),
                "ask",
                format!("url = {{ prefix = \"https://host{i}.example/\" }}"),
            ),
            2 => (
                format!("[\"tool_{}\", \"tool_x{i}\"]", i % 37),
                "allow",
                format!("cmd = {{ regex = \"^run-{i}( |$)\" }}"),
            ),
            _ => (
                "[\"*\"]".to_string(),
                "allow",
                format!("path = {{ glob = [\"src/m{i}/*.rs\", \"docs/m{i}/**\"] }}"),
            ),
        };
        write!(
            s,
            "\n[[rule]]\nname = \"r{i}\"\ntools = {tools}\ndecision = \"{decision}\"\n\
             [rule.args]\n{matcher}\n"
        )
        .unwrap();
    }
    s
}

fn bench(c: &mut Criterion) {
    let policy = Policy::parse(&generate(), "bench.toml").unwrap();
    assert_eq!(policy.rules.len(), RULES);
    let writes = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
    // Rule 4 is `tool_4`, deny, `deny_4/**`; rules 152, 300, ... also list tool_4.
    let matching = json!({"path": "./deny_4/a/../secret.txt", "cmd": "build"});
    let nothing =
        json!({"path": "src/main.rs", "cmd": "build --release", "content": "x".repeat(200)});
    let call = |input| CallFacts {
        tool: "tool_4",
        plugin: "p",
        annotations: writes,
        input,
    };
    let d = policy.decide(&call(&matching));
    assert_eq!(d.verdict, Verdict::Deny);
    assert_eq!(
        d.by,
        DecidedBy::Rule {
            index: Some(4),
            name: "r4".into()
        }
    );
    let d = policy.decide(&call(&nothing));
    assert_eq!(
        (d.verdict, d.by),
        (Verdict::Ask, DecidedBy::Mode(policy.mode))
    );

    let mut g = c.benchmark_group("policy_decide_1000_rules");
    g.bench_function("matching_deny", |b| {
        b.iter(|| black_box(policy.decide(black_box(&call(&matching)))))
    });
    g.bench_function("no_rule_matches", |b| {
        b.iter(|| black_box(policy.decide(black_box(&call(&nothing)))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
