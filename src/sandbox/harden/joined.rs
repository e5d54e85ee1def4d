//! A Python spare's namespaces joined rather than copied (`Plan::join`; docs/python.md#spares).
//!
//! In enter.rs's chain a forked interpreter's keeper clones init as a copy of itself, and init
//! forks the program: two copies of the interpreter made and torn down for every run beside the
//! program's own. Here the keeper makes init with `clone(CLONE_VM | CLONE_VFORK)` into the new
//! namespaces: the child borrows the keeper's memory for the few system calls before it execs the
//! helper's static build in init's role (`exec_init`), so nothing is copied for it. Init keeps
//! the capabilities of its user namespace across that exec (ambient), waits for its ids, builds
//! the run's root, takes the program's ids, drops every capability and says which layers it built
//! (`serve_init`). The keeper then joins init's namespaces (`setns` through init's pidfd: user
//! first, so it holds the capabilities the others need there) and forks the program, PID 2 in
//! init's PID namespace and in init's root, which returns into the interpreter; the keeper takes
//! the program's ids, drops its capabilities, execs the helper in its own role (a spare's; one
//! booted on its run's path stays a copy, `Plan::keeper_stays`, as that exec would delay the
//! result) and, once the program ended, kills init (the kernel then kills whatever is left in
//! the namespace) and ends as the program did (`keep_joined`).
//!
//! The keeper is then in the run's user, mount, IPC and network namespaces, never its PID
//! namespace: the program cannot name it. It holds no capability (its uid is not the
//! namespace's root) and is not dumpable. Only the helper's static build is exec'd there (the
//! run's root need hold no dynamic loader), so the addon asks for this chain only when the roles
//! file is one (`helper::Roles::linked_statically`).

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use nix::sys::signal::{signal, SigHandler, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

use super::abi;
use super::plan::Plan;
use super::process::{die_by, exit_now, fail, pipe, write_all};
use super::program::{drop_capabilities, program, raise_ambient_capabilities, Ending, Exact, Setup};
use super::roles::{
    abandon, become_helper, close_program_fds, die_with_keeper, host_died, label, release_init, reopen_exact,
    take_program_ids,
};
use super::{namespaces, root};

/// The stack the init child runs on until its exec (a few frames of system calls).
const INIT_STACK: usize = 64 * 1024;

/// What `exec_init` needs, made before the clone: the child only reads it.
struct InitExec {
    helper: RawFd,
    /// NUL-terminated pointers into `words`.
    argv: Vec<*const libc::c_char>,
    /// The descriptors init's role reads (close-on-exec cleared in the child's own table).
    inherit: Vec<RawFd>,
}

/// The keeper's part: makes init, joins its namespaces and forks the program. Returns the
/// descriptors, untouched, when the kernel refuses the namespaces (the caller then runs the
/// program without them); `None` in the program process. Every other process ends inside.
pub(super) fn run(
    plan: &Plan,
    status: OwnedFd,
    lifeline: Option<OwnedFd>,
    mut setup: Setup,
    (exact, trees): (&Exact, &[(PathBuf, OwnedFd)]),
    helper: &OwnedFd,
) -> Option<(OwnedFd, Option<OwnedFd>)> {
    let (go_r, go_w) = pipe();
    let (ready_r, ready_w) = pipe();
    let numbers = [go_r.as_raw_fd(), ready_w.as_raw_fd(), status.as_raw_fd()];
    let exact_fds: Vec<RawFd> = exact.iter().map(|(_, fd)| fd.as_raw_fd()).collect();
    // One entry per policy path: its idmapped tree, or -1 where the kernel made none.
    let tree_fds: Vec<RawFd> = (exact.iter())
        .map(|(path, _)| trees.iter().find(|(p, _)| p == path).map_or(-1, |(_, fd)| fd.as_raw_fd()))
        .collect();
    let words = init_words(plan, &numbers, &exact_fds, &tree_fds);
    let mut argv: Vec<*const libc::c_char> = words.iter().map(|w| w.as_ptr()).collect();
    argv.push(std::ptr::null());
    let inherit = [&numbers[..], &exact_fds, &tree_fds].concat().into_iter().filter(|fd| *fd >= 0).collect();
    let job = InitExec { helper: helper.as_raw_fd(), argv, inherit };
    let mut stack = vec![0u8; INIT_STACK];
    let flags = namespace_flags(plan.network) | libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    // SAFETY: the child runs `exec_init` on its own stack, reading `job` (alive until it has
    // exec'd or exited: CLONE_VFORK holds this process until then); the stack's top is 16-byte
    // aligned, as the ABI wants.
    let init = unsafe {
        let top = stack.as_mut_ptr().add(INIT_STACK) as usize & !15;
        libc::clone(exec_init, top as *mut libc::c_void, flags, &job as *const InitExec as *mut libc::c_void)
    };
    drop((stack, job, words));
    if init < 0 {
        return Some((status, lifeline));
    }
    let init = Pid::from_raw(init);
    drop((go_r, ready_w));
    release_init(init, setup.ids, go_w, &status);
    let mut built = [0u8; 2];
    if nix::unistd::read(&ready_r, &mut built).ok() != Some(2) {
        // Init ended before the root was built: its code says why.
        drop(status);
        close_program_fds(None);
        super::roles::keep(init, None, lifeline, false)
    }
    drop(ready_r);
    setup.namespaces = true;
    setup.private_proc = built[0] == 1;
    setup.root = built[1] == 1;
    if let Err(e) = join(init, plan.network) {
        abandon(init, "setns", e);
    }
    // SAFETY: single-threaded process; the child only runs this crate's code until it returns
    // into the interpreter as the program process.
    match unsafe { fork() } {
        Err(e) => abandon(init, "fork", e),
        Ok(ForkResult::Child) => {
            drop(lifeline);
            program(plan, status, setup, exact, Ending::Return);
            None
        }
        Ok(ForkResult::Parent { child }) => {
            drop(status);
            close_program_fds(None);
            // The program's ids, as init has them: in this user namespace the keeper then may
            // signal init with no capability (it holds none once it has exec'd, or dropped them).
            if !take_program_ids() || drop_capabilities().is_err() {
                abandon(init, "setresuid", nix::errno::Errno::last());
            }
            // SAFETY: a plain prctl call: nothing in the run's user namespace reads this
            // process's memory (its exec below makes it dumpable; its role says not again).
            unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) };
            if !plan.keeper_stays {
                let fd = lifeline.as_ref().map_or(-1, |l| l.as_raw_fd());
                become_helper(helper, "joined-keeper", &[child.as_raw(), init.as_raw(), fd], &[fd], label(plan));
            }
            keep_joined(child, init, lifeline)
        }
    }
}

