//! The helper's layers around one program, shared by the helper (crates/sandbox-helper, which
//! execs the program) and the Python template's forked children (src/python/template/, which
//! return into the interpreter the template already started; docs/python.md#the-template).
//!
//! With namespaces, three processes: the *keeper* (the caller, in its PID namespace, which waits
//! and then exits exactly as the program did), the namespace's *init* (PID 1: private mounts, a
//! fresh `/proc`, the scratch tmpfs; it forwards SIGTERM, reaps orphans, and when the program
//! ends it exits, which kills everything left in the namespace), and the *program* (PID 2, its
//! own session). Without them (the kernel refused), the keeper forks the program. Either way the
//! program starts with its limits, no_new_privs, Landlock and the seccomp filter applied
//! (`program.rs`).
//!
//! The keeper and init end with `_exit`: in a forked interpreter, `exit` would run its handlers.
//! A spare forked from the Python template (`Plan::slim`) has its keeper and init exec the helper
//! in the same role once they have forked (`become_helper`, `resume_role`): each is otherwise a
//! copy of the interpreter, and the teardown of two such copies sat on every run's way to its
//! result; the exec does it while the spare waits. With the helper's static build (`Plan::join`)
//! init is no copy at all and the keeper forks the program itself: joined.rs.

use super::abi;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{signal, SigHandler, Signal};
use nix::unistd::{fork, ForkResult, Pid};

use super::namespaces::Cloned;
use super::plan::{self, Plan};
use super::process::{exit_now, fail, pipe, write_all};
pub use super::program::Ending;
use super::program::{program, Exact, Setup};
use super::roles::{
    become_helper, close_program_fds, die_with_keeper, keep, label, release_init, reopen_exact, take_program_ids,
};
use super::{exact, idmap, joined, namespaces, root};

/// The descriptor the host's lifeline arrives on (see `--lifeline`).
const LIFELINE_FD: i32 = plan::LIFELINE_FD;

/// Sets the layers up and starts the program. With `Ending::Return` this returns in the program
/// process alone; every other process this makes (and, with `Ending::Exec`, the caller) ends
/// inside.
pub fn start(plan: Plan, ending: Ending) {
    let joins = plan.cgroup.is_some() || plan.memory_cgroup.is_some();
    let one_thread = joins && std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.count() == 1);
    let cgroup = plan.cgroup.as_ref().is_some_and(|dir| join_cgroup(dir, one_thread));
    // Best effort: the host also reads the process's memory itself.
    if let Some(dir) = &plan.memory_cgroup {
        join_cgroup(dir, one_thread);
    }
    let host_root = nix::unistd::getuid().is_root();
    // SAFETY: the host passes these descriptors for this helper alone. Close-on-exec, so the
    // program never inherits them and the host reads EOF of the report the moment it starts.
    let (status, lifeline) = unsafe {
        libc::fcntl(plan.status_fd, libc::F_SETFD, libc::FD_CLOEXEC);
        let lifeline = plan.lifeline.then(|| {
            libc::fcntl(LIFELINE_FD, libc::F_SETFD, libc::FD_CLOEXEC);
            OwnedFd::from_raw_fd(LIFELINE_FD)
        });
        (OwnedFd::from_raw_fd(plan.status_fd), lifeline)
    };
    // A root host lends a run none of its groups, and no uid of its own (below).
    if host_root {
        if let Err(e) = nix::unistd::setgroups(&[]) {
            fail("setgroups", e);
        }
    }
    let ids = match (host_root, plan.run_as) {
        (true, Some(ids)) => ids,
        (true, None) => super::identity::NOBODY,
        (false, _) => (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw()),
    };
    let setup = Setup { namespaces: false, private_proc: false, root: false, cgroup, host_root, ids };
    // Before anything is made for the run: a policy path that a link now redirects refuses it.
    let exact = open_exact(&plan, &status);
    // The keeper outlives a SIGTERM: init (or the host's group signal) reaches the program,
    // and the keeper then exits as the program did.
    // SAFETY: installing SIG_IGN is always sound.
    unsafe { signal(Signal::SIGTERM, SigHandler::SigIgn) }.ok();
    let slim = match ending {
        Ending::Return => plan.slim.as_deref().and_then(open_helper),
        Ending::Exec => None,
    };
    let slim = slim.as_ref();
    let (status, lifeline) = match plan.namespaces {
        true => match with_namespaces(&plan, status, lifeline, setup, &exact, (ending, slim)) {
            Some(refused) => refused,
            None => return,
        },
        false => (status, lifeline),
    };
    without_namespaces(&plan, status, lifeline, setup, &exact, (ending, slim))
}

