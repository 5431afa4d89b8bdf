//! A policy's own `[[test]]` cases: a tool, an input and the verdict the
//! author expects, run by `warden policy check`.

use serde::{Deserialize, Deserializer, Serialize, de::Error as _};

use super::{CallFacts, DecidedBy, Decision, Policy, Verdict, command};
use crate::protocol::Annotations;

/// One `[[test]]` case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyTest {
    /// Shown in the report.
    pub name: String,
    /// The tool called; its plugin and annotations come from the catalog.
    pub tool: String,
    /// The call's input, a JSON object (an inline TOML table).
    #[serde(deserialize_with = "object")]
    pub input: serde_json::Value,
    /// The verdict the policy must reach.
    pub expect: Verdict,
}

/// How one case went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestOutcome {
    /// The case's name.
    pub name: String,
    /// Whether the verdict was the expected one.
    pub passed: bool,
    /// What the case expected.
    pub expected: Verdict,
    /// What the policy decided, and by which rule or mode.
    pub got: Decision,
}

impl Policy {
    /// Run every `[[test]]` case. `lookup` maps a tool name to its plugin
    /// and annotations (a built-in tool it does not know, such as `shell`,
    /// gets its built-in facts); any other tool it does not know fails its
    /// case with a denial that says so.
    pub fn run_tests(
        &self,
        lookup: &dyn Fn(&str) -> Option<(String, Annotations)>,
    ) -> Vec<TestOutcome> {
        self.tests
            .iter()
            .map(|case| {
                let facts = lookup(&case.tool).or_else(|| command::builtin_facts(&case.tool));
                let (known, got) = match facts {
                    Some((plugin, annotations)) => (
                        true,
                        self.decide(&CallFacts {
                            tool: &case.tool,
                            plugin: &plugin,
                            annotations,
                            input: &case.input,
                        }),
                    ),
                    None => (
                        false,
                        Decision {
                            verdict: Verdict::Deny,
                            by: DecidedBy::Mode(self.mode),
                            reason: Some(format!(
                                "unknown tool `{}`: no installed plugin provides it \
                             (see `warden tool list`)",
                                case.tool
                            )),
                            parts: Vec::new(),
                        },
                    ),
                };
                TestOutcome {
                    name: case.name.clone(),
                    passed: known && got.verdict == case.expect,
                    expected: case.expect,
                    got,
                }
            })
            .collect()
    }
}

fn object<'de, D: Deserializer<'de>>(d: D) -> Result<serde_json::Value, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    if !value.is_object() {
        return Err(D::Error::custom(
            "`input` must be a table of arguments, e.g. input = { path = \"src/main.rs\" }",
        ));
    }
    Ok(value)
}
