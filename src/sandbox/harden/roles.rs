//! What a run's keeper and init do in either chain (src/sandbox/harden/enter.rs, where init is
//! cloned as a copy of the keeper, and joined.rs, where init is the helper from its start): wait
//! and end as the program ended, watch the host's lifeline, check the policy's paths again in
//! init's mount namespace, and hand a role over to the helper's executable.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

use super::abi;
use super::plan::{self, Plan};
use super::process::{die_by, exit_now, fail, mirror_raw, write_all};
use super::program::Exact;
use super::{exact, namespaces};

/// In init's mount namespace, each of the keeper's policy paths opened again with no link
/// followed; one that is not the object the keeper checked (`ESTALE`) or cannot be opened so
/// refuses the run, as in `open_exact`.
pub(super) fn reopen_exact(plan: &Plan, status: &OwnedFd, keeper: &Exact) -> Exact {
    let mut opened = Vec::with_capacity(keeper.len());
    for (path, checked) in keeper {
        let again = exact::open(path).and_then(|fd| match exact::identity(&fd)? == exact::identity(checked)? {
            true => Ok(fd),
            false => Err(nix::errno::Errno::ESTALE),
        });
        match again {
            Ok(fd) => opened.push((path.clone(), fd)),
            Err(e) => {
                let index = plan.as_host.iter().position(|p| p == path).unwrap_or(0);
                write_all(status, plan::policy_refused_line(index, e as i32).as_bytes());
                exit_now(abi::EXIT_SETUP);
            }
        }
    }
    opened
}

/// Waits for `child` (init, or the program itself without namespaces), then ends exactly as
/// the program ended (code or signal), so the host's wait status is the program's and its
/// rusage covers the whole run. If the host dies first (its lifeline reads end-of-file), the
/// run is killed: init (the kernel then kills the whole namespace) or, without namespaces,
/// this process group.
pub(super) fn keep(child: Pid, relay: Option<OwnedFd>, lifeline: Option<OwnedFd>, whole_group: bool) -> ! {
    if let Some(lifeline) = &lifeline {
        if host_died(child, lifeline) {
            // SAFETY: plain kill calls; without namespaces this process dies with its group.
            unsafe {
                match whole_group {
                    true => libc::kill(0, libc::SIGKILL),
                    false => libc::kill(child.as_raw(), libc::SIGKILL),
                }
            };
        }
    }
    let status = loop {
        match waitpid(child, None) {
            Ok(status) => break status,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => fail("waitpid", e),
        }
    };
    let mut raw = [0u8; 4];
    if relay.is_some_and(|r| nix::unistd::read(&r, &mut raw).ok() == Some(4)) {
        mirror_raw(i32::from_ne_bytes(raw));
    }
    match status {
        WaitStatus::Exited(_, code) => exit_now(code),
        WaitStatus::Signaled(_, sig, _) => die_by(sig as i32),
        _ => exit_now(abi::EXIT_USAGE),
    }
}

/// Blocks until `child` has exited (false) or the host's lifeline shows the host gone (true).
/// The host never writes to it: any event on it is its end.
pub(super) fn host_died(child: Pid, lifeline: &OwnedFd) -> bool {
    let pidfd = namespaces::pidfd(child);
    loop {
        let mut fds = [
            libc::pollfd { fd: lifeline.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: pidfd.as_ref().map_or(-1, |f| f.as_raw_fd()), events: libc::POLLIN, revents: 0 },
        ];
        // Without pidfds (Linux < 5.3) the child's exit is checked ten times a second.
        let timeout = if pidfd.is_some() { None } else { Some(std::time::Duration::from_millis(100)) };
        // A negative fd is ignored.
        super::poll::poll(&mut fds, timeout);
        if fds[0].revents != 0 {
            return true;
        }
        if fds[1].revents != 0 || (pidfd.is_none() && namespaces::exited(child)) {
            return false;
        }
    }
}

/// Arms init's parent-death signal again (the kernel clears it whenever a process's ids change),
/// then makes sure the keeper did not die before: the read end of the relay, which only the keeper
/// holds, is then closed, and the relay reports an error. Either way init does not outlive it.
pub(super) fn die_with_keeper(relay: &OwnedFd) {
    // SAFETY: plain prctl on this process.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let mut fds = [libc::pollfd { fd: relay.as_raw_fd(), events: 0, revents: 0 }];
    super::poll::poll(&mut fds, Some(std::time::Duration::ZERO));
    if fds[0].revents & libc::POLLERR != 0 {
        exit_now(abi::EXIT_SETUP);
    }
}

