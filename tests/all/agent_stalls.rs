//! `warden run` against a model server that stops sending: the idle
//! timeout (flag or config file) retries the stream.

use serde_json::Value;
use warden::provider::WireFormat;

use crate::agent::Live;
use crate::agent_http::KEY;
use crate::mock_model::{MockModel, Reply, Script};
use crate::support::{Sandbox, fresh_home, shared_home, warden};

#[test]
fn a_stalled_stream_is_retried_after_the_idle_timeout_of_the_flag_or_the_config() {
    let home = fresh_home();
    std::fs::write(
        home.path().join("config.toml"),
        "[providers.openai]\nidle_timeout_secs = 1\n",
    )
    .unwrap();
    for (home, flag) in [
        (shared_home(), &["--idle-timeout", "1"][..]),
        (home.path(), &[][..]),
    ] {
        let sb = Sandbox::new();
        let server = MockModel::start(WireFormat::OpenAiChat);
        server.push(Reply::turn(Script::text("lost")).stall_after(2));
        server.push(Script::text("done"));
        let mut cmd = warden(home);
        cmd.env("OPENAI_API_KEY", KEY)
            .args(["run", "--json", "--provider", "openai"])
            .args(flag)
            .args(["--base-url", &server.base_url(), "-w"])
            .arg(sb.ws())
            .arg("x");
        let (code, events) = Live::of(cmd).finish();
        assert_eq!(code, Some(0), "{flag:?}: {events:#?}");
        let retrying: Vec<&Value> = events.iter().filter(|e| e["type"] == "retrying").collect();
        assert_eq!(retrying.len(), 1, "{flag:?}: {events:#?}");
        let reason = retrying[0]["reason"].as_str().unwrap();
        assert!(reason.contains("stalled: no event for 1s"), "{reason}");
        let finished = events.iter().find(|e| e["type"] == "finished").unwrap();
        assert_eq!(finished["answer"], "done");
    }
}
