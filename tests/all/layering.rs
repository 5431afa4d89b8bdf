//! The host's modules form the layers `host/src/lib.rs` lists: no
//! `crate::` path points at a module listed later, and the files of a
//! module do not use each other in a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layer order, read from the numbered list in `lib.rs`'s docs.
fn layers() -> Vec<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! "))
        .filter_map(|l| {
            let (number, rest) = l.split_once(". [`")?;
            number.parse::<u32>().ok()?;
            Some(rest.split('`').next()?.to_string())
        })
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The code of a file without its comments (doc links name other
/// modules without using them).
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segment of every path that starts with `prefix`, including
/// each item of a `prefix{a::x, b}` group.
fn first_segments(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    names.insert(ident(item.trim()));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else if depth == 1 {
                    item.push(c);
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names.remove("");
    names
}

/// The top-level module a file belongs to.
fn top_module(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn no_module_uses_one_listed_after_it() {
    let order = layers();
    assert!(order.len() > 10, "lib.rs lists the layers: {order:?}");
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut upward = Vec::new();
    for file in rust_files(&src()) {
        let module = top_module(&file);
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(&mine) = rank.get(module.as_str()) else {
            panic!("module `{module}` is not in the layer list of lib.rs");
        };
        for used in first_segments(&code(&file), "crate::") {
            if let Some(&theirs) = rank.get(used.as_str())
                && theirs > mine
            {
                upward.push(format!(
                    "{} uses crate::{used}, a higher layer than {module}",
                    file.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "edges pointing up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn every_module_in_lib_rs_is_in_the_layer_list() {
    let lib = code(&src().join("lib.rs"));
    let order = layers();
    for line in lib.lines() {
        if let Some(name) = line.trim().strip_prefix("pub mod ") {
            let name = name.trim_end_matches([';', ' ', '{']);
            if name != "test_plugins" {
                assert!(order.iter().any(|m| m == name), "{name} is not layered");
            }
        }
    }
}

/// The sibling modules (files and folders) each file or folder of `dir`
/// uses through `super::`.
fn sibling_edges(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let siblings: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "mod" && n != "lib" && n != "main")
        .collect();
    let mut edges = BTreeMap::new();
    for name in &siblings {
        let path = dir.join(name);
        // A folder is one node; its files reach its siblings through one
        // more `super::` per level below the folder.
        let files: Vec<(PathBuf, usize)> = if path.is_dir() {
            rust_files(&path)
                .into_iter()
                .map(|f| {
                    let depth = f.strip_prefix(&path).unwrap().components().count();
                    let is_mod = f.file_name().is_some_and(|n| n == "mod.rs");
                    let ups = if is_mod { depth } else { depth + 1 };
                    (f, ups)
                })
                .collect()
        } else {
            vec![(path.with_extension("rs"), 1)]
        };
        let mut used = BTreeSet::new();
        for (file, ups) in files {
            let prefix = "super::".repeat(ups);
            let text = code(&file);
            used.extend(
                first_segments(&text, &prefix)
                    .into_iter()
                    .filter(|u| siblings.contains(u) && u != name),
            );
        }
        edges.insert(name.clone(), used);
    }
    edges
}

/// A cycle in `edges`, if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node)
            && let Some(c) = visit(node, edges, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_files_of_a_module_use_each_other_without_cycles() {
    let mut dirs = vec![src()];
    let mut cycles = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            }
        }
        if dir == src() {
            continue;
        }
        if let Some(cycle) = find_cycle(&sibling_edges(&dir)) {
            cycles.push(format!(
                "{}: {}",
                dir.strip_prefix(src()).unwrap().display(),
                cycle.join(" -> ")
            ));
        }
    }
    assert!(cycles.is_empty(), "cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_checks_see_grouped_paths_and_cycles() {
    let found = first_segments(
        "use crate::{base::Limits, policy::{A, B}, runtime};\nlet x = crate::audit::x;",
        "crate::",
    );
    let want: BTreeSet<String> = ["audit", "base", "policy", "runtime"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, want);
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
            .collect();
    assert_eq!(
        find_cycle(&edges).unwrap(),
        ["a", "b", "c", "a"].map(String::from)
    );
}