/// Replaces this process (the keeper or init of a run forked from the Python template) with
/// the helper executable in the same `role`, holding only the `inherit` descriptors: what its
/// exit tears down on the run's way to its result is then a small process, not a copy of the
/// interpreter. Returns only if the kernel refused; the caller then keeps the role itself.
pub(super) fn become_helper(
    helper: &OwnedFd,
    role: &str,
    numbers: &[i32],
    inherit: &[i32],
    label: Option<&std::path::Path>,
) {
    // SAFETY: marks every descriptor close-on-exec (Linux 5.11), then clears it on those the
    // role reads; nothing else of this process reaches the helper. Its standard descriptors are
    // `/dev/null` (the root binds it): a loader in secure mode would otherwise open `/dev/full`
    // for them, which a root does not hold, and Rust's runtime `/dev/null` itself.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) != 0 {
            return;
        }
        for fd in inherit.iter().filter(|fd| **fd >= 0) {
            libc::fcntl(*fd, libc::F_SETFD, 0);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null < 0 || (0..=2).any(|fd| fd != null && libc::dup2(null, fd) != fd) {
            return;
        }
        if null > 2 {
            libc::close(null);
        }
    }
    let words = ["code-runtime-native-sandbox".as_bytes(), role.as_bytes()]
        .into_iter()
        .map(<[u8]>::to_vec)
        .chain(numbers.iter().map(|n| n.to_string().into_bytes()))
        .chain(label.map(|l| l.as_os_str().as_bytes().to_vec()))
        .filter_map(|w| CString::new(w).ok())
        .collect::<Vec<_>>();
    let mut argv: Vec<*const libc::c_char> = words.iter().map(|w| w.as_ptr()).collect();
    argv.push(std::ptr::null());
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    // SAFETY: execveat(2) of the descriptor itself (`AT_EMPTY_PATH`), with NUL-terminated
    // argument and environment vectors that outlive the call.
    unsafe {
        libc::syscall(
            libc::SYS_execveat,
            helper.as_raw_fd(),
            c"".as_ptr(),
            argv.as_ptr(),
            envp.as_ptr(),
            libc::AT_EMPTY_PATH,
        )
    };
}

/// The run's scratch directory, last on a slimmed keeper's and init's command line: which run
/// they serve, for `ps` and for the host's own checks that nothing of a run outlives it.
pub(super) fn label(plan: &Plan) -> Option<&std::path::Path> {
    plan.tmpfs.as_ref().map(|(dir, _)| dir.as_path())
}

/// Init takes the program's ids before it becomes the helper. An exec that changes no id keeps
/// the parent-death signal (the kernel clears it on any change of ids, and the exec would set
/// the filesystem ids the root was built with back to ids a root host's init cannot name in the
/// namespace); with the program's ids init still signals the program, and the exec leaves it no
/// capability (neither id is the namespace's root). Under a host of another uid init had the
/// program's ids already. False if the kernel refused: init then keeps its role as it is.
pub(super) fn take_program_ids() -> bool {
    use nix::unistd::{setresgid, setresuid, Gid, Uid};
    let (uid, gid) = (Uid::from_raw(namespaces::INSIDE_ID), Gid::from_raw(namespaces::INSIDE_ID));
    setresgid(gid, gid, gid).is_ok() && setresuid(uid, uid, uid).is_ok()
}

/// The keeper and init hold none of the program's descriptors, so the host sees the
/// program's pipes close when the program and its descendants have gone.
pub(super) fn close_program_fds(relay: Option<&OwnedFd>) {
    for fd in (0..=3).filter(|fd| Some(*fd) != relay.map(|r| r.as_raw_fd())) {
        // SAFETY: closing descriptors this process no longer uses (never the relay pipe).
        unsafe { libc::close(fd) };
    }
}

/// The keeper's side of init's start: maps init's ids from outside, lets it go on (one byte on
/// `go`), and tells the host init's pid on the report. A keeper that cannot map them kills init
/// and ends.
pub(super) fn release_init(init: Pid, ids: (u32, u32), go: OwnedFd, status: &OwnedFd) {
    if let Err(e) = namespaces::map_ids(init, ids.0, ids.1) {
        abandon(init, "uid_map", nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)));
    }
    write_all(&go, b"1");
    drop(go);
    write_all(status, format!("init {}\n", init.as_raw()).as_bytes());
}

/// Kills init (and with it its namespace), reaps it, and ends saying `what` failed.
pub(super) fn abandon(init: Pid, what: &str, err: nix::errno::Errno) -> ! {
    let _ = nix::sys::signal::kill(init, nix::sys::signal::Signal::SIGKILL);
    let _ = waitpid(init, None);
    fail(what, err)
}
