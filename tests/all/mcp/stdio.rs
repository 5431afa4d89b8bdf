//! The Python SDK drives `warden mcp` over stdio, as Claude Code, Codex or
//! Cursor start it.

use serde_json::{Value, json};

use super::*;

/// What a client sees on a first visit, over stdio or HTTP: the listing
/// (plugin schemas, hints, a denied tool hidden), a read, a denial, a
/// protected path, an unknown tool and a schema violation.
pub(crate) fn assert_tour(seen: &Value) {
    assert_eq!(seen["server"], "warden");
    assert_eq!(seen["list_changed"], true);
    let tools = &seen["tools"];
    let read = &tools["read_file"];
    assert_eq!(
        read["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}),
        "{read}"
    );
    assert_eq!(read["input_schema"]["required"], json!(["path"]), "{read}");
    assert_eq!(tools["write_file"]["annotations"]["readOnlyHint"], false);
    assert_eq!(tools["sleep_ms"]["input_schema"]["required"], json!(["ms"]));
    assert!(
        tools.get("http_fetch").is_none(),
        "a denied tool is listed: {tools}"
    );

    assert_eq!(seen["read"]["is_error"], false, "{seen}");
    let read = seen["read"]["text"].as_str().unwrap();
    assert!(read.contains("hello from the workspace"), "{read}");

    let denied = &seen["denied_write"];
    assert_eq!(denied["is_error"], true, "{denied}");
    let text = denied["text"].as_str().unwrap();
    assert!(
        text.starts_with("denied: denied by rule no-locked of policy mcp-test"),
        "{text}"
    );

    let protected = seen["protected"]["text"].as_str().unwrap();
    assert!(protected.contains("rule protected-paths"), "{protected}");
    assert!(
        protected.contains("`.git/config` is a protected path"),
        "{protected}"
    );

    let hidden = seen["hidden_call"]["text"].as_str().unwrap();
    assert!(hidden.contains("denied by rule offline"), "{hidden}");

    let unknown = &seen["unknown"]["protocol_error"];
    assert_eq!(unknown["code"], -32602, "{seen}");
    let message = unknown["message"].as_str().unwrap();
    assert!(message.contains("did you mean `read_file`"), "{message}");

    let schema = &seen["schema"];
    assert_eq!(schema["is_error"], true, "{schema}");
    let text = schema["text"].as_str().unwrap();
    assert!(
        text.contains("does not match the schema of read_file: input.path"),
        "{text}"
    );
}

#[test]
fn a_python_client_lists_reads_and_is_refused_over_stdio() {
    let setup = Setup::new("auto");
    let home = home();
    let seen = client("tour", setup.stdio(home, &[]));
    assert_tour(&seen);
    assert!(!setup.sandbox.exists("locked/x.txt"));
    setup.sandbox.assert_canaries_intact();

    let calls = records(home, "read_file");
    let ours: Vec<_> = calls
        .iter()
        .filter(|c| c["arguments"]["path"] == "hello.txt")
        .collect();
    assert!(!ours.is_empty(), "no audit record of the read");
    for c in &ours {
        assert_eq!(c["caller"], "mcp:warden-test-client/1.2.3", "{c}");
    }
    let unknown = records(home, "reed_file");
    assert!(
        unknown
            .iter()
            .any(|c| c["caller"] == "mcp:warden-test-client/1.2.3"),
        "the unknown tool's call was not audited"
    );
}

#[test]
fn list_denied_shows_what_the_policy_refuses_outright() {
    let setup = Setup::new("auto");
    let seen = client("tour", setup.stdio(home(), &["--list-denied"]));
    let fetch = &seen["tools"]["http_fetch"]["description"];
    assert!(
        fetch
            .as_str()
            .unwrap()
            .starts_with("[DENIED: denied by rule offline of policy mcp-test: no network"),
        "{fetch}"
    );
}

#[test]
fn the_client_approves_declines_and_grants_for_the_session() {
    let setup = Setup::new("ask");
    let write = |path: &str| json!({"path": path, "content": "x"});
    let config = with(
        setup.stdio(home(), &[]),
        json!({
            "answers": ["allow_once", "decline", "deny:use notes/ instead", "allow_session"],
            "calls": [write("a.txt"), write("b.txt"), write("c.txt"), write("d.txt"), write("d.txt")],
        }),
    );
    let seen = client("approvals", config);
    assert!(
        seen["listed"]
            .as_array()
            .unwrap()
            .contains(&json!("write_file"))
    );
    let asked = seen["asked"].as_array().unwrap();
    assert_eq!(
        asked.len(),
        4,
        "the session grant did not cover the repeat: {seen}"
    );
    let first = asked[0].as_str().unwrap();
    assert!(first.contains("Allow the tool `write_file`"), "{first}");
    assert!(first.contains("ask mode of policy mcp-test"), "{first}");

    let results = seen["results"].as_array().unwrap();
    assert_eq!(results[0]["is_error"], false, "{seen}");
    assert_eq!(results[1]["is_error"], true);
    assert!(
        results[1]["text"]
            .as_str()
            .unwrap()
            .contains("denied by the user")
    );
    let said = results[2]["text"].as_str().unwrap();
    assert!(said.contains("saying: use notes/ instead"), "{said}");
    assert_eq!(results[3]["is_error"], false, "{seen}");
    assert_eq!(results[4]["is_error"], false, "{seen}");
    assert!(setup.sandbox.exists("a.txt") && setup.sandbox.exists("d.txt"));
    assert!(!setup.sandbox.exists("b.txt") && !setup.sandbox.exists("c.txt"));
}

#[test]
fn a_client_without_elicitation_is_never_asked_and_told_how_to_allow() {
    let setup = Setup::new("ask");
    let seen = client("no_elicitation", setup.stdio(home(), &[]));
    let listed = seen["listed"].as_array().unwrap();
    assert!(listed.contains(&json!("read_file")));
    assert!(!listed.contains(&json!("write_file")), "{listed:?}");
    let text = seen["result"]["text"].as_str().unwrap();
    assert!(
        text.contains("needs approval under ask mode of policy mcp-test"),
        "{text}"
    );
    assert!(
        text.contains("cannot be asked: it does not offer elicitation"),
        "{text}"
    );
    assert!(
        text.contains("warden policy explain --policy mcp-test write_file"),
        "{text}"
    );
    assert!(!setup.sandbox.exists("a.txt"));
}

#[test]
fn ask_user_is_put_to_the_client_by_elicitation_and_unanswered_without_it() {
    let setup = Setup::new("auto");
    let config = with(
        setup.stdio(home(), &[]),
        json!({"answers": ["blue, the darker one", "decline"]}),
    );
    let seen = client("ask_user", config);
    let asked = seen["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{seen}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(message.contains("Which colour?"), "{message}");
    let hint = asked[0]["schema"]["properties"]["answer"]["description"]
        .as_str()
        .unwrap();
    assert!(hint.contains("red | blue"), "{hint}");

    let results = seen["results"].as_array().unwrap();
    assert_eq!(results[0]["is_error"], false, "{seen}");
    assert_eq!(
        results[0]["structured"],
        json!({"answered": true, "answer": "blue, the darker one"})
    );
    assert!(
        results[0]["text"]
            .as_str()
            .unwrap()
            .contains("The user answered: blue, the darker one")
    );
    assert_eq!(results[1]["structured"]["answered"], false, "{seen}");
    assert!(
        results[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("No one can answer this question"),
        "{seen}"
    );
    let unaskable = &seen["unaskable"];
    assert_eq!(unaskable["structured"]["answered"], false, "{seen}");
    assert!(
        unaskable["text"]
            .as_str()
            .unwrap()
            .contains("No one can answer"),
        "{seen}"
    );
}

#[test]
fn a_cancelled_call_stops_its_guest_and_is_recorded_cancelled() {
    let setup = Setup::new("auto");
    let home = home();
    let seen = client(
        "cancel",
        with(setup.stdio(home, &[]), json!({"after": 0.5})),
    );
    assert_eq!(seen["next"]["is_error"], false, "{seen}");
    // The next call waited for the cancelled ones to leave the gate: had
    // they run on, it would have taken their 30 s or forever.
    assert!(seen["next_seconds"].as_f64().unwrap() < 5.0, "{seen}");
    for tool in ["sleep_ms", "is_cancelled_spin"] {
        let calls = records(home, tool);
        let last = calls
            .last()
            .unwrap_or_else(|| panic!("no record of {tool}"));
        assert_eq!(last["outcome"], "cancelled", "{last}");
        assert!(last["duration_ms"].as_u64().unwrap() < 5000, "{last}");
    }
}

#[test]
fn guest_progress_reaches_the_client_as_notifications() {
    let setup = Setup::new("auto");
    let seen = client("progress", setup.stdio(home(), &[]));
    assert_eq!(seen["result"]["text"], "reported 5", "{seen}");
    let progress = seen["progress"].as_array().unwrap();
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(values, vec![1.0, 2.0, 3.0, 4.0, 5.0], "{seen}");
    assert_eq!(progress[1]["message"], "step 2 of 5 (40%)");
}

#[test]
fn calls_that_write_run_one_at_a_time() {
    let setup = Setup::new("auto");
    let seen = client("gate", with(setup.stdio(home(), &[]), json!({"ms": 400})));
    let seconds = seen["seconds"].as_f64().unwrap();
    assert!(seconds >= 0.8, "two 400 ms calls overlapped: {seconds} s");
}

#[test]
fn installing_a_plugin_tells_the_session_its_tools_changed() {
    let home = fresh_home();
    let setup = Setup::new("auto");
    let config = with(
        setup.stdio(home.path(), &[]),
        json!({"warden": env!("CARGO_BIN_EXE_warden"), "component": warden::test_plugins::ECHO}),
    );
    let seen = client("list_changed", config);
    assert_eq!(seen["installed"], true, "{seen}");
    assert_eq!(seen["notified"], true, "{seen}");
    let before = seen["before"].as_array().unwrap();
    let after = seen["after"].as_array().unwrap();
    assert!(
        !before.contains(&json!("echo")) && after.contains(&json!("echo")),
        "{seen}"
    );
}

#[test]
fn a_root_inside_the_workspace_narrows_it() {
    let setup = Setup::new("auto");
    setup.sandbox.write("top.txt", "top\n");
    setup.sandbox.write("sub/inner.txt", "inner\n");
    let root = format!("file://{}", setup.sandbox.ws().join("sub").display());
    let seen = client(
        "roots",
        with(setup.stdio(home(), &[]), json!({"root": root})),
    );
    assert!(
        seen["inside"]["text"].as_str().unwrap().contains("inner"),
        "{seen}"
    );
    assert_eq!(seen["outside"]["is_error"], true, "{seen}");
}