/// The namespaces a run gets: user, PID, mount, IPC and, unless its policy grants the network,
/// network.
fn namespace_flags(network: bool) -> libc::c_int {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    if network {
        flags
    } else {
        flags | libc::CLONE_NEWNET
    }
}

/// Moves this process into init's namespaces; its children are then born in init's PID
/// namespace, and its root is init's. Linux 5.8 on: all at once through init's pidfd (the kernel
/// enters the user namespace first). Before: one at a time through init's `/proc` files.
fn join(init: Pid, network: bool) -> nix::Result<()> {
    if let Some(pidfd) = namespaces::pidfd(init) {
        // SAFETY: setns(2) with a pidfd this process owns.
        if unsafe { libc::setns(pidfd.as_raw_fd(), namespace_flags(network)) } == 0 {
            return Ok(());
        }
    }
    enter(&open_namespaces(&format!("/proc/{}/ns", init.as_raw()), network)?)
}

/// The namespaces' files a run joins, in the order they must be entered (the user namespace
/// first: the others need its capabilities), from `dir` (a process's `/proc/<pid>/ns`). All are
/// opened before any is entered: a new mount namespace shows another `/proc`.
fn open_namespaces(dir: &str, network: bool) -> nix::Result<Vec<(OwnedFd, libc::c_int)>> {
    use nix::fcntl::{open, OFlag};
    let kinds = [
        ("user", libc::CLONE_NEWUSER),
        ("pid", libc::CLONE_NEWPID),
        ("mnt", libc::CLONE_NEWNS),
        ("ipc", libc::CLONE_NEWIPC),
        ("net", libc::CLONE_NEWNET),
    ];
    (kinds.into_iter().filter(|(_, kind)| namespace_flags(network) & kind != 0))
        .map(|(name, kind)| {
            Ok((
                open(
                    format!("{dir}/{name}").as_str(),
                    OFlag::O_RDONLY | OFlag::O_CLOEXEC,
                    nix::sys::stat::Mode::empty(),
                )?,
                kind,
            ))
        })
        .collect()
}

