//! One interface over every `warden:tool` version the host runs: a linked
//! component, instantiated and called, its results in host types.
//!
//! Invariant: each version's generated types are converted here and only
//! here; the rest of the runtime sees host types.

use wasmtime::component::InstancePre;
use wasmtime::{Engine, Store};

use super::bindings::{v0_1, v0_2};
use crate::base::keep_at_most;
use crate::protocol::{Annotations, ErrorKind, ToolError};

/// Bytes of a guest's error message the host keeps; the rest is cut.
pub(crate) const MAX_GUEST_MESSAGE: usize = 64 << 10;

/// A `warden:tool` minor version the host has bindings for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum WitVersion {
    /// 0.1.0 and 0.1.1.
    V0_1,
    /// 0.2.0: more error kinds, and the `process` interface.
    V0_2,
}

impl WitVersion {
    /// The bindings for the full version `v` (e.g. `0.1.0`), if the host
    /// has them.
    pub fn of(v: &str) -> Option<WitVersion> {
        match v {
            "0.1.0" | "0.1.1" => Some(WitVersion::V0_1),
            "0.2.0" | "0.2.1" | "0.2.2" => Some(WitVersion::V0_2),
            _ => None,
        }
    }
}

/// The facts about its call a guest receives.
#[derive(Debug, Clone)]
pub(crate) struct GuestContext {
    pub(crate) call_id: String,
    pub(crate) workspace: Option<String>,
    pub(crate) workspace_display: Option<String>,
    pub(crate) deadline_ms: u64,
}

/// A guest's successful result, not yet checked by the host.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GuestOutput {
    pub(crate) text: String,
    pub(crate) structured: Option<String>,
}

/// How a guest's `call` returned, or how a worker ended (a trap is the
/// error around it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GuestReturn {
    Output(GuestOutput),
    Failed(ToolError),
    /// The guest saw the call cancelled and stopped.
    Cancelled,
}

/// A tool as the guest lists it, before the host checks it.
pub(crate) struct GuestSpec {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) input_schema: String,
    pub(crate) annotations: Annotations,
}

/// Why listing a guest's tools failed.
pub(crate) enum ListFailure {
    /// The component did not instantiate.
    Instantiate(wasmtime::Error),
    /// Its `tools` function trapped.
    Call(wasmtime::Error),
}

/// A component linked for one grant, ready to instantiate in a store of `T`.
pub(crate) enum GuestPre<T: 'static> {
    V0_1(v0_1::ToolPluginPre<T>),
    V0_2(v0_2::ToolPluginPre<T>),
}

impl<T: 'static> Clone for GuestPre<T> {
    fn clone(&self) -> Self {
        match self {
            GuestPre::V0_1(pre) => GuestPre::V0_1(pre.clone()),
            GuestPre::V0_2(pre) => GuestPre::V0_2(pre.clone()),
        }
    }
}

