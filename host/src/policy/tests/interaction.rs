//! `interaction` and `memory`: on unless a layer turns them off, layered
//! like the other grants, and a misspelt or mistyped key refuses the policy.

use super::*;
use crate::capability::DeclaredCapabilities;

#[test]
fn memory_off_in_one_layer_refuses_only_the_plugins_that_keep_notes() {
    let p = policy("name = 'p'\n[grants.plugin.memory]\nmemory = false\n");
    let notes = DeclaredCapabilities {
        memory: true,
        ..DeclaredCapabilities::default()
    };
    let why = p
        .capability_refusal("memory", "memory_write", &notes)
        .unwrap();
    assert!(
        why.contains("`memory = false`") && why.contains("policy p"),
        "{why}"
    );
    assert!(
        p.capability_refusal("other", "memory_write", &notes)
            .is_none()
    );
    let plan = DeclaredCapabilities {
        interaction: true,
        ..DeclaredCapabilities::default()
    };
    assert!(
        p.capability_refusal("memory", "update_plan", &plan)
            .is_none()
    );
    let on = policy("name = 'p'\n");
    assert!(on.grant_for("agent", "ask_user").interaction);
    assert!(on.grant_for("memory", "memory_read").memory);
    let off = policy(
        "name = 'p'\n[grants.default]\ninteraction = false\n[grants.tool.ask_user]\ninteraction = true\n",
    );
    assert!(!off.grant_for("agent", "update_plan").interaction);
    assert!(off.grant_for("agent", "ask_user").interaction);
}

#[test]
fn a_misspelt_or_mistyped_memory_key_refuses_the_policy() {
    let typo = error("name = 'p'\n[grants.default]\nmemroy = false\n");
    assert!(typo.contains("unknown field `memroy`"), "{typo}");
    let typed = error("name = 'p'\n[grants.default]\nmemory = 'off'\n");
    assert!(typed.contains("invalid type"), "{typed}");
}