/// Enters each namespace in turn (system calls only).
fn enter(files: &[(OwnedFd, libc::c_int)]) -> nix::Result<()> {
    for (file, kind) in files {
        // SAFETY: setns(2) with a namespace file this process owns.
        if unsafe { libc::setns(file.as_raw_fd(), *kind) } != 0 {
            return Err(nix::errno::Errno::last());
        }
    }
    Ok(())
}

/// `joined-init <go> <ready> <status> <policy fds|-> <tree fds|-> <init's plan…>`: its plan is
/// the run's without its environment or program (nothing of the program's on a command line).
fn init_words(plan: &Plan, numbers: &[RawFd], exact: &[RawFd], trees: &[RawFd]) -> Vec<CString> {
    let list = |fds: &[RawFd]| match fds.is_empty() {
        true => "-".to_string(),
        false => fds.iter().map(RawFd::to_string).collect::<Vec<_>>().join(","),
    };
    let own = Plan { env: Vec::new(), argv: vec!["-".into()], slim: None, keeper_stays: false, ..plan.clone() };
    ["code-runtime-native-sandbox".into(), "joined-init".into()]
        .into_iter()
        .chain(numbers.iter().map(|n| OsString::from(n.to_string())))
        .chain([list(exact).into(), list(trees).into()])
        .chain(own.to_args())
        .filter_map(|w: OsString| CString::new(w.as_bytes()).ok())
        .collect()
}

/// The init child, from the clone to its exec, on the keeper's memory (which waits): system
/// calls only, nothing allocated, nothing that can panic. It holds every capability of the new
/// user namespace; raised into the ambient set they survive the exec of a helper that is no
/// root there, and init drops them once the root is built.
extern "C" fn exec_init(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the keeper's `InitExec`, alive and unchanged until this child execs or
    // exits; every call below is a plain system call on this process.
    unsafe {
        let job = &*(arg as *const InitExec);
        raise_ambient_capabilities();
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) != 0 {
            libc::_exit(abi::EXIT_SETUP);
        }
        for fd in &job.inherit {
            libc::fcntl(*fd, libc::F_SETFD, 0);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        for fd in 0..=2 {
            if null < 0 || libc::dup2(null, fd) != fd {
                libc::_exit(abi::EXIT_SETUP);
            }
        }
        let envp: [*const libc::c_char; 1] = [std::ptr::null()];
        libc::syscall(
            libc::SYS_execveat,
            job.helper,
            c"".as_ptr(),
            job.argv.as_ptr(),
            envp.as_ptr(),
            libc::AT_EMPTY_PATH,
        );
        libc::_exit(abi::EXIT_SETUP)
    }
}

