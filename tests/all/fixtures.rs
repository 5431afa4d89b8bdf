//! Every tool of every fixture plugin is exercised by some test: a hostile
//! fixture nobody calls proves nothing.

use std::path::Path;

use crate::support::*;

fn test_sources() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tests/all");
    let mut text = String::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("fixtures.rs") {
                text.push_str(&std::fs::read_to_string(p).unwrap());
            }
        }
    }
    text
}

#[test]
fn every_fixture_tool_is_used_by_a_test() {
    let sources = test_sources();
    let mut unused = Vec::new();
    for plugin in [hostile(), echo(), netprobe()] {
        for tool in plugin.tools() {
            if !sources.contains(&format!("\"{}\"", tool.name)) {
                unused.push(format!("{}/{}", plugin.name(), tool.name));
            }
        }
    }
    assert!(unused.is_empty(), "fixture tools no test calls: {unused:?}");
}