impl<T: Send + 'static> GuestPre<T> {
    /// Check that `pre` exports what `version` requires.
    pub(crate) fn new(version: WitVersion, pre: InstancePre<T>) -> wasmtime::Result<Self> {
        Ok(match version {
            WitVersion::V0_1 => GuestPre::V0_1(v0_1::ToolPluginPre::new(pre)?),
            WitVersion::V0_2 => GuestPre::V0_2(v0_2::ToolPluginPre::new(pre)?),
        })
    }

    pub(crate) fn engine(&self) -> &Engine {
        match self {
            GuestPre::V0_1(pre) => pre.engine(),
            GuestPre::V0_2(pre) => pre.engine(),
        }
    }

    /// Instantiate in `store` and run `tool` on `input`.
    pub(crate) fn call(
        &self,
        store: &mut Store<T>,
        tool: &str,
        input: &str,
        cx: &GuestContext,
    ) -> wasmtime::Result<GuestReturn> {
        match self {
            GuestPre::V0_1(pre) => {
                let context = v0_1::types::CallContext {
                    call_id: cx.call_id.clone(),
                    workspace: cx.workspace.clone(),
                    workspace_display: cx.workspace_display.clone(),
                    deadline_ms: cx.deadline_ms,
                };
                let instance = pre.instantiate(&mut *store)?;
                let result =
                    instance
                        .warden_tool_plugin()
                        .call_call(&mut *store, tool, input, &context)?;
                Ok(match result {
                    Ok(out) => GuestReturn::Output(GuestOutput {
                        text: out.text,
                        structured: out.structured,
                    }),
                    Err(e) => GuestReturn::Failed(ToolError::new(
                        kind_from_v0_1(e.kind),
                        keep_at_most(e.message, MAX_GUEST_MESSAGE),
                    )),
                })
            }
            GuestPre::V0_2(pre) => {
                let context = v0_2::types::CallContext {
                    call_id: cx.call_id.clone(),
                    workspace: cx.workspace.clone(),
                    workspace_display: cx.workspace_display.clone(),
                    deadline_ms: cx.deadline_ms,
                };
                let instance = pre.instantiate(&mut *store)?;
                let result =
                    instance
                        .warden_tool_plugin()
                        .call_call(&mut *store, tool, input, &context)?;
                Ok(match result {
                    Ok(out) => GuestReturn::Output(GuestOutput {
                        text: out.text,
                        structured: out.structured,
                    }),
                    Err(e) => match kind_from_v0_2(e.kind) {
                        Some(kind) => GuestReturn::Failed(ToolError::new(
                            kind,
                            keep_at_most(e.message, MAX_GUEST_MESSAGE),
                        )),
                        None => GuestReturn::Cancelled,
                    },
                })
            }
        }
    }

    /// Instantiate in `store` and ask for the guest's tools.
    pub(crate) fn tools(&self, store: &mut Store<T>) -> Result<Vec<GuestSpec>, ListFailure> {
        Ok(match self {
            GuestPre::V0_1(pre) => {
                let instance = pre
                    .instantiate(&mut *store)
                    .map_err(ListFailure::Instantiate)?;
                let specs = instance
                    .warden_tool_plugin()
                    .call_tools(&mut *store)
                    .map_err(ListFailure::Call)?;
                specs
                    .into_iter()
                    .map(|s| GuestSpec {
                        name: s.name,
                        description: s.description,
                        input_schema: s.input_schema,
                        annotations: Annotations {
                            read_only: s.annotations.read_only,
                            destructive: s.annotations.destructive,
                            idempotent: s.annotations.idempotent,
                            open_world: s.annotations.open_world,
                        },
                    })
                    .collect()
            }
            GuestPre::V0_2(pre) => {
                let instance = pre
                    .instantiate(&mut *store)
                    .map_err(ListFailure::Instantiate)?;
                let specs = instance
                    .warden_tool_plugin()
                    .call_tools(&mut *store)
                    .map_err(ListFailure::Call)?;
                specs
                    .into_iter()
                    .map(|s| GuestSpec {
                        name: s.name,
                        description: s.description,
                        input_schema: s.input_schema,
                        annotations: Annotations {
                            read_only: s.annotations.read_only,
                            destructive: s.annotations.destructive,
                            idempotent: s.annotations.idempotent,
                            open_world: s.annotations.open_world,
                        },
                    })
                    .collect()
            }
        })
    }
}

fn kind_from_v0_1(kind: v0_1::types::ErrorKind) -> ErrorKind {
    use v0_1::types::ErrorKind as K;
    match kind {
        K::InvalidInput => ErrorKind::InvalidInput,
        K::NotFound => ErrorKind::NotFound,
        K::PermissionDenied => ErrorKind::PermissionDenied,
        K::Io => ErrorKind::Io,
        K::Timeout => ErrorKind::Timeout,
        K::Internal => ErrorKind::Internal,
    }
}

/// `None` for `cancelled`, which is an outcome of its own.
fn kind_from_v0_2(kind: v0_2::types::ErrorKind) -> Option<ErrorKind> {
    use v0_2::types::ErrorKind as K;
    Some(match kind {
        K::InvalidInput => ErrorKind::InvalidInput,
        K::NotFound => ErrorKind::NotFound,
        K::PermissionDenied => ErrorKind::PermissionDenied,
        K::Io => ErrorKind::Io,
        K::Timeout => ErrorKind::Timeout,
        K::Internal => ErrorKind::Internal,
        K::Unsupported => ErrorKind::Unsupported,
        K::LimitExceeded => ErrorKind::LimitExceeded,
        K::Cancelled => return None,
    })
}

