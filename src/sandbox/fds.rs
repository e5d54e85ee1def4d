//! A child's descriptors, for both backends: pipes, placement between fork and exec, closing the
//! rest, pidfds, and signals to a namespace's init through its pidfd.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

#[cfg(target_vendor = "apple")]
use nix::fcntl::OFlag;
#[cfg(not(target_vendor = "apple"))]
pub use nix::unistd::pipe2;

/// macOS has no `pipe2`: a pipe, then close-on-exec on both ends. A fork on another thread in
/// between can inherit the two fds; our own children close every fd above 3 at exec anyway.
#[cfg(target_vendor = "apple")]
pub fn pipe2(flags: OFlag) -> nix::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe()?;
    if flags.contains(OFlag::O_CLOEXEC) {
        for fd in [&r, &w] {
            // SAFETY: `fd` is an open descriptor owned above.
            if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
                return Err(nix::Error::last());
            }
        }
    }
    Ok((r, w))
}

pub fn nonblocking(fd: &OwnedFd) {
    // SAFETY: plain fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

#[cfg(target_os = "linux")]
pub fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a descriptor pidfd_open just returned is ours alone.
    (fd >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(fd as RawFd) })
}

#[cfg(not(target_os = "linux"))]
pub fn pidfd_open(_pid: i32) -> Option<OwnedFd> {
    None
}

/// Every descriptor from `first` up: closed now, or (`on_exec`) marked close-on-exec, as a child
/// does before exec (marking rather than closing keeps the standard library's exec-error pipe
/// working).
pub fn close_from(first: RawFd, on_exec: bool) {
    #[cfg(target_os = "linux")]
    {
        let flags = if on_exec { libc::CLOSE_RANGE_CLOEXEC } else { 0 };
        // SAFETY: close_range only closes or flags this process's own descriptors.
        if unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, flags) } == 0 {
            return;
        }
    }
    // Older kernels: walk the table (bounded, since the host may have raised RLIMIT_NOFILE a lot).
    // SAFETY: sysconf, fcntl and close are async-signal-safe.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(4, 65536) as RawFd;
    for fd in first..max {
        // SAFETY: as above (a descriptor that is not open makes it fail with EBADF).
        unsafe {
            if on_exec {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            } else {
                libc::close(fd);
            }
        }
    }
}

/// SIGKILLs a namespace's init through its pidfd (never a recycled pid). Namespaces and pidfds
/// exist on Linux only; elsewhere there is never an init to kill.
pub fn kill_init(init: &impl AsRawFd) {
    signal_init(init, libc::SIGKILL);
}

/// Sends `signal` to a namespace's init through its pidfd (init forwards SIGTERM to its program).
pub fn signal_init(init: &impl AsRawFd, signal: libc::c_int) {
    #[cfg(target_os = "linux")]
    // SAFETY: pidfd_send_signal on a pidfd we own.
    unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, init.as_raw_fd(), signal, std::ptr::null::<()>(), 0)
    };
    #[cfg(not(target_os = "linux"))]
    let _ = (init, signal);
}

/// A close-on-exec duplicate numbered 10 or above.
pub fn high_fd(fd: &impl AsRawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor we own, or -1.
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: just created.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(n) })
}

/// Puts `fd` at `target` without close-on-exec (dup2 clears it; an fd already there needs fcntl).
pub fn place_fd(fd: RawFd, target: RawFd) -> std::io::Result<()> {
    // SAFETY: descriptor calls in the child between fork and exec.
    let r = unsafe {
        if fd == target {
            libc::fcntl(target, libc::F_SETFD, 0)
        } else {
            libc::dup2(fd, target)
        }
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
