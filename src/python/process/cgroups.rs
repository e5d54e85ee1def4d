//! A Python run's cgroups (docs/python.md): its process cap and its memory cap, where the host
//! can make them, each removed when dropped.

use crate::python::process::staging::SCRATCH_BYTES;
use crate::sandbox::cgroup::{run_cgroups, RunCgroup};

/// Processes (and threads) one run may have at once inside its user namespace.
pub const PROCESS_CAP: u64 = 256;

/// Kernel memory a run may pin beyond its address space and scratch (page tables, sockets and
/// pipes, inodes), inside its memory cap.
const KERNEL_SLACK: u64 = 64 << 20;

/// The cgroups of one child, where the host can make them (root, or a delegated cgroup); each
/// removed when dropped, once the run's processes have gone.
pub struct Cgroups {
    /// The process cap (`pids.max`), which binds whatever the ids.
    pub pids: Option<RunCgroup>,
    /// The memory cap of the whole run: every process, its scratch files and memfds, SysV and
    /// pipe buffers, socket buffers and the kernel objects it creates, all of which the kernel
    /// charges to the cgroup. Past it the kernel's OOM killer ends the run.
    pub memory: Option<RunCgroup>,
}

impl Cgroups {
    pub fn for_child(address_space_bytes: f64) -> Cgroups {
        let (pids, memory) = run_cgroups(PROCESS_CAP, memory_cap(address_space_bytes), false);
        Cgroups { pids, memory }
    }
}

/// A run's memory cap: its address space, its scratch, and the kernel's slack.
pub fn memory_cap(address_space_bytes: f64) -> u64 {
    (address_space_bytes as u64).saturating_add(SCRATCH_BYTES).saturating_add(KERNEL_SLACK)
}