/// Init's role, exec'd by `exec_init` (`joined-init …`, from `init_words`). `None` for
/// arguments the keeper would not have written; otherwise it never returns.
pub(super) fn serve_init(args: &[OsString]) -> Option<std::convert::Infallible> {
    let [go, ready, status, exact, trees, plan @ ..] = args else { return None };
    let number = |a: &OsString| a.to_str()?.parse::<RawFd>().ok().filter(|fd| *fd >= 0);
    let list = |a: &OsString| match a.to_str()? {
        "-" => Some(Vec::new()),
        text => text.split(',').map(|n| n.parse::<RawFd>().ok()).collect::<Option<Vec<_>>>(),
    };
    let (go, ready, status) = (number(go)?, number(ready)?, number(status)?);
    let (exact, trees, plan) = (list(exact)?, list(trees)?, Plan::from_args(plan)?);
    if exact.len() != plan.as_host.len() || trees.len() != exact.len() || exact.iter().any(|fd| *fd < 0) {
        return None;
    }
    // SAFETY: the descriptors the keeper left open for this role (`run`), owned from here on;
    // a plain prctl call.
    let (go, ready, status) = unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        (OwnedFd::from_raw_fd(go), OwnedFd::from_raw_fd(ready), OwnedFd::from_raw_fd(status))
    };
    // SAFETY: as above.
    let owned = |fd: RawFd| unsafe { OwnedFd::from_raw_fd(fd) };
    let keeper: Exact = plan.as_host.iter().cloned().zip(exact.into_iter().map(owned)).collect();
    let trees: Vec<(PathBuf, OwnedFd)> =
        plan.as_host.iter().cloned().zip(trees).filter(|(_, fd)| *fd >= 0).map(|(p, fd)| (p, owned(fd))).collect();
    if !namespaces::await_maps(&go) {
        exit_now(abi::EXIT_SETUP);
    }
    drop(go);
    // Not dumpable (an exec made it dumpable again) only now: a process that is not has its
    // /proc files, `uid_map` among them, owned by root, which a keeper of another uid could then
    // not open to write its maps.
    // SAFETY: a plain prctl call.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) };
    let built = build_root(&plan, &status, &keeper, &trees);
    drop((keeper, trees, status));
    // Its standard descriptors were the host's /dev/null: now the run's own.
    null_stdio();
    if !take_program_ids() || drop_capabilities().is_err() {
        exit_now(abi::EXIT_SETUP);
    }
    // Changing ids cleared the parent-death signal.
    die_with_keeper(&ready);
    write_all(&ready, &[u8::from(built.private_proc), u8::from(built.root)]);
    drop(ready);
    reap_until_killed()
}

/// `/dev/null` on 0–2, opened where this process now stands (the run's root, which binds it);
/// the ones it had stay if it cannot be opened.
fn null_stdio() {
    // SAFETY: plain open, dup2 and close on this process's own descriptors.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..=2 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
}

/// Init's mounts, as enter.rs's init makes them: the policy's paths checked again in this mount
/// namespace, then the root.
fn build_root(plan: &Plan, status: &OwnedFd, keeper: &Exact, trees: &[(PathBuf, OwnedFd)]) -> root::Mounted {
    let scratch = plan.tmpfs.as_ref().map(|(dir, bytes)| (dir.as_path(), *bytes));
    let grants = (plan.read_only.iter().map(|p| (p.as_path(), false)))
        .chain(plan.read_write.iter().map(|p| (p.as_path(), true)))
        .filter(|(p, _)| scratch.is_none_or(|(dir, _)| dir != *p))
        .collect();
    let exact = &reopen_exact(plan, status, keeper);
    let layout = root::Layout { root: plan.root.as_deref(), grants, scratch, proc: plan.private_proc, trees, exact };
    root::mount_all(&layout).unwrap_or_else(|e| fail("mount", e))
}

extern "C" fn terminate_run(_: libc::c_int) {
    // SAFETY: kill is async-signal-safe; -1 is every process of this PID namespace but init.
    unsafe { libc::kill(-1, libc::SIGTERM) };
}

extern "C" fn wake(_: libc::c_int) {}

/// Reaps whatever the namespace orphans until the keeper kills init (the program is the
/// keeper's child, not init's); SIGTERM is passed to every process of the run.
fn reap_until_killed() -> ! {
    // SAFETY: handlers that only call kill or return; SIGCHLD is blocked outside `sigsuspend`, so
    // no orphan's exit is missed between the reaping and the wait.
    unsafe {
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &chld, std::ptr::null_mut());
        let _ = signal(Signal::SIGCHLD, SigHandler::Handler(wake));
        let _ = signal(Signal::SIGTERM, SigHandler::Handler(terminate_run));
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        loop {
            while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) > 0 {}
            libc::sigsuspend(&none);
        }
    }
}

/// The keeper once the program is forked: waits for it (killing init, and with it the run, if
/// the host dies first), then kills init and ends exactly as the program ended.
pub(super) fn keep_joined(program: Pid, init: Pid, lifeline: Option<OwnedFd>) -> ! {
    if lifeline.as_ref().is_some_and(|l| host_died(program, l)) {
        let _ = nix::sys::signal::kill(init, Signal::SIGKILL);
    }
    let status = loop {
        match waitpid(program, None) {
            Ok(status) => break status,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => fail("waitpid", e),
        }
    };
    // Init's end kills every process left in the namespace before it can be reaped. Were it
    // refused, the keeper's own end kills init all the same (its parent-death signal).
    if nix::sys::signal::kill(init, Signal::SIGKILL).is_ok() {
        while let Err(nix::errno::Errno::EINTR) = waitpid(init, None) {}
    }
    match status {
        WaitStatus::Exited(_, code) => exit_now(code),
        WaitStatus::Signaled(_, sig, _) => die_by(sig as i32),
        _ => exit_now(abi::EXIT_USAGE),
    }
}

