//! The harness itself works: built-ins load and a read succeeds.

use serde_json::json;
use warden::capability::WriteMode;

use crate::support::*;

#[test]
fn read_file_through_the_pipeline() {
    let sb = Sandbox::new();
    sb.write("hello.txt", "hello\nworld\n");
    let r = call(
        "read_file",
        json!({"path": "hello.txt"}),
        &sb.ws(),
        WriteMode::ReadOnly,
    );
    assert_eq!(ok(&r).text, "     1\thello\n     2\tworld\n");
    sb.assert_canaries_intact();
}