/// Opens each `--as-host` path with no symbolic link followed (src/sandbox/exact.rs), as the
/// host's own credentials reach it. One that cannot be opened so refuses the run: the report
/// names its index and errno (`policy-refused`), and this helper exits before anything starts.
fn open_exact(plan: &Plan, status: &OwnedFd) -> Exact {
    let mut opened = Vec::with_capacity(plan.as_host.len());
    for (index, path) in plan.as_host.iter().enumerate() {
        match exact::open(path) {
            Ok(fd) => opened.push((path.clone(), fd)),
            Err(e) => {
                write_all(status, plan::policy_refused_line(index, e as i32).as_bytes());
                exit_now(abi::EXIT_SETUP);
            }
        }
    }
    opened
}

/// The run in new namespaces: init is cloned into them, its ids mapped from here. Returns the
/// descriptors, untouched, when the kernel refuses the namespaces; `None` in the program process
/// (`Ending::Return`).
fn with_namespaces(
    plan: &Plan,
    status: OwnedFd,
    lifeline: Option<OwnedFd>,
    mut setup: Setup,
    exact: &Exact,
    (ending, slim): (Ending, Option<&OwnedFd>),
) -> Option<(OwnedFd, Option<OwnedFd>)> {
    // Made before the clone, so init inherits them (only the host's root may make them).
    let trees = host_trees(plan, &setup, exact);
    if let (Ending::Return, Some(helper), true) = (ending, slim, plan.join) {
        return joined::run(plan, status, lifeline, setup, (exact, &trees), helper);
    }
    let (relay_r, relay_w) = pipe();
    let (go_r, go_w) = pipe();
    match namespaces::clone_init(plan.network) {
        Err(_) => Some((status, lifeline)),
        Ok(Cloned::Child) => {
            drop((relay_r, go_w, lifeline));
            if !namespaces::await_maps(&go_r) {
                exit_now(abi::EXIT_SETUP);
            }
            drop(go_r);
            setup.namespaces = true;
            init(plan, status, relay_w, setup, &trees, exact, (ending, slim));
            None
        }
        Ok(Cloned::Parent(child)) => {
            drop((relay_w, go_r, trees));
            release_init(child, setup.ids, go_w, &status);
            drop(status);
            close_program_fds(Some(&relay_r));
            if let Some(helper) = slim {
                let fds = [relay_r.as_raw_fd(), lifeline.as_ref().map_or(-1, |l| l.as_raw_fd())];
                become_helper(helper, "keeper", &[child.as_raw(), fds[0], fds[1], 0], &fds, label(plan));
            }
            keep(child, Some(relay_r), lifeline, false)
        }
    }
}

/// Under a root host, idmapped trees of the host's own granted paths (`--as-host`), cloned
/// from the descriptors `open_exact` checked: the run reaches them as their owner. Paths the
/// kernel cannot idmap are bound as usual (the run then has only its own ids' access there).
fn host_trees(plan: &Plan, setup: &Setup, exact: &Exact) -> Vec<(std::path::PathBuf, OwnedFd)> {
    use std::os::fd::AsFd;
    if !setup.host_root || exact.is_empty() {
        return Vec::new();
    }
    let Some(userns) = idmap::userns_for(setup.ids.0, setup.ids.1) else { return Vec::new() };
    exact
        .iter()
        .filter_map(|(path, fd)| {
            let write = plan.read_write.iter().any(|p| p == path);
            Some((path.clone(), idmap::tree(fd.as_fd(), &userns, write)?))
        })
        .collect()
}

