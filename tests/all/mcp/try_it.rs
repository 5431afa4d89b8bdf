//! The "try it" command of the README and of docs/mcp.md, run as a new
//! user would paste it: its JSON-RPC lines, fed to `warden mcp` with the
//! command's own arguments, in the checkout, must get the two answers the
//! text promises.

use std::io::Write;

use serde_json::json;

use super::*;

/// The lines the command's `printf` writes (its single-quoted JSON
/// arguments) and the arguments it gives `warden` after `cargo run … --`.
fn try_it_command(doc: &str) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(repo().join(doc)).unwrap();
    let block = text
        .split("```sh")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("notifications/initialized") && b.contains("cargo run"))
        .unwrap_or_else(|| panic!("{doc} has no try-it command"));
    let lines = block
        .split('\'')
        .skip(1)
        .step_by(2)
        .filter(|s| s.starts_with('{'))
        .map(str::to_string)
        .collect();
    let (_, args) = block
        .split_once("cargo run --release -q -- ")
        .unwrap_or_else(|| panic!("{doc}: the command does not run warden with cargo"));
    let args = args.split_whitespace().map(str::to_string).collect();
    (lines, args)
}

#[test]
fn the_try_it_commands_in_the_docs_answer_as_they_say() {
    for doc in ["README.md", "docs/mcp.md"] {
        let (lines, args) = try_it_command(doc);
        assert_eq!(lines.len(), 3, "{doc}: {lines:?}");
        assert_eq!(args[0], "mcp", "{doc}: {args:?}");
        let home = fresh_home();
        let mut child = warden(home.path())
            .args(&args)
            .current_dir(repo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for line in &lines {
            writeln!(stdin, "{line}").unwrap();
        }
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut answer = || {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{doc}: {e}: {line:?}"))
        };
        let hello = answer();
        assert_eq!(hello["id"], 1, "{doc}: {hello}");
        assert_eq!(
            hello["result"]["serverInfo"]["name"], "warden",
            "{doc}: {hello}"
        );
        let read = answer();
        drop(stdin);
        assert_eq!(read["id"], 2, "{doc}: {read}");
        assert_eq!(read["result"]["isError"], false, "{doc}: {read}");
        let text = read["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("# Warden"), "{doc}: {text}");
        let shown = &read["result"]["structuredContent"];
        assert_eq!(
            (&shown["start_line"], &shown["end_line"]),
            (&json!(1), &json!(3)),
            "{doc}: not the first three lines: {read}"
        );
        let status = child.wait().unwrap();
        assert!(status.success(), "{doc}: warden mcp exited with {status}");
    }
}

/// Each ```json and ```toml block of `doc`, with its language.
fn config_blocks(doc: &str) -> Vec<(&'static str, String)> {
    let text = std::fs::read_to_string(repo().join(doc)).unwrap();
    let mut blocks = Vec::new();
    for lang in ["json", "toml"] {
        let fence = format!("```{lang}\n");
        for part in text.split(&fence).skip(1) {
            let body = part.split("```").next().unwrap_or_default();
            blocks.push((lang, body.to_string()));
        }
    }
    blocks
}

#[test]
fn the_client_configurations_in_the_docs_parse_and_start_warden_mcp() {
    for doc in ["README.md", "docs/mcp.md"] {
        let mut servers = 0;
        for (lang, body) in config_blocks(doc) {
            let value: Value = match lang {
                "json" => serde_json::from_str(&body)
                    .unwrap_or_else(|e| panic!("{doc}: a JSON block does not parse: {e}\n{body}")),
                _ => toml::from_str(&body)
                    .unwrap_or_else(|e| panic!("{doc}: a TOML block does not parse: {e}\n{body}")),
            };
            let tables = ["servers", "mcpServers", "mcp_servers"];
            for server in tables.iter().filter_map(|t| value[*t].get("warden")) {
                assert_eq!(server["command"], "warden", "{doc}: {server}");
                assert_eq!(server["args"][0], "mcp", "{doc}: {server}");
                servers += 1;
            }
        }
        assert!(servers >= 2, "{doc}: {servers} client configurations found");
    }
}
