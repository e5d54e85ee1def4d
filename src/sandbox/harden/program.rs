//! The program process of a run (src/sandbox/harden/enter.rs has the keeper and init around it):
//! its own session, its ids, limits, no_new_privs, Landlock, seccomp and the layer report, then
//! the exec of the program or, in a forked interpreter, the return into it.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{signal, SigHandler, Signal};
use nix::unistd::setsid;

use super::abi;
use super::plan::{self, Layers, Plan, RlimitKind};
use super::process::{exit_now, fail, write_all};
use super::{exact, landlock, namespaces, root, seccomp};

/// How the program starts once its layers hold.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Replace the process with the plan's argv (the helper; the addon never execs).
    #[cfg_attr(not(test), allow(dead_code))]
    Exec,
    /// Return to the caller, in the program process only (a forked interpreter, which then runs
    /// the program itself). Every descriptor but 0–3 is closed first.
    Return,
}

/// A file policy's own paths (`--as-host`), each opened once with no symbolic link followed.
pub(super) type Exact = Vec<(std::path::PathBuf, OwnedFd)>;

/// What the keeper learned before forking, inherited by its descendants.
#[derive(Clone, Copy)]
pub(super) struct Setup {
    pub namespaces: bool,
    /// Init mounted a `/proc` of the run's own PID namespace.
    pub private_proc: bool,
    /// Init built the program's own root and entered it.
    pub root: bool,
    pub cgroup: bool,
    /// The host runs as root: its own ids are never the program's.
    pub host_root: bool,
    /// The ids outside every namespace the program runs as.
    pub ids: (u32, u32),
}

/// The program process: its own session (in namespaces), its ids, limits, no_new_privs,
/// Landlock, seccomp, the layer report, then exec (or, `Ending::Return`, back to the caller with
/// the report's descriptor and every other but 0–3 closed).
pub(super) fn program(plan: &Plan, status: OwnedFd, setup: Setup, exact: &Exact, ending: Ending) {
    if setup.namespaces {
        let _ = setsid();
    }
    // SAFETY: restoring the default disposition is always sound (exec keeps SIG_IGN).
    unsafe { signal(Signal::SIGTERM, SigHandler::SigDfl) }.ok();
    if let Err(e) = take_ids(&setup) {
        fail("setresuid", e);
    }
    // In the run's own root (or the scratch of a run without one), never the host's cwd. A
    // policy's working directory is entered with no symbolic link followed: a link swapped in
    // since the mounts refuses the run, as one before them did.
    if let Some(cwd) = &plan.cwd {
        match plan.as_host.iter().position(|p| p == cwd) {
            Some(index) => {
                let entered = exact::open(cwd).and_then(|fd| nix::unistd::fchdir(&fd));
                if let Err(e) = entered {
                    write_all(&status, plan::policy_refused_line(index, e as i32).as_bytes());
                    exit_now(abi::EXIT_SETUP);
                }
            }
            None => {
                if let Err(e) = nix::unistd::chdir(cwd.as_path()) {
                    fail("chdir", e);
                }
            }
        }
    }

    if !setup.namespaces {
        // Dies with the keeper, which dies with the host (set after the ids: a change of
        // credentials clears it).
        // SAFETY: plain prctl on this process.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    }
    let mut nproc = false;
    for (kind, soft, hard) in &plan.rlimits {
        // RLIMIT_NPROC counts the user's processes in its user namespace: only the run's own
        // namespace makes it a cap of this run (in the host's it would count the host user's).
        if *kind == RlimitKind::Nproc && !setup.namespaces {
            continue;
        }
        let resource = match kind {
            RlimitKind::Core => Resource::RLIMIT_CORE,
            RlimitKind::Fsize => Resource::RLIMIT_FSIZE,
            RlimitKind::Nproc => Resource::RLIMIT_NPROC,
            RlimitKind::Nofile => Resource::RLIMIT_NOFILE,
        };
        if let Err(e) = setrlimit(resource, *soft, *hard) {
            fail("setrlimit", e);
        }
        nproc |= *kind == RlimitKind::Nproc;
    }
    // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) only restricts this process.
    let no_new_privs = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } == 0;
    if ending == Ending::Return {
        // The process that made the user namespace holds every capability in it, and its ids
        // were already `INSIDE_ID` there, so changing them dropped none. A spawned program
        // loses them at exec (a non-root uid); this one never execs.
        if let Err(e) = drop_capabilities() {
            fail("capset", e);
        }
    }
    let mut read_only = plan.read_only.clone();
    if plan.private_proc && setup.private_proc {
        read_only.push("/proc".into());
    }
    if setup.root {
        read_only.extend(root::IDENTITY_FILES.iter().map(std::path::PathBuf::from));
    }
    // In a root of its own, every directory may be listed: the root holds only what was granted.
    let list_only: Vec<std::path::PathBuf> = if setup.root { vec!["/".into()] } else { Vec::new() };
    // The policy's own paths are ruled on the objects the keeper checked (the binds and
    // idmapped mounts of the root show those same files), never by path again.
    let held = |p: &std::path::PathBuf| exact.iter().any(|(path, _)| path == p);
    read_only.retain(|p| !held(p));
    let read_write: Vec<std::path::PathBuf> = plan.read_write.iter().filter(|p| !held(p)).cloned().collect();
    let opened: Vec<(std::os::fd::BorrowedFd, bool)> =
        exact.iter().map(|(path, fd)| (std::os::fd::AsFd::as_fd(fd), plan.read_write.contains(path))).collect();
    let landlock =
        if no_new_privs { landlock::restrict(&read_only, &read_write, &list_only, &opened, !plan.network) } else { 0 };
    let seccomp = no_new_privs && seccomp::apply(plan.no_locks);
    let uid = nix::unistd::geteuid().as_raw();
    let outside_uid = if setup.namespaces { setup.ids.0 } else { uid };
    // RLIMIT_NPROC counts per user namespace (so it caps this run alone only inside its own)
    // and never binds root.
    let process_cap = setup.cgroup || (nproc && setup.namespaces && outside_uid != 0);
    let layers = Layers {
        namespaces: setup.namespaces,
        landlock,
        seccomp,
        process_cap,
        root: setup.root,
        uid: outside_uid,
        init_pid: 0,
    };
    write_all(&status, layers.line().as_bytes());
    if ending == Ending::Return {
        drop(status);
        // SAFETY: closing descriptors above the program's own four (nothing of this crate's
        // outlives this call in the program process).
        if unsafe { libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) } != 0 {
            // Linux < 5.9: no descriptor of the caller's may reach the program, so it does not run.
            fail("close_range", nix::errno::Errno::last());
        }
        return;
    }
    let errno = exec(plan);
    // Still here: the host reports this as a spawn error (and sees the descriptor close).
    write_all(&status, plan::exec_error_line(errno as i32).as_bytes());
    exit_now(abi::EXIT_EXEC);
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAP_VERSION_3: u32 = 0x2008_0522;

