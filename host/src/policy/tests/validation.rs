//! Every validation error, with its location and message.

use super::*;

#[test]
fn unknown_keys_are_located() {
    assert_eq!(
        error("name = 'p'\nmood = 'ask'\n"),
        "test.toml:2:1: unknown field `mood`, expected one of `name`, `description`, `mode`, \
         `non_interactive`, `grants`, `rule`, `protected`, `test`, `credential`; remove it or fix \
         its spelling \
         (see policies/README.md)"
    );
    let e = error(
        "name = 'p'\n[[rule]]\nname = 'r'\ndecision = 'deny'\n[rule.args]\npath = { glob = '*', prefx = 'a' }\n",
    );
    assert!(
        e.starts_with(
            "test.toml:6:22: unknown field `prefx`, expected one of `glob`, `prefix`, `regex`"
        ),
        "{e}"
    );
    let e = error("name = 'p'\n[grants.default]\nworkspace = 'read-write'\nnetwrk = []\n");
    assert!(
        e.starts_with("test.toml:4:1: unknown field `netwrk`"),
        "{e}"
    );
    let e = error("name = 'p'\n[protected]\npath = []\n");
    assert!(e.starts_with("test.toml:3:1: unknown field `path`"), "{e}");
}

#[test]
fn bad_values_are_located() {
    let e = error("name = 'p'\nmode = 'yolo'\n");
    assert!(e.starts_with("test.toml:2:8: unknown variant `yolo`, expected one of `read-only`, `ask`, `auto-edit`, `auto`"), "{e}");
    assert_eq!(
        error("name = 'p'\n[grants.default]\nmemory_mib = 9000\n"),
        "test.toml:3:14: memory_mib must be between 1 and 4096 (the engine's ceiling)"
    );
    let e = error("name = 'p'\n[grants.default]\nnetwork = ['api.example.com']\n");
    assert!(
        e.starts_with("test.toml:3:1")
            && e.contains("`api.example.com` is not a destination: no scheme"),
        "{e}"
    );
    let e = error(
        "name = 'p'\n[grants.default]\nnetwork = [{ url = 'https://x.test', allow_private = ['10.0.0.0/33'] }]\n",
    );
    assert!(
        e.contains("`10.0.0.0/33` in `allow_private` is not an address or CIDR network"),
        "{e}"
    );
    let e = error("name = 'p'\n[grants.default]\ncredentials = ['gh']\n");
    assert!(e.contains("no [[credential]] has that name"), "{e}");
    let e = error(
        "name = 'p'\n[grants.default]\nextra_dirs = [{ path = '~/x', access = 'read-only' }]\n",
    );
    assert!(
        e.contains("extra directory `~/x` must be an absolute path"),
        "{e}"
    );
    for (path, problem) in [
        ("/data/../etc", "must be written plainly"),
        ("/data/", "must be written plainly"),
        ("/workspace", "clashes with `/workspace`"),
        ("/workspace/vendor", "clashes with `/workspace`"),
    ] {
        let e = error(&format!(
            "name = 'p'\n[grants.default]\nextra_dirs = [{{ path = '{path}', access = 'read-only' }}]\n"
        ));
        assert!(
            e.starts_with("test.toml:3:") && e.contains(problem),
            "{path}: {e}"
        );
    }
    let e = error("name = 'p'\n[[test]]\nname = 't'\ntool = 'x'\ninput = 3\nexpect = 'allow'\n");
    assert!(
        e.starts_with("test.toml:5:9: `input` must be a table of arguments"),
        "{e}"
    );
}

