//! New user, PID, mount, network and IPC namespaces for a child, entered without privileges, and
//! the mounts its init makes inside them.

use std::path::Path;

use nix::mount::{mount, MsFlags};
use nix::sched::{unshare, CloneFlags};
use nix::unistd::{getgid, getuid};

/// The unprivileged id the host's uid and gid map to inside: a program that runs as a non-zero id
/// holds no capabilities in its namespace after exec.
const INSIDE_ID: u32 = 1000;

/// Unshares the namespaces and maps ids. The calling process stays in the host's PID namespace:
/// its next child is the new namespace's init. False (nothing entered) when the kernel refuses,
/// e.g. unprivileged user namespaces are switched off.
pub fn enter() -> bool {
    let (uid, gid) = (getuid().as_raw(), getgid().as_raw());
    let flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWNET
        | CloneFlags::CLONE_NEWIPC;
    if unshare(flags).is_err() {
        return false;
    }
    // Without `setgroups` denied, an unprivileged process may not write its gid map.
    std::fs::write("/proc/self/setgroups", "deny").is_ok()
        && std::fs::write("/proc/self/uid_map", format!("{INSIDE_ID} {uid} 1")).is_ok()
        && std::fs::write("/proc/self/gid_map", format!("{INSIDE_ID} {gid} 1")).is_ok()
}

/// What the init's mounts achieved.
pub struct Mounted {
    /// `/proc` now shows only this PID namespace.
    pub private_proc: bool,
}

/// In the namespace's init: mounts stop propagating to the host, `/proc` shows only this PID
/// namespace, and the program's scratch directory becomes a size-capped tmpfs. The `/proc` mount
/// is best effort (a host whose own `/proc` is partly masked refuses it; the program then gets no
/// `/proc` at all); the others are required.
pub fn mount_private(tmpfs: Option<(&Path, u64)>) -> Option<Mounted> {
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none).ok()?;
    let private_proc =
        mount(Some("proc"), "/proc", Some("proc"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC, none)
            .is_ok();
    let scratch = match tmpfs {
        Some((dir, bytes)) => mount(
            Some("tmpfs"),
            dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(format!("size={bytes},mode=0700").as_str()),
        )
        .is_ok(),
        None => true,
    };
    scratch.then_some(Mounted { private_proc })
}
