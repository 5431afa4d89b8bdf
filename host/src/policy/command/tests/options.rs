//! Options that make a reader write or run something are flagged, in every
//! spelling; harmless options are not.

use super::*;

#[test]
fn find_actions_that_run_delete_or_write_are_flagged() {
    assert_eq!(risky("find . -name x -delete"), ["-delete"]);
    assert_eq!(risky("find . -exec rm {} ;"), ["-exec"]);
    assert_eq!(
        risky("find . -execdir x \\; -ok y \\;"),
        ["-execdir", "-ok"]
    );
    assert_eq!(risky("find . -fprint out"), ["-fprint"]);
    assert!(risky("find . -name '*.rs' -type f -print").is_empty());
    assert_eq!(risky("/usr/bin/find . -delete"), ["-delete"]);
    assert_eq!(risky("fd x -x rm"), ["-x"]);
    assert_eq!(risky("fd x --exec-batch rm"), ["--exec-batch"]);
}

#[test]
fn git_configuration_and_programs_on_the_command_line_are_flagged() {
    assert_eq!(risky("git -c core.pager=sh status"), ["-c"]);
    assert_eq!(
        risky("git --config-env=core.pager=X log"),
        ["--config-env=core.pager=X"]
    );
    assert_eq!(risky("git --exec-path=/tmp status"), ["--exec-path=/tmp"]);
    assert_eq!(
        risky("git ls-remote --upload-pack=sh x"),
        ["--upload-pack=sh"]
    );
    assert_eq!(risky("git grep -O foo"), ["-O"]);
    assert_eq!(risky("git diff --ext-diff"), ["--ext-diff"]);
    assert_eq!(
        writes("git diff --output=x.patch"),
        ["`git --output` x.patch"]
    );
    assert_eq!(writes("git log --output x"), ["`git --output` x"]);
    // `-c` after the subcommand is the subcommand's own option.
    assert!(risky("git switch -c topic").is_empty());
    assert!(risky("git -C sub --no-pager log --oneline").is_empty());
}

#[test]
fn ripgrep_preprocessors_are_flagged() {
    assert_eq!(risky("rg --pre=sh x"), ["--pre=sh"]);
    assert_eq!(risky("rg --pre sh x"), ["--pre"]);
    assert!(risky("rg --pre-glob '*.gz' x").is_empty());
}

#[test]
fn sed_in_place_and_scripts_that_write_or_run_are_flagged() {
    assert_eq!(risky("sed -i s/a/b/ f"), ["-i"]);
    assert_eq!(risky("sed -ni p f"), ["-ni"]);
    assert_eq!(risky("sed --in-place=.bak s/a/b/ f"), ["--in-place=.bak"]);
    assert_eq!(risky("sed -f script.sed f"), ["-f"]);
    assert_eq!(risky("sed 's/x/y/w out' f"), ["s/x/y/w out"]);
    assert_eq!(risky("sed -n -e p -e '1e id' f"), ["1e id"]);
    assert!(risky("sed -n 1,5p f").is_empty());
    assert!(risky("sed --sandbox 's/a/e/w x' f").is_empty());
}

#[test]
fn awk_programs_that_write_or_run_are_flagged() {
    assert!(risky("awk '{print $1}' f").is_empty());
    assert_eq!(risky("awk '{system(\"id\")}' f"), ["{system(\"id\")}"]);
    assert_eq!(risky("awk '{print > \"x\"}'"), ["{print > \"x\"}"]);
    assert_eq!(risky("gawk '{print | \"sh\"}'"), ["{print | \"sh\"}"]);
    assert_eq!(risky("awk -f prog.awk f"), ["-f"]);
    assert_eq!(risky("awk -F: -v x=1 '{system(x)}'"), ["{system(x)}"]);
}

#[test]
fn output_options_are_writes_to_their_file() {
    assert_eq!(writes("sort -o out f"), ["`sort -o` out"]);
    assert_eq!(writes("sort -oout f"), ["`sort -o` out"]);
    assert_eq!(writes("sort --output=out f"), ["`sort -o` out"]);
    assert_eq!(writes("sort -ro out f"), ["`sort -o` ?"]);
    assert!(writes("sort -k1 -n f").is_empty());
    assert_eq!(writes("tee -a a b"), ["`tee` a", "`tee` b"]);
    assert_eq!(writes("time -o t.txt make"), ["`time -o` t.txt"]);
}

#[test]
fn other_programs_that_run_programs_are_flagged() {
    assert_eq!(risky("tar --to-command=sh -xf a.tar"), ["--to-command=sh"]);
    assert_eq!(risky("tar -xIzstd -f a.tar"), ["-xIzstd"]);
    assert_eq!(risky("tar xIf zstd a.tar"), ["xIf"]);
    assert!(risky("tar -tvf a.tar").is_empty());
    assert_eq!(
        risky("cargo --config 'build.rustc-wrapper=\"sh\"' build"),
        ["--config"]
    );
    assert!(risky("cargo test --workspace -- --nocapture").is_empty());
}

#[test]
fn a_sed_script_given_with_its_option_is_checked_alone() {
    assert!(risky("sed -es/a/b/ f").is_empty());
    assert!(risky("sed --expression=s/a/b/ f").is_empty());
    assert_eq!(risky("sed -e's/a/b/e' f"), ["-es/a/b/e"]);
}
