//! The guest workspace's own unit tests (SDK path mapping, plugin logic),
//! run natively so that one `cargo test` covers the whole suite.

#[test]
fn plugin_workspace_unit_tests_pass() {
    let _heavy = crate::support::exclusive();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("plugins-native");
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "test",
            "--release",
            "--locked",
            "--workspace",
            "--manifest-path",
        ])
        .arg(root.join("plugins/Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "guest unit tests failed:\n{text}");
    let passed: usize = text
        .lines()
        .filter_map(|l| l.strip_prefix("test result: ok. "))
        .filter_map(|l| l.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert!(
        passed >= 30,
        "expected the guest unit tests to run, saw {passed} passing:\n{text}"
    );
}
