//! Linkers that hold exactly the interfaces a grant allows.

use wasmtime::Engine;
use wasmtime::component::types::{self, ComponentItem};
use wasmtime::component::{Component, HasData, HasSelf, Linker, ResourceTable, ResourceType};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random, sync};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable};
use wasmtime_wasi::random::{WasiRandom, WasiRandomView};
use wasmtime_wasi_http::{WasiHttp, WasiHttpView};

use super::CallState;
use super::bindings::{v0_1, v0_2};
use super::guest::WitVersion;
use crate::capability::{
    DeadlineClock, Grant, HasDeadlineClock, HasDeadlineIo, HasGuardedFs, ImportClass,
    classify_import,
};

/// Which optional interface families a linker provides. Baseline interfaces
/// (clocks, random, captured stdio, empty environment, `wasi:io`) and the
/// Warden host interface are always present; `wasi:sockets` never is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkProfile {
    /// `wasi:filesystem/types`, `wasi:filesystem/preopens` and (0.2.2)
    /// `warden:tool/prefilter`.
    pub filesystem: bool,
    /// `wasi:http/types` and `wasi:http/outgoing-handler`, behind egress.
    pub http: bool,
    /// `warden:tool/process`, behind the process sandbox (0.2 and later).
    pub process: bool,
    /// `warden:tool/interaction`: the plan, questions, memory (0.2.1 and later).
    pub interaction: bool,
}

impl LinkProfile {
    /// The interfaces `grant` links.
    pub fn for_grant(grant: &Grant) -> LinkProfile {
        LinkProfile {
            filesystem: grant.filesystem.is_some() || !grant.extra_dirs.is_empty(),
            http: grant.network.is_some(),
            process: grant.process.is_some(),
            interaction: grant.interaction.is_some(),
        }
    }
}

struct HasIo;

impl HasData for HasIo {
    type Data<'a> = &'a mut ResourceTable;
}

/// A linker for `component`, built against `version`, under `profile`.
/// Imports the profile leaves out are defined as traps, so the component
/// instantiates and a call fails (with the interface named) only if it
/// actually uses one.
pub fn linker_for(
    engine: &Engine,
    component: &Component,
    version: WitVersion,
    profile: LinkProfile,
) -> wasmtime::Result<Linker<CallState>> {
    let mut l: Linker<CallState> = Linker::new(engine);
    match version {
        WitVersion::V0_1 => {
            v0_1::ToolPlugin::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;
        }
        WitVersion::V0_2 => {
            v0_2::types::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;
            v0_2::host::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;
            if profile.process {
                v0_2::process::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;
            }
            if profile.interaction {
                v0_2::interaction::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;
            }
        }
    }

    clocks::wall_clock::add_to_linker::<CallState, WasiClocks>(&mut l, CallState::clocks)?;
    clocks::monotonic_clock::add_to_linker::<CallState, HasDeadlineClock>(&mut l, |s| {
        let deadline = s.deadline();
        DeadlineClock {
            inner: s.clocks(),
            deadline,
        }
    })?;
    random::random::add_to_linker::<CallState, WasiRandom>(&mut l, CallState::random)?;
    random::insecure::add_to_linker::<CallState, WasiRandom>(&mut l, CallState::random)?;
    random::insecure_seed::add_to_linker::<CallState, WasiRandom>(&mut l, CallState::random)?;
    cli::exit::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::environment::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::stdin::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::stdout::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::stderr::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_input::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_output::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_stdin::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_stdout::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    cli::terminal_stderr::add_to_linker::<CallState, WasiCli>(&mut l, CallState::cli)?;
    wasmtime_wasi::p2::bindings::io::error::add_to_linker::<CallState, HasIo>(&mut l, |t| {
        t.ctx().table
    })?;
    sync::io::poll::add_to_linker::<CallState, HasDeadlineIo>(&mut l, CallState::bounded_io)?;
    sync::io::streams::add_to_linker::<CallState, HasDeadlineIo>(&mut l, CallState::bounded_io)?;

    if profile.filesystem {
        if version == WitVersion::V0_2 {
            v0_2::prefilter::add_to_linker::<CallState, HasSelf<CallState>>(&mut l, |s| s)?;
        }
        sync::filesystem::types::add_to_linker::<CallState, HasGuardedFs>(
            &mut l,
            CallState::guarded_fs,
        )?;
        filesystem::preopens::add_to_linker::<CallState, HasGuardedFs>(
            &mut l,
            CallState::guarded_fs,
        )?;
    }

    if profile.http {
        let options = wasmtime_wasi_http::p2::bindings::LinkOptions::default();
        wasmtime_wasi_http::p2::bindings::sync::http::outgoing_handler::add_to_linker::<
            CallState,
            WasiHttp,
        >(&mut l, CallState::http)?;
        wasmtime_wasi_http::p2::bindings::sync::http::types::add_to_linker::<CallState, WasiHttp>(
            &mut l,
            &options.into(),
            CallState::http,
        )?;
    }

    stub_unlinked(&mut l, engine, component, profile)?;
    Ok(l)
}