/// Empties this process's effective, permitted, inheritable and ambient capability sets.
pub(super) fn drop_capabilities() -> nix::Result<()> {
    // SAFETY: plain prctl on this process.
    if unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) } != 0 {
        return Err(nix::errno::Errno::last());
    }
    let mut header = CapHeader { version: CAP_VERSION_3, pid: 0 };
    let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: capset(2) with a version-3 header and its two data words, both live for the call.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, data.as_ptr()) };
    if r != 0 {
        return Err(nix::errno::Errno::last());
    }
    Ok(())
}

/// Makes every permitted capability inheritable and ambient, so an exec of a program that is no
/// root in this user namespace keeps them (src/sandbox/harden/joined.rs: init before its exec).
/// System calls only, nothing allocated: it runs on another process's memory. A capability the
/// kernel does not know is refused and skipped.
pub(super) fn raise_ambient_capabilities() {
    let mut header = CapHeader { version: CAP_VERSION_3, pid: 0 };
    let mut data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
    // SAFETY: capget(2) and capset(2) with a version-3 header and two data words, live for each
    // call; then plain prctl calls on this process.
    unsafe {
        if libc::syscall(libc::SYS_capget, &mut header as *mut CapHeader, data.as_mut_ptr()) != 0 {
            return;
        }
        for word in &mut data {
            word.inheritable = word.permitted;
        }
        if libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, data.as_ptr()) != 0 {
            return;
        }
        for cap in 0..64 {
            libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_RAISE, cap, 0, 0);
        }
    }
}

/// The program's ids: in namespaces the inside id (mapped to the run's ids outside); without
/// them, a root host's program still drops to the run's ids.
fn take_ids(setup: &Setup) -> nix::Result<()> {
    use nix::unistd::{setresgid, setresuid, Gid, Uid};
    let (uid, gid) = match (setup.namespaces, setup.host_root) {
        (true, _) => (namespaces::INSIDE_ID, namespaces::INSIDE_ID),
        (false, true) => setup.ids,
        (false, false) => return Ok(()),
    };
    setresgid(Gid::from_raw(gid), Gid::from_raw(gid), Gid::from_raw(gid))?;
    setresuid(Uid::from_raw(uid), Uid::from_raw(uid), Uid::from_raw(uid))
}

/// Replaces this process with the program; returns only the errno of a failed exec.
fn exec(plan: &Plan) -> nix::errno::Errno {
    let cstr = |s: &[u8]| CString::new(s).unwrap_or_else(|_| fail("exec", nix::errno::Errno::EINVAL));
    let argv: Vec<CString> = plan.argv.iter().map(|a| cstr(a.as_bytes())).collect();
    let env: Vec<CString> = plan
        .env
        .iter()
        .map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            cstr(&kv)
        })
        .collect();
    nix::unistd::execve(&argv[0], &argv, &env).unwrap_err()
}
