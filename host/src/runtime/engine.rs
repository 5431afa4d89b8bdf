//! The wasmtime engine: pooling allocator, epoch interruption, no async.
//!
//! One engine serves every call. A background thread advances the epoch
//! every [`TICK`]; each store's epoch callback then checks its own deadline
//! and cancellation flag, so a guest in a tight loop stops within one tick
//! of its deadline.

use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

use super::limits::MAX_MEMORY_BYTES;

/// How often the epoch advances.
pub const TICK: Duration = Duration::from_millis(5);

/// How many calls may run at once (pooling allocator slots).
pub const MAX_CONCURRENT_INSTANCES: u32 = 64;

/// Build the engine every Warden component runs in.
pub fn build() -> wasmtime::Result<Engine> {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(MAX_CONCURRENT_INSTANCES)
        .total_core_instances(MAX_CONCURRENT_INSTANCES * 8)
        .total_memories(MAX_CONCURRENT_INSTANCES)
        .total_tables(MAX_CONCURRENT_INSTANCES * 8)
        .total_stacks(MAX_CONCURRENT_INSTANCES)
        .max_memories_per_module(1)
        .max_memory_size(MAX_MEMORY_BYTES)
        .max_unused_warm_slots(8);

    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .concurrency_support(false)
        .epoch_interruption(true)
        .cranelift_opt_level(OptLevel::Speed)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    let engine = Engine::new(&config)?;
    start_ticker(&engine)?;
    Ok(engine)
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