/// A worker's end as a 0.1 guest receives it: kinds 0.1 lacks become
/// `internal`, the message says what happened.
pub(crate) fn to_v0_1(end: GuestReturn) -> Result<v0_1::types::ToolOutput, v0_1::types::ToolError> {
    use v0_1::types::ErrorKind as K;
    let (kind, message) = match end {
        GuestReturn::Output(out) => {
            return Ok(v0_1::types::ToolOutput {
                text: out.text,
                structured: out.structured,
            });
        }
        GuestReturn::Cancelled => (K::Internal, "the call was cancelled".to_string()),
        GuestReturn::Failed(e) => {
            let kind = match e.kind {
                ErrorKind::InvalidInput | ErrorKind::UnknownTool => K::InvalidInput,
                ErrorKind::NotFound => K::NotFound,
                ErrorKind::PermissionDenied => K::PermissionDenied,
                ErrorKind::Io => K::Io,
                ErrorKind::Timeout => K::Timeout,
                ErrorKind::Internal
                | ErrorKind::Unsupported
                | ErrorKind::MemoryLimit
                | ErrorKind::LimitExceeded
                | ErrorKind::Crashed
                | ErrorKind::Host => K::Internal,
            };
            (kind, e.message)
        }
    };
    Err(v0_1::types::ToolError { kind, message })
}

/// A worker's end as a 0.2 guest receives it.
pub(crate) fn to_v0_2(end: GuestReturn) -> Result<v0_2::types::ToolOutput, v0_2::types::ToolError> {
    use v0_2::types::ErrorKind as K;
    let (kind, message) = match end {
        GuestReturn::Output(out) => {
            return Ok(v0_2::types::ToolOutput {
                text: out.text,
                structured: out.structured,
            });
        }
        GuestReturn::Cancelled => (K::Cancelled, "the call was cancelled".to_string()),
        GuestReturn::Failed(e) => {
            let kind = match e.kind {
                ErrorKind::InvalidInput | ErrorKind::UnknownTool => K::InvalidInput,
                ErrorKind::NotFound => K::NotFound,
                ErrorKind::PermissionDenied => K::PermissionDenied,
                ErrorKind::Io => K::Io,
                ErrorKind::Timeout => K::Timeout,
                ErrorKind::Unsupported => K::Unsupported,
                ErrorKind::MemoryLimit | ErrorKind::LimitExceeded => K::LimitExceeded,
                ErrorKind::Internal | ErrorKind::Crashed | ErrorKind::Host => K::Internal,
            };
            (kind, e.message)
        }
    };
    Err(v0_2::types::ToolError { kind, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_full_version_maps_to_its_bindings() {
        assert_eq!(WitVersion::of("0.1.0"), Some(WitVersion::V0_1));
        assert_eq!(WitVersion::of("0.1.1"), Some(WitVersion::V0_1));
        assert_eq!(WitVersion::of("0.2.0"), Some(WitVersion::V0_2));
        assert_eq!(WitVersion::of("0.2.1"), Some(WitVersion::V0_2));
        assert_eq!(WitVersion::of("0.2.2"), Some(WitVersion::V0_2));
        assert_eq!(WitVersion::of("0.3.0"), None);
        assert_eq!(WitVersion::of("1.0.0"), None);
    }

    #[test]
    fn the_kinds_0_2_adds_reach_a_0_2_guest_and_become_internal_for_0_1() {
        let limit = || GuestReturn::Failed(ToolError::new(ErrorKind::LimitExceeded, "quota"));
        let v2 = to_v0_2(limit()).unwrap_err();
        assert_eq!(v2.kind, v0_2::types::ErrorKind::LimitExceeded);
        let v1 = to_v0_1(limit()).unwrap_err();
        assert_eq!(v1.kind, v0_1::types::ErrorKind::Internal);
        assert_eq!(v1.message, "quota");
        assert_eq!(
            to_v0_2(GuestReturn::Cancelled).unwrap_err().kind,
            v0_2::types::ErrorKind::Cancelled
        );
        assert_eq!(kind_from_v0_2(v0_2::types::ErrorKind::Cancelled), None);
        assert_eq!(
            kind_from_v0_2(v0_2::types::ErrorKind::Unsupported),
            Some(ErrorKind::Unsupported)
        );
    }
}