/// Define every import the profile does not link as functions that trap
/// with "unknown import", naming the interface. (wasmtime's own
/// `define_unknown_imports_as_traps` would shadow semver-compatible real
/// definitions, e.g. an import of `@0.2.6` served by the host's `@0.2.8`.)
fn stub_unlinked(
    l: &mut Linker<CallState>,
    engine: &Engine,
    component: &Component,
    profile: LinkProfile,
) -> wasmtime::Result<()> {
    let component_type = component.component_type();
    let imports: Vec<_> = component_type.imports(engine).collect();
    // Resources a stubbed interface re-uses from `wasi:io` (for example the
    // `input-stream` in `wasi:filesystem/types`) must keep the real host type.
    let mut io_resources: Vec<(types::ResourceType, ResourceType)> = Vec::new();
    for (name, item) in &imports {
        let (ComponentItem::ComponentInstance(instance), Some(iface)) =
            (&item.ty, name.split('@').next())
        else {
            continue;
        };
        for (export, ty) in instance.exports(engine) {
            let host = match (iface, export) {
                ("wasi:io/poll", "pollable") => ResourceType::host::<DynPollable>(),
                ("wasi:io/streams", "input-stream") => ResourceType::host::<DynInputStream>(),
                ("wasi:io/streams", "output-stream") => ResourceType::host::<DynOutputStream>(),
                ("wasi:io/error", "error") => ResourceType::host::<wasmtime::Error>(),
                _ => continue,
            };
            if let ComponentItem::Resource(rt) = ty.ty {
                io_resources.push((rt, host));
            }
        }
    }
    for (name, item) in &imports {
        let linked = match classify_import(name) {
            ImportClass::Host | ImportClass::Baseline | ImportClass::Environment => true,
            ImportClass::Filesystem => profile.filesystem,
            ImportClass::Http => profile.http,
            ImportClass::Process => profile.process,
            ImportClass::Interaction => profile.interaction,
            ImportClass::Sockets | ImportClass::Unknown => false,
        };
        if linked {
            continue;
        }
        let ComponentItem::ComponentInstance(instance) = &item.ty else {
            wasmtime::bail!("unsupported top-level import `{name}`");
        };
        let mut inst = l.instance(name)?;
        for (export, ty) in instance.exports(engine) {
            match ty.ty {
                ComponentItem::ComponentFunc(_) => {
                    let full = format!("{name}#{export}");
                    inst.func_new(export, move |_, _, _, _| {
                        wasmtime::bail!("unknown import: `{full}` is not granted")
                    })?;
                }
                ComponentItem::Resource(rt) => {
                    let host = io_resources
                        .iter()
                        .find(|(component_side, _)| *component_side == rt)
                        .map(|(_, host)| *host)
                        .unwrap_or_else(ResourceType::host::<()>);
                    inst.resource(export, host, |_, _| Ok(()))?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}
