//! `code-runtime-native-sandbox`: the small helper the addon starts a sandboxed child through.
//!
//! `exec [options] -- argv…` (see src/sandbox/plan.rs) starts one program behind the layers the
//! kernel allows without privileges, and reports on its status descriptor which ones hold:
//!
//! - with namespaces, three processes: this one (the *keeper*, in the host's PID namespace: the
//!   host's child, which waits and then exits exactly as the program did), the namespace's *init*
//!   (PID 1: private mounts, a fresh `/proc`, the scratch tmpfs; it forwards SIGTERM, reaps
//!   orphans, and when the program ends it exits, which kills everything left in the namespace),
//!   and the *program* (PID 2, its own session);
//! - without them (the kernel refused), the program replaces this process.
//!
//! Either way the program starts with its limits, no_new_privs, Landlock and the seccomp filter
//! already applied. This binary links no V8 and holds no program state; it is trusted code that
//! the program cannot reach (another PID namespace, outside its Landlock domain).

// The helper's layers; the addon compiles only the ones it applies itself (src/sandbox/mod.rs).
#[cfg(target_os = "linux")]
#[path = "../sandbox/harden/landlock.rs"]
mod landlock;
#[cfg(target_os = "linux")]
#[path = "../sandbox/harden/namespaces.rs"]
mod namespaces;
#[cfg(target_os = "linux")]
#[path = "../sandbox/harden/seccomp.rs"]
mod seccomp;
// Shared with the addon, which uses the writing half.
#[cfg(target_os = "linux")]
#[allow(dead_code)]
#[path = "../sandbox/plan.rs"]
mod plan;