#[test]
fn bad_globs_and_regexes_name_the_rule_and_field() {
    assert_eq!(
        error(
            "name = 'p'\n[[rule]]\nname = 'r'\ndecision = 'deny'\n[rule.args]\npath = { glob = 'src/[a' }\n"
        ),
        "test.toml:6:8: rule `r`: bad glob `src/[a` in `args.path`: unclosed character class; missing ']'; fix the pattern"
    );
    assert_eq!(
        error("name = 'p'\n[[rule]]\nname = 'r'\ntools = ['a{b']\ndecision = 'deny'\n"),
        "test.toml:4:9: rule `r`: bad glob `a{b` in `tools`: unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?); fix the pattern"
    );
    let e = error(
        "name = 'p'\n[[rule]]\nname = 'r'\ndecision = 'deny'\n[rule.args]\ncmd = { regex = '(unclosed' }\n",
    );
    assert!(
        e.starts_with("test.toml:6:7: rule `r`: bad regex in `args.cmd`: regex parse error:"),
        "{e}"
    );
    assert!(e.ends_with("; fix the pattern") && !e.contains('\n'), "{e}");
    assert_eq!(
        error(
            "name = 'p'\n[[rule]]\nname = 'r'\ndecision = 'deny'\n[rule.args]\ncmd = { prefix = 'a', regex = 'b' }\n"
        ),
        "test.toml:6:7: rule `r`: the matcher for `args.cmd` needs exactly one of `glob`, `prefix` or `regex`"
    );
    assert_eq!(
        error("name = 'p'\n[protected]\npaths = ['ok/**', 'bad[']\n"),
        "test.toml:3:19: bad glob `bad[` in `protected.paths`: unclosed character class; missing ']'; fix the pattern"
    );
}

#[test]
fn duplicate_rule_names() {
    assert_eq!(
        error(
            "name = 'p'\n[[rule]]\nname = 'r'\ntools = ['a']\ndecision = 'deny'\n[[rule]]\nname = 'r'\ntools = ['b']\ndecision = 'deny'\n"
        ),
        "test.toml:7:8: duplicate rule name `r` (first used on line 3); give each rule a unique name"
    );
}

#[test]
fn unreachable_rules() {
    let shadowed_by_earlier = "name = 'p'
[[rule]]
name = 'all-writes'
tools = ['write_file']
decision = 'ask'
[[rule]]
name = 'src-writes'
tools = ['write_file']
decision = 'ask'
[rule.args]
path = { glob = 'src/**' }
";
    assert_eq!(
        error(shadowed_by_earlier),
        "test.toml:7:8: rule `src-writes` can never decide: rule `all-writes` (line 3) applies to \
         the same tools with a subset of its argument matchers and takes precedence (deny beats ask \
         beats allow, then the earlier rule); remove `src-writes` or narrow `all-writes`"
    );
    let shadowed_by_stronger = "name = 'p'
[[rule]]
name = 'allow-src'
tools = ['edit_file', 'write_file']
decision = 'allow'
[rule.args]
path = { glob = 'src/**' }
[[rule]]
name = 'deny-all'
tools = ['write_file', 'edit_file']
decision = 'deny'
";
    let e = error(shadowed_by_stronger);
    assert!(
        e.starts_with(
            "test.toml:3:8: rule `allow-src` can never decide: rule `deny-all` (line 9) \
             applies to the same tools with a subset"
        ),
        "{e}"
    );
    // A weaker general rule before a stronger specific one is fine.
    policy(
        "name = 'p'\n[[rule]]\nname = 'a'\ntools = ['w']\ndecision = 'allow'\n[[rule]]\nname = 'd'\ntools = ['w']\ndecision = 'deny'\n[rule.args]\npath = { glob = '.x' }\n",
    );
}

#[test]
fn contradictory_rules() {
    assert_eq!(
        error(
            "name = 'p'\n[[rule]]\nname = 'yes'\ntools = ['w']\ndecision = 'allow'\n[rule.args]\np = { prefix = 'a' }\n[[rule]]\nname = 'no'\ntools = ['w']\ndecision = 'deny'\n[rule.args]\np = { prefix = 'a' }\n"
        ),
        "test.toml:3:8: rules `yes` (line 3) and `no` match exactly the same calls but decide allow \
         and deny; keep one of them, or give one a narrower argument matcher"
    );
    let e = error("name = 'p'\n[[rule]]\nname = 'r'\ntools = []\ndecision = 'deny'\n");
    assert!(
        e.starts_with("test.toml:4:9: rule `r`: `tools` is empty"),
        "{e}"
    );
}

#[test]
fn load_file_reports_missing_files() {
    let e = Policy::load_file(std::path::Path::new("/nonexistent/p.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot read policy file /nonexistent/p.toml: "),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, "name = 'mine'\nbad = 1\n").unwrap();
    let e = Policy::load_file(&path).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:2:1: unknown field `bad`", path.display())),
        "{e}"
    );
}
