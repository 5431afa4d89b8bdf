//! A call's `warden:tool/interaction`: who it talks to, its memory notes,
//! and what it published, asked and wrote, for the call's report.
//!
//! Invariant: the notes are reachable only when the call's grant includes
//! memory ([`InteractionCall::notes`] is `None` otherwise), and every
//! question asked and every answer received is on the report.

use std::sync::Arc;

use serde::Serialize;

use crate::capability::MemoryNotes;
use crate::home::Home;
use crate::protocol::{AskAnswer, Interaction, NoOneToAsk, PlanStep, Question};

/// Questions one call may ask; later ones are unanswered.
pub const MAX_QUESTIONS: usize = 10;

/// Whoever runs a call, for its `warden:tool/interaction`: who is told of
/// plans and asked questions, and the data directory memory notes live in.
#[derive(Clone)]
pub struct InteractionParty {
    pub user: Arc<dyn Interaction>,
    /// Warden's data directory; without one, memory is unavailable.
    pub home: Option<Home>,
}

impl InteractionParty {
    /// No one to ask (`why` says so to the model), memory under `home`.
    pub fn unattended(why: impl Into<String>, home: Option<Home>) -> InteractionParty {
        InteractionParty {
            user: Arc::new(NoOneToAsk(why.into())),
            home,
        }
    }
}

/// The interaction of one call, set up before it runs.
pub struct CallInteraction {
    pub user: Arc<dyn Interaction>,
    /// The workspace's notes, when the grant includes memory.
    pub notes: Option<MemoryNotes>,
}

/// One question a call asked, and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AskRecord {
    pub question: Question,
    pub answer: AskAnswer,
}

/// What a call did through `warden:tool/interaction`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InteractionReport {
    /// The last plan the call published.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Vec<PlanStep>>,
    /// Every question asked, with its answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub asked: Vec<AskRecord>,
    /// Memory notes read, and written (bytes stored by the last write).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memory_read: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_written_bytes: Option<u64>,
}

impl InteractionReport {
    /// Whether the call used the interface at all.
    pub fn is_empty(&self) -> bool {
        self == &InteractionReport::default()
    }
}

/// The interaction state in a call's store.
pub(crate) struct InteractionState {
    pub(crate) call_id: String,
    pub(crate) setup: CallInteraction,
    pub(crate) report: InteractionReport,
}
