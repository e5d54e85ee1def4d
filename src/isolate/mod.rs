//! `IsolateCodeRuntime`'s native side: each run on its own thread in a fresh V8 isolate (or in a
//! sandbox process: `src/process_tier/`). Its JavaScript boundary is `src/boundary/isolate.rs`.

mod async_waiters;
mod bridge;
pub(crate) mod budget;
mod console;
pub mod determinism;
pub mod durable;
pub mod env_hook;
mod event_wait;
pub mod first_terminal;
pub mod globals;
pub mod host;
mod lossless;
mod modules;
mod natives;
pub mod platform;
mod render;
pub mod run;
pub mod source;
mod stack;
pub(crate) mod startup;
mod state;
mod stop;
pub mod strip;
mod timers;
mod v8_guard;
mod vm;
mod wait_async;
mod web;
