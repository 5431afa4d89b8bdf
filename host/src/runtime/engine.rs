//! The wasmtime engine: epoch interruption, no async, and instances from a
//! pool of reused slots or mapped fresh (see [`Instances`]).
//!
//! One engine serves every call. A background thread advances the epoch
//! every [`TICK`]; each store's epoch callback then checks its own deadline
//! and cancellation flag, so a guest in a tight loop stops within one tick
//! of its deadline.

use std::time::Duration;

use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
};

use crate::base::MAX_MEMORY_BYTES;

/// How often the epoch advances.
pub const TICK: Duration = Duration::from_millis(5);

/// Linear memory kept mapped in a slot between instances.
const KEEP_RESIDENT_BYTES: usize = 4 << 20;

/// How many calls may run at once (pooling allocator slots).
pub const MAX_CONCURRENT_INSTANCES: u32 = 64;

/// Pool slots set aside for `fan-out` workers, beyond the calls' own: a
/// call's workers never take the slot another call needs.
pub const WORKER_INSTANCES: u32 = 16;

/// Where a process's instances get their memory and tables. The compiled
/// code is the same either way, so both share the compile cache, and a
/// call's limits are the same: the store's limiter enforces them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instances {
    /// Slots reserved up front and reused: a fresh instance per call in
    /// microseconds, for a process that makes many calls (the agent, a
    /// batch of inputs).
    Pooled,
    /// Mapped for each instance and unmapped after: for a process that
    /// makes one call (`warden tool call`), which would spend longer
    /// setting up the pool (about 0.4 ms) than the pool saves it.
    OnDemand,
}

/// Build the engine every Warden component runs in.
pub fn build(instances: Instances) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .concurrency_support(false)
        .epoch_interruption(true)
        .cranelift_opt_level(OptLevel::Speed);
    if instances == Instances::Pooled {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool()));
    }
    let engine = Engine::new(&config)?;
    start_ticker(&engine)?;
    Ok(engine)
}

/// The pooling allocator's slots: one per concurrent call plus the workers'.
fn pool() -> PoolingAllocationConfig {
    let n = MAX_CONCURRENT_INSTANCES + WORKER_INSTANCES;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(n)
        .total_core_instances(n * 8)
        .total_memories(n)
        .total_tables(n * 8)
        // Fiber stacks serve async calls only, which Warden does not make.
        .total_stacks(0)
        .max_memories_per_module(1)
        .max_memory_size(MAX_MEMORY_BYTES)
        // Reset only the pages a call dirtied (PAGEMAP_SCAN, Linux 6.7+) and
        // keep them mapped: the next instance in the slot starts from the
        // pristine image without page faults. Measured: a no-op call drops
        // from ~40 µs to ~20 µs. Isolation is unchanged: every dirty page is
        // restored before reuse.
        .pagemap_scan(Enabled::Auto)
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .table_keep_resident(64 << 10);
    pool
}

/// Advance `engine`'s epoch every [`TICK`] until the engine is dropped.
/// Without the ticker deadlines never fire, so failing to start it is an error.
fn start_ticker(engine: &Engine) -> wasmtime::Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("warden-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => return,
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::{CancelToken, Limits};
    use crate::capability::CappedPipe;
    use crate::capability::{FsBoundary, Grant, build_wasi};
    use crate::runtime::instance::new_store;
    use crate::runtime::state::CallState;
    use wasmtime::{Instance, Module, Store};

    /// A core module with `n` empty function tables, in the binary format.
    fn module_with_tables(n: u8) -> Vec<u8> {
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        let body: Vec<u8> = std::iter::once(n)
            .chain((0..n).flat_map(|_| [0x70, 0x00, 0x00]))
            .collect();
        wasm.push(0x04); // the table section
        wasm.push(u8::try_from(body.len()).unwrap_or(u8::MAX));
        wasm.extend(body);
        wasm
    }

    fn store(engine: &Engine) -> Store<CallState> {
        let limits = Limits::default();
        let grant = Grant::none();
        let stdout = CappedPipe::new(limits.stdio_bytes);
        let stderr = CappedPipe::new(limits.stdio_bytes);
        let wasi = build_wasi(&grant, &limits, &stdout, &stderr).unwrap_or_else(|e| panic!("{e}"));
        let state = CallState::new(
            wasi,
            FsBoundary::for_grant(&grant),
            stderr,
            limits.clone(),
            CancelToken::new(),
            None,
        );
        new_store(engine, state, &limits)
    }

    fn engine(instances: Instances) -> Engine {
        build(instances).unwrap_or_else(|e| panic!("{e:#}"))
    }

    #[test]
    fn both_allocators_share_the_compile_cache() {
        use std::hash::{Hash, Hasher};
        let tag = |instances| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            engine(instances)
                .precompile_compatibility_hash()
                .hash(&mut h);
            h.finish()
        };
        assert_eq!(
            tag(Instances::Pooled),
            tag(Instances::OnDemand),
            "one compiled artifact must serve both"
        );
    }

    /// Under either allocator, one store instantiates `module` `fits`
    /// times, and the next instantiation fails naming `what`.
    fn assert_store_refuses_after(module: &[u8], fits: usize, what: &str) {
        for instances in [Instances::Pooled, Instances::OnDemand] {
            let engine = engine(instances);
            let module = Module::new(&engine, module).unwrap_or_else(|e| panic!("{e}"));
            let mut s = store(&engine);
            for i in 0..fits {
                Instance::new(&mut s, &module, &[])
                    .unwrap_or_else(|e| panic!("{instances:?}: {what} {i}: {e:#}"));
            }
            let err = Instance::new(&mut s, &module, &[]).map(drop).unwrap_err();
            assert!(format!("{err:#}").contains(what), "{instances:?}: {err:#}");
        }
    }

    #[test]
    fn a_store_holds_at_most_max_tables_whatever_the_allocator() {
        // One table per module, as the pool allows.
        assert_store_refuses_after(&module_with_tables(1), 20, "table");
    }

    #[test]
    fn a_store_holds_at_most_max_core_instances_whatever_the_allocator() {
        assert_store_refuses_after(&module_with_tables(0), 50, "instance");
    }
}