/// The run without namespaces: the keeper forks the program, which stays in the keeper's
/// process group (the host signals that group), and dies if the keeper does.
fn without_namespaces(
    plan: &Plan,
    status: OwnedFd,
    lifeline: Option<OwnedFd>,
    setup: Setup,
    exact: &Exact,
    (ending, slim): (Ending, Option<&OwnedFd>),
) {
    // SAFETY: single-threaded process; the child only runs this crate's code until exec.
    match unsafe { fork() } {
        Err(e) => fail("fork", e),
        Ok(ForkResult::Child) => {
            drop(lifeline);
            program(plan, status, setup, exact, ending)
        }
        Ok(ForkResult::Parent { child }) => {
            drop(status);
            close_program_fds(None);
            if let Some(helper) = slim.filter(|_| !plan.keeper_stays) {
                let fd = lifeline.as_ref().map_or(-1, |l| l.as_raw_fd());
                become_helper(helper, "keeper", &[child.as_raw(), -1, fd, 1], &[fd], label(plan));
            }
            keep(child, None, lifeline, true)
        }
    }
}

static PROGRAM: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_term(_: libc::c_int) {
    let pid = PROGRAM.load(Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe. The program leads its own group once it has
        // called setsid; before that, signal it alone.
        unsafe {
            if libc::kill(-pid, libc::SIGTERM) != 0 {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
}

/// PID 1 of the namespace; returns in the program process alone (`Ending::Return`).
fn init(
    plan: &Plan,
    status: OwnedFd,
    relay: OwnedFd,
    mut setup: Setup,
    trees: &[(std::path::PathBuf, OwnedFd)],
    exact: &Exact,
    (ending, slim): (Ending, Option<&OwnedFd>),
) {
    // SAFETY: plain prctl calls. Dying with the keeper takes the namespace down with it (had
    // the keeper died before this, the maps would never have come); not dumpable keeps the
    // program out of this process's memory.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
    }
    let scratch = plan.tmpfs.as_ref().map(|(dir, bytes)| (dir.as_path(), *bytes));
    let grants = (plan.read_only.iter().map(|p| (p.as_path(), false)))
        .chain(plan.read_write.iter().map(|p| (p.as_path(), true)))
        .filter(|(p, _)| scratch.is_none_or(|(dir, _)| dir != *p))
        .collect();
    // The keeper's descriptors are of the host's mount namespace, which a bind here cannot
    // take: each path is opened again in this one, the same way, and must be the same object.
    let exact = &reopen_exact(plan, &status, exact);
    let layout = root::Layout { root: plan.root.as_deref(), grants, scratch, proc: plan.private_proc, trees, exact };
    match root::mount_all(&layout) {
        Ok(mounted) => {
            setup.private_proc = mounted.private_proc;
            setup.root = mounted.root;
        }
        Err(e) => fail("mount", e),
    }
    // Building the root changed init's filesystem ids, which cleared its parent-death signal.
    die_with_keeper(&relay);
    // SAFETY: as in `start`.
    match unsafe { fork() } {
        Err(e) => fail("fork", e),
        Ok(ForkResult::Child) => {
            drop(relay);
            program(plan, status, setup, exact, ending)
        }
        Ok(ForkResult::Parent { child }) => {
            drop(status);
            close_program_fds(Some(&relay));
            if let Some(helper) = slim.filter(|_| take_program_ids()) {
                // Taking the program's ids cleared the parent-death signal again.
                die_with_keeper(&relay);
                let (program, fd) = (child.as_raw(), relay.as_raw_fd());
                become_helper(helper, "init", &[program, fd], &[fd], label(plan));
            }
            serve_as_init(child, relay)
        }
    }
}

/// Init's part once the program is forked: forward SIGTERM to it, reap, relay its status.
fn serve_as_init(program: Pid, relay: OwnedFd) -> ! {
    PROGRAM.store(program.as_raw(), Ordering::Relaxed);
    // SAFETY: the handler only calls kill.
    unsafe { signal(Signal::SIGTERM, SigHandler::Handler(forward_term)) }.ok();
    reap(program, relay)
}

/// Opens the helper executable a forked interpreter's keeper and init become (`Plan::slim`);
/// `None` (they then keep their roles as they are) when it cannot be opened.
fn open_helper(path: &std::path::Path) -> Option<OwnedFd> {
    use nix::fcntl::OFlag;
    nix::fcntl::open(path, OFlag::O_PATH | OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty()).ok()
}

/// `keeper <child> <relay fd|-1> <lifeline fd|-1> <whole group 0|1> [<label>]` and `init
/// <program> <relay fd> [<label>]`: the roles a forked interpreter's keeper and init hand to this
/// helper (`become_helper`), which then ends exactly as they would have; `joined-init …` and
/// `joined-keeper …` are joined.rs's. `None` for arguments they would not have written.
#[allow(dead_code)] // the helper's half (crates/sandbox-helper)
pub fn resume_role(args: &[std::ffi::OsString]) -> Option<std::convert::Infallible> {
    let (role, rest) = args.split_first()?;
    match role.to_str()? {
        "joined-init" => return joined::serve_init(rest),
        "joined-keeper" => return joined::resume_keeper(rest),
        _ => {}
    }
    let count = match role.to_str()? {
        "keeper" => 4,
        "init" => 2,
        _ => return None,
    };
    if rest.len() != count && rest.len() != count + 1 {
        return None;
    }
    let numbers: Vec<i32> = rest[..count].iter().map(|a| a.to_str()?.parse().ok()).collect::<Option<_>>()?;
    // SAFETY: the descriptors the role's caller left open for it (`become_helper`), owned from
    // here on; a negative number is none.
    let owned = |fd: i32| (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
    match (role.to_str()?, numbers.as_slice()) {
        ("keeper", &[child, relay, lifeline, group @ (0 | 1)]) if child > 0 => {
            keep(Pid::from_raw(child), owned(relay), owned(lifeline), group == 1)
        }
        ("init", &[program, relay]) if program > 0 && relay >= 0 => {
            // SAFETY: plain prctl on this process: an exec made it dumpable again.
            unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) };
            serve_as_init(Pid::from_raw(program), owned(relay)?)
        }
        _ => None,
    }
}

/// Reaps every orphan until the program ends, relays its raw status, and exits: the kernel
/// then kills whatever is left in the namespace.
fn reap(program: Pid, relay: OwnedFd) -> ! {
    loop {
        let mut raw = 0;
        // SAFETY: plain waitpid for any child.
        let pid = unsafe { libc::waitpid(-1, &mut raw, 0) };
        if pid == program.as_raw() {
            write_all(&relay, &raw.to_ne_bytes());
            exit_now(0);
        }
        if pid < 0 && nix::errno::Errno::last() != nix::errno::Errno::EINTR {
            exit_now(0);
        }
    }
}

/// Moves this process into the cgroup `dir`. Under cgroup v1 a process with `one_thread` writes
/// `0` (its own thread) to `tasks`: moving one thread takes no lock over every thread group,
/// where a write to `cgroup.procs` first waits for an RCU grace period (measured here: 3–22 ms a
/// run, most of what a Python spare's boot took back to back, and the tail of runs that waited
/// for it). Elsewhere (cgroup v2, or another thread already running) it writes its pid to
/// `cgroup.procs`, which moves every thread.
fn join_cgroup(dir: &std::path::Path, one_thread: bool) -> bool {
    let write = |file: &str, text: &str| {
        std::fs::OpenOptions::new().write(true).open(dir.join(file)).and_then(|mut f| f.write_all(text.as_bytes()))
    };
    (one_thread && write("tasks", "0").is_ok()) || write("cgroup.procs", &std::process::id().to_string()).is_ok()
}
