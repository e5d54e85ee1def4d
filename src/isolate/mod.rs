//! `IsolateCodeRuntime`'s native side: each run on its own thread in a fresh V8 isolate (or in a
//! sandbox process, `contained`). Its JavaScript boundary is `src/boundary/isolate.rs`.

mod bridge;
mod budget;
mod console;
#[cfg(target_os = "linux")]
pub mod contained;
pub mod env_hook;
mod event_wait;
pub mod first_terminal;
pub mod globals;
pub mod host;
mod lossless;
mod natives;
pub mod platform;
mod render;
pub mod run;
#[cfg(target_os = "linux")]
mod serve;
pub mod source;
mod stack;
mod startup;
mod state;
pub mod strip;
mod timers;
mod v8_guard;
mod wait_async;
mod web;
