//! Idmapped mounts of a root host's own trees, for a file policy that grants them to a run: the
//! run (whose uid is `nobody`, never the host's) sees the host's files there as its own and what it
//! writes is stored as the host's, while everywhere else it has no privilege. Made by the keeper,
//! which is still the host's root (the kernel requires that of the filesystem's user namespace),
//! as detached trees the run's init then attaches in its root (src/sandbox/harden/root.rs).

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::unistd::Pid;

/// A user namespace whose inside uid and gid 0 are `uid` and `gid` outside: an idmapped mount
/// with it shows files the host's root owns as owned by `uid`. `None` when the kernel refuses.
pub fn userns_for(uid: u32, gid: u32) -> Option<OwnedFd> {
    let (hold_r, hold_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
    // SAFETY: as `namespaces::clone_init` (no CLONE_VM, no new stack: a fork).
    let pid =
        unsafe { libc::syscall(libc::SYS_clone, (libc::CLONE_NEWUSER | libc::SIGCHLD) as libc::c_ulong, 0, 0, 0, 0) };
    if pid == 0 {
        // The namespace lives as long as this process holds it: until the keeper has opened it.
        drop(hold_w);
        let mut byte = [0u8; 1];
        let _ = nix::unistd::read(&hold_r, &mut byte);
        // SAFETY: ends this forked child at once.
        unsafe { libc::_exit(0) };
    }
    drop(hold_r);
    if pid < 0 {
        return None;
    }
    let child = Pid::from_raw(pid as i32);
    let proc = format!("/proc/{pid}");
    let opened = std::fs::write(format!("{proc}/setgroups"), "deny")
        .and_then(|()| std::fs::write(format!("{proc}/uid_map"), format!("0 {uid} 1")))
        .and_then(|()| std::fs::write(format!("{proc}/gid_map"), format!("0 {gid} 1")))
        .and_then(|()| std::fs::File::open(format!("{proc}/ns/user")));
    drop(hold_w);
    let _ = nix::sys::wait::waitpid(child, None);
    opened.ok().map(OwnedFd::from)
}

/// A detached copy of the tree at `source` (an opened path, src/sandbox/exact.rs; its submounts
/// included), idmapped with `userns`, `nosuid`, `nodev`, and read-only unless `write`. `None`
/// when the kernel or the filesystem cannot (before Linux 5.12, or a filesystem without idmapped
/// mounts).
pub fn tree(source: BorrowedFd, userns: &OwnedFd, write: bool) -> Option<OwnedFd> {
    let flags = libc::OPEN_TREE_CLONE
        | libc::OPEN_TREE_CLOEXEC
        | libc::AT_RECURSIVE as libc::c_uint
        | libc::AT_EMPTY_PATH as libc::c_uint;
    // SAFETY: open_tree of a descriptor we hold (empty path) returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, source.as_raw_fd(), c"".as_ptr(), flags) };
    if fd < 0 {
        return None;
    }
    // SAFETY: just returned to us.
    let tree = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let mut set = libc::MOUNT_ATTR_IDMAP | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;
    if !write {
        set |= libc::MOUNT_ATTR_RDONLY;
    }
    let attr = libc::mount_attr { attr_set: set, attr_clr: 0, propagation: 0, userns_fd: userns.as_raw_fd() as u64 };
    // SAFETY: mount_setattr on our detached tree with a valid, sized mount_attr.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    (r == 0).then_some(tree)
}

/// Attaches a detached tree at `at` (an existing directory or file).
pub fn attach(tree: BorrowedFd, at: &Path) -> nix::Result<()> {
    let cpath = CString::new(at.as_os_str().as_bytes()).map_err(|_| nix::errno::Errno::EINVAL)?;
    // SAFETY: move_mount of our detached tree onto a NUL-terminated path.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            cpath.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    nix::errno::Errno::result(r).map(drop)
}

/// Attaches a detached tree over the object `target` (an opened path), not over whatever a path
/// names by then.
pub fn attach_over(tree: BorrowedFd, target: BorrowedFd) -> nix::Result<()> {
    // SAFETY: move_mount of our detached tree onto a descriptor we hold (both paths empty).
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            target.as_raw_fd(),
            c"".as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    nix::errno::Errno::result(r).map(drop)
}