/// `joined-keeper <program> <init> <lifeline fd|-1> [<label>]`: the keeper's role handed to the
/// helper (`become_helper`). `None` for arguments the keeper would not have written.
pub(super) fn resume_keeper(args: &[OsString]) -> Option<std::convert::Infallible> {
    let numbers: Vec<i32> = args.iter().take(3).map(|a| a.to_str()?.parse().ok()).collect::<Option<_>>()?;
    let (&[program, init, lifeline], 3..=4) = (numbers.as_slice(), args.len()) else { return None };
    if program <= 0 || init <= 0 || lifeline < -1 {
        return None;
    }
    // SAFETY: plain prctl on this process (an exec made it dumpable again); the lifeline is the
    // descriptor the keeper left open for this role.
    let lifeline = unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        (lifeline >= 0).then(|| OwnedFd::from_raw_fd(lifeline))
    };
    keep_joined(Pid::from_raw(program), Pid::from_raw(init), lifeline)
}

#[cfg(test)]
mod tests {
    use super::{enter, open_namespaces};
    use std::os::fd::AsRawFd;

    /// The fallback before Linux 5.8: a process in new user, PID, mount, IPC and network
    /// namespaces, joined through its `/proc` files by a forked child, which then stands in each.
    #[test]
    fn namespaces_joined_one_at_a_time_through_their_files() {
        let flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWNET;
        // SAFETY: a fork into new namespaces whose child only waits for its signal.
        let target = unsafe { libc::syscall(libc::SYS_clone, (flags | libc::SIGCHLD) as libc::c_ulong, 0, 0, 0, 0) };
        if target == 0 {
            loop {
                // SAFETY: async-signal-safe; the parent kills this child.
                unsafe { libc::pause() };
            }
        }
        assert!(target > 0, "clone: {}", std::io::Error::last_os_error());
        let files = open_namespaces(&format!("/proc/{target}/ns"), false).expect("the namespaces' files");
        assert_eq!(
            files.iter().map(|(_, kind)| *kind).collect::<Vec<_>>(),
            [libc::CLONE_NEWUSER, libc::CLONE_NEWPID, libc::CLONE_NEWNS, libc::CLONE_NEWIPC, libc::CLONE_NEWNET]
        );
        assert_eq!(open_namespaces(&format!("/proc/{target}/ns"), true).expect("files").len(), 4, "no network");
        // SAFETY: the child only makes system calls (setns, stat) before `_exit`: the harness's
        // other threads hold nothing it takes.
        let joiner = unsafe { libc::fork() };
        if joiner == 0 {
            let code = match enter(&files) {
                Err(_) => 1,
                // Its own namespaces are the target's now (the PID namespace: its children's).
                Ok(()) => {
                    let own = [
                        c"/proc/self/ns/user",
                        c"/proc/self/ns/pid_for_children",
                        c"/proc/self/ns/mnt",
                        c"/proc/self/ns/ipc",
                        c"/proc/self/ns/net",
                    ];
                    let same = files.iter().zip(own).all(|((file, _), path)| {
                        // SAFETY: stat and fstat into zeroed plain data.
                        unsafe {
                            let (mut a, mut b): (libc::stat, libc::stat) = (std::mem::zeroed(), std::mem::zeroed());
                            libc::fstat(file.as_raw_fd(), &mut a) == 0
                                && libc::stat(path.as_ptr(), &mut b) == 0
                                && a.st_ino == b.st_ino
                        }
                    });
                    if same {
                        0
                    } else {
                        2
                    }
                }
            };
            // SAFETY: ends the forked child at once.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waiting for and ending this test's own children.
        unsafe {
            libc::waitpid(joiner, &mut status, 0);
            libc::kill(target as i32, libc::SIGKILL);
            libc::waitpid(target as i32, std::ptr::null_mut(), 0);
        }
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the joiner: {status:#x}");
    }
}
