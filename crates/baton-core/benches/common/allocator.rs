//! The benchmarks time what the `baton` binary runs, so they use its allocator (mimalloc;
//! `crates/baton-cli/src/main.rs`). `RUSTFLAGS="--cfg baton_system_allocator"` times the
//! system allocator instead, as a program embedding the crates without choosing one gets.

#[cfg(not(baton_system_allocator))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