#[cfg(target_os = "linux")]
fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "isolate" || a == "isolate-probe" || a == "isolate-forge") {
        linux::serve_isolate(&args[0], &args[1..]);
    }
    match plan::Plan::from_args(&args) {
        Some(plan) => linux::start(plan),
        None => {
            eprintln!(
                "code-runtime-native-sandbox: this helper is started by the code-runtime-native addon, not by hand"
            );
            std::process::exit(125);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("code-runtime-native-sandbox: sandboxed children need Linux");
    std::process::exit(125);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::CString;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::{AtomicI32, Ordering};

    use nix::sys::resource::{setrlimit, Resource};
    use nix::sys::signal::{signal, SigHandler, Signal};
    use nix::sys::wait::{waitpid, WaitStatus};
    use nix::unistd::{fork, setsid, ForkResult, Pid};

    use super::plan::{self, Layers, Plan, RlimitKind};
    use super::{landlock, namespaces, seccomp};

    /// What the keeper learned before forking, inherited by its descendants.
    #[derive(Clone, Copy)]
    struct Setup {
        namespaces: bool,
        /// Init mounted a `/proc` of the run's own PID namespace.
        private_proc: bool,
        cgroup: bool,
        /// The host runs as root: RLIMIT_NPROC never binds root's processes, namespace or not.
        host_root: bool,
    }

    pub fn start(plan: Plan) -> ! {
        let cgroup = plan.cgroup.as_ref().is_some_and(|dir| join_cgroup(dir));
        // Best effort: the host also reads the process's memory itself.
        if let Some(dir) = &plan.memory_cgroup {
            join_cgroup(dir);
        }
        let host_root = nix::unistd::getuid().is_root();
        let namespaces = plan.namespaces && namespaces::enter();
        // SAFETY: the host passes this descriptor for this helper alone. Close-on-exec, so the
        // program never inherits it and the host reads EOF the moment the program starts.
        let status = unsafe {
            libc::fcntl(plan.status_fd, libc::F_SETFD, libc::FD_CLOEXEC);
            OwnedFd::from_raw_fd(plan.status_fd)
        };
        let setup = Setup { namespaces, private_proc: false, cgroup, host_root };
        if !namespaces {
            program(&plan, status, setup);
        }
        let (relay_r, relay_w) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
            Ok(p) => p,
            Err(e) => fail("pipe", e),
        };
        // The keeper outlives a SIGTERM: init forwards it to the program, and the keeper then
        // exits as the program did.
        // SAFETY: installing SIG_IGN is always sound.
        unsafe { signal(Signal::SIGTERM, SigHandler::SigIgn) }.ok();
        // SAFETY: single-threaded process; the child only runs this crate's code until exec.
        match unsafe { fork() } {
            Err(e) => fail("fork", e),
            Ok(ForkResult::Child) => {
                drop(relay_r);
                init(&plan, status, relay_w, setup)
            }
            Ok(ForkResult::Parent { child }) => {
                drop(relay_w);
                write_all(&status, format!("init {}\n", child.as_raw()).as_bytes());
                drop(status);
                close_program_fds(&relay_r);
                keep(child, relay_r)
            }
        }
    }

    /// `isolate <addon> <heapMb>`: the program of a contained isolate's sandbox process (started
    /// through `exec`, so every layer already holds). Loads the addon, which links V8 and needs no
    /// Node to serve, and hands it the channel on fd 3.
    /// `isolate-probe <addon> <heapMb> <hostPid>`: the same process, making the calls an escaped
    /// program would (for the test suite; see `crn_isolate_probe`).
    /// `isolate-forge <addon> <heapMb> <scenario>`: the same process, sending a subverted
    /// process's frames once its run starts (for the test suite; see `crn_isolate_forge`).
    pub fn serve_isolate(mode: &std::ffi::OsStr, args: &[std::ffi::OsString]) -> ! {
        let (Some(addon), Some(heap_mb)) = (args.first(), args.get(1).and_then(|h| h.to_str()?.parse::<f64>().ok()))
        else {
            eprintln!("code-runtime-native-sandbox: isolate <addon> <heapMb>");
            std::process::exit(125);
        };
        let Ok(path) = CString::new(addon.as_bytes()) else { std::process::exit(125) };
        // SAFETY: loading the addon this helper shipped with; its initialisers only register
        // napi items, which nothing calls without Node.
        let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            std::process::exit(124);
        }
        let symbol = match mode.to_str() {
            Some("isolate-probe") => c"crn_isolate_probe",
            Some("isolate-forge") => c"crn_isolate_forge",
            _ => c"crn_isolate_serve",
        };
        // SAFETY: the symbols of src/isolate/serve/, of these types.
        let entry = unsafe { libc::dlsym(lib, symbol.as_ptr()) };
        if entry.is_null() {
            std::process::exit(124);
        }
        // Only the channel stays open: stdio goes (nothing here prints; V8's fatal hooks use the
        // channel).
        for fd in 0..=2 {
            // SAFETY: closing this process's own standard descriptors.
            unsafe { libc::close(fd) };
        }
        // SAFETY: fd 3 is the channel the host placed for the program. `_exit`, not `exit`: the
        // isolate threads may still run, and V8's static destructors must not run under them.
        let code = unsafe {
            if mode == "isolate-probe" {
                type Probe = unsafe extern "C" fn(i32, f64, i32) -> i32;
                let host_pid = args.get(2).and_then(|p| p.to_str()?.parse().ok()).unwrap_or(0);
                std::mem::transmute::<*mut libc::c_void, Probe>(entry)(3, heap_mb, host_pid)
            } else if mode == "isolate-forge" {
                type Forge = unsafe extern "C" fn(i32, f64, *const libc::c_char) -> i32;
                let scenario = args.get(2).and_then(|s| CString::new(s.as_bytes()).ok()).unwrap_or_default();
                std::mem::transmute::<*mut libc::c_void, Forge>(entry)(3, heap_mb, scenario.as_ptr())
            } else {
                type Serve = unsafe extern "C" fn(i32, f64) -> i32;
                std::mem::transmute::<*mut libc::c_void, Serve>(entry)(3, heap_mb)
            }
        };
        // SAFETY: ends this process at once.
        unsafe { libc::_exit(code) }
    }

    /// Waits for init, then ends exactly as the program ended (code or signal), so the host's
    /// wait status is the program's and its rusage covers the whole namespace.
    fn keep(init: Pid, relay: OwnedFd) -> ! {
        let init_status = loop {
            match waitpid(init, None) {
                Ok(status) => break status,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => fail("waitpid", e),
            }
        };
        let mut raw = [0u8; 4];
        let relayed = nix::unistd::read(&relay, &mut raw).ok() == Some(4);
        if relayed {
            mirror_raw(i32::from_ne_bytes(raw));
        }
        match init_status {
            WaitStatus::Exited(_, code) => std::process::exit(code),
            WaitStatus::Signaled(_, sig, _) => die_by(sig as i32),
            _ => std::process::exit(125),
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

    /// PID 1 of the namespace.
    fn init(plan: &Plan, status: OwnedFd, relay: OwnedFd, mut setup: Setup) -> ! {
        // SAFETY: plain prctl calls. Dying with the keeper takes the namespace down with it; not
        // dumpable keeps the program (same uid) out of this process's memory.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            libc::prctl(libc::PR_SET_DUMPABLE, 0);
        }
        match namespaces::mount_private(plan.tmpfs.as_ref().map(|(dir, bytes)| (dir.as_path(), *bytes))) {
            Some(mounted) => setup.private_proc = mounted.private_proc,
            None => fail("mount", nix::errno::Errno::last()),
        }
        // SAFETY: as in `start`.
        match unsafe { fork() } {
            Err(e) => fail("fork", e),
            Ok(ForkResult::Child) => {
                drop(relay);
                program(plan, status, setup)
            }
            Ok(ForkResult::Parent { child }) => {
                drop(status);
                close_program_fds(&relay);
                PROGRAM.store(child.as_raw(), Ordering::Relaxed);
                // SAFETY: the handler only calls kill.
                unsafe { signal(Signal::SIGTERM, SigHandler::Handler(forward_term)) }.ok();
                reap(child, relay)
            }
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
                std::process::exit(0);
            }
            if pid < 0 && nix::errno::Errno::last() != nix::errno::Errno::EINTR {
                std::process::exit(0);
            }
        }
    }

    /// The program process: its own session, limits, no_new_privs, Landlock, seccomp, the layer
    /// report, then exec.
    fn program(plan: &Plan, status: OwnedFd, setup: Setup) -> ! {
        if setup.namespaces {
            let _ = setsid();
        }
        // SAFETY: restoring the default disposition is always sound (exec keeps SIG_IGN).
        unsafe { signal(Signal::SIGTERM, SigHandler::SigDfl) }.ok();
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
            };
            if let Err(e) = setrlimit(resource, *soft, *hard) {
                fail("setrlimit", e);
            }
            nproc |= *kind == RlimitKind::Nproc;
        }
        // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) only restricts this process.
        let no_new_privs = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } == 0;
        let mut read_only = plan.read_only.clone();
        if plan.private_proc && setup.private_proc {
            read_only.push("/proc".into());
        }
        let landlock = if no_new_privs { landlock::restrict(&read_only, &plan.read_write) } else { 0 };
        let seccomp = no_new_privs && seccomp::apply();
        // RLIMIT_NPROC counts per user namespace (so it caps this run alone only inside its own),
        // and never binds the host's root.
        let process_cap = setup.cgroup || (nproc && setup.namespaces && !setup.host_root);
        let layers = Layers { namespaces: setup.namespaces, landlock, seccomp, process_cap, init_pid: 0 };
        write_all(&status, layers.line().as_bytes());
        let errno = exec(plan);
        // Still here: the host reports this as a spawn error (and sees the descriptor close).
        write_all(&status, plan::exec_error_line(errno as i32).as_bytes());
        std::process::exit(127);
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

    fn join_cgroup(dir: &std::path::Path) -> bool {
        std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()).is_ok()
    }

    /// The keeper and init hold none of the program's descriptors, so the host sees the
    /// program's pipes close when the program and its descendants have gone.
    fn close_program_fds(relay: &OwnedFd) {
        use std::os::fd::AsRawFd;
        for fd in (0..=3).filter(|fd| *fd != relay.as_raw_fd()) {
            // SAFETY: closing descriptors this process no longer uses (never the relay pipe).
            unsafe { libc::close(fd) };
        }
    }

    fn mirror_raw(raw: i32) -> ! {
        if libc::WIFEXITED(raw) {
            std::process::exit(libc::WEXITSTATUS(raw));
        }
        if libc::WIFSIGNALED(raw) {
            die_by(libc::WTERMSIG(raw));
        }
        std::process::exit(125)
    }

    /// Ends this process by `sig`, as the program was ended.
    fn die_by(sig: i32) -> ! {
        // SAFETY: default disposition, unblocked, then raised; RLIMIT_CORE 0 means no core file.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(sig);
        }
        std::process::exit(128 + sig)
    }

    fn write_all(fd: &OwnedFd, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match nix::unistd::write(fd, bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    }

    fn fail(what: &str, err: nix::errno::Errno) -> ! {
        eprintln!("code-runtime-native-sandbox: {what}: {}", err.desc());
        std::process::exit(126);
    }
}
