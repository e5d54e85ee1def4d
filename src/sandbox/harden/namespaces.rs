//! New user, PID, mount, network and IPC namespaces for a child: the helper clones the
//! namespace's init into them and writes its id maps from outside, so a root host can map the
//! run to an unprivileged uid (a process inside a new user namespace may map only its own).

use std::os::fd::OwnedFd;

use nix::unistd::Pid;

/// The id the program has inside its namespaces. Not 0: a program that runs as a non-zero id
/// holds no capabilities in its namespace after exec.
pub const INSIDE_ID: u32 = 1000;

/// Where the clone landed.
pub enum Cloned {
    /// In the parent: the init's pid (in the host's PID namespace).
    Parent(Pid),
    /// In the new namespaces, as their init (PID 1).
    Child,
}

/// `clone()` with new user, PID, mount, network and IPC namespaces; like `fork`, both sides
/// return. An error (the kernel refuses unprivileged user namespaces, say) creates nothing.
/// The raw system call, not glibc's `clone`, which wants a separate stack: with a null stack the
/// child runs on a copy of this one, as after `fork`. The helper is single-threaded, so no lock
/// of the C library can be held across it.
/// `network`: keep the host's network namespace (a policy that grants the network).
pub fn clone_init(network: bool) -> nix::Result<Cloned> {
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::SIGCHLD;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: clone without CLONE_VM or a new stack duplicates the process as fork does; both
    // sides only run this crate's code afterwards.
    let r = unsafe { libc::syscall(libc::SYS_clone, flags as libc::c_ulong, 0usize, 0usize, 0usize, 0usize) };
    match r {
        -1 => Err(nix::errno::Errno::last()),
        0 => Ok(Cloned::Child),
        pid => Ok(Cloned::Parent(Pid::from_raw(pid as i32))),
    }
}

/// Maps `INSIDE_ID` of the child's user namespace to `uid`/`gid` outside, written from the
/// parent (the only side allowed to map an id other than its own, when it is root).
/// Supplementary groups are denied in the namespace; a root host has dropped its own first.
pub fn map_ids(child: Pid, uid: u32, gid: u32) -> std::io::Result<()> {
    let proc = format!("/proc/{}", child.as_raw());
    std::fs::write(format!("{proc}/setgroups"), "deny")?;
    std::fs::write(format!("{proc}/uid_map"), format!("{INSIDE_ID} {uid} 1"))?;
    std::fs::write(format!("{proc}/gid_map"), format!("{INSIDE_ID} {gid} 1"))
}

/// In the child: waits until the parent has written the maps (one byte on `go`); false when the
/// parent died first (end of file), and the child must give up.
pub fn await_maps(go: &OwnedFd) -> bool {
    let mut byte = [0u8; 1];
    loop {
        match nix::unistd::read(go, &mut byte) {
            Ok(1) => return true,
            Err(nix::errno::Errno::EINTR) => continue,
            _ => return false,
        }
    }
}

/// A pidfd for `child` (`None` before Linux 5.3).
pub fn pidfd(child: Pid) -> Option<OwnedFd> {
    // SAFETY: pidfd_open returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.as_raw(), 0) };
    // SAFETY: a descriptor just returned to us.
    (fd >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(fd as i32) })
}

/// Whether `child` has exited, without reaping it.
pub fn exited(child: Pid) -> bool {
    use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    !matches!(waitid(Id::Pid(child), flags), Ok(WaitStatus::StillAlive))
}
