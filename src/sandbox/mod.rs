//! The sandbox room: starting a child that the kernel keeps apart from the host, through the
//! small helper executable shipped beside the addon (src/bin/sandbox.rs). The host writes the
//! helper's instructions (`plan`) and reads back which layers hold (`Layers`).

pub mod cgroup;
#[cfg(target_os = "linux")]
pub mod harden;
pub mod helper;
pub mod plan;

pub use plan::{Layers, Plan, RlimitKind};
