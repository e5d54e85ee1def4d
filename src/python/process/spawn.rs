//! Per-run staging and spawn (docs/python.md#staging, docs/python.md#spawn), through the sandbox
//! helper when it is there (src/sandbox): namespaces, Landlock, seccomp and limits around the
//! interpreter.

use std::ffi::OsString;
use std::os::fd::OwnedFd;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::fcntl::OFlag;

use crate::python::process::cgroups::PROCESS_CAP;
use crate::python::process::errors;
#[cfg(target_os = "linux")]
use crate::python::process::forked::{spawn_forked, ForkError};
use crate::python::process::interp::CachedFile;
use crate::python::process::limits::LimitPlan;
use crate::python::process::policy::FilePolicy;
use crate::python::process::spawned::Spawned;
use crate::python::process::staging::{Staging, SCRATCH_BYTES, SYSTEM_READ_ONLY};
#[cfg(target_os = "linux")]
use crate::python::template::host::RuntimeTemplate;
use crate::sandbox::fds::{kill_init, nonblocking, pipe2};
use crate::sandbox::procfs::start_time;
use crate::sandbox::report::STATUS_FD;
use crate::sandbox::spawn::{launch as launch_child, Launch, LaunchError, Launched};
use crate::sandbox::{Layers, Plan, RlimitKind};

/// How a child is confined: the helper (when shipped) and what the interpreter may read.
pub struct Confinement<'a> {
    pub helper: Option<&'a Path>,
    /// The interpreter's installation (`sys.prefix` and friends) and executable.
    pub interpreter_paths: &'a [PathBuf],
    /// The run's own cgroup (its process cap), when the host can make one.
    pub cgroup: Option<&'a Path>,
    /// The run's memory cgroup, when the host can make one.
    pub memory_cgroup: Option<&'a Path>,
    /// The ids a root host's run has (`None` for other hosts: runs have the host's uid).
    pub run_as: Option<(u32, u32)>,
    /// What of the host's tree the run is granted beyond its own directories.
    pub policy: Option<&'a FilePolicy>,
    /// The runtime's Python template to fork the child from (with the helper's plan), if any.
    #[cfg(target_os = "linux")]
    pub template: Option<&'a RuntimeTemplate>,
    /// Booted ahead of its run (a spare): a forked child's keeper becomes the helper
    /// (`Plan::slim`), moving the teardown of its copy of the interpreter from the run's end to
    /// now. A child booted on its run's path keeps its keeper a copy (`Plan::keeper_stays`):
    /// there that exec would come before the run's result. Init is the helper's static build
    /// either way when there is one (`Plan::join`), the helper only for a spare when not.
    pub ahead: bool,
    /// A durable attempt's string hash secret (`PYTHONHASHSEED`), or `None` for the random one.
    /// A child with one is spawned, never forked: the template's secret is the runtime's.
    pub hash_seed: Option<u32>,
}

/// Open files per process of a run (the host's own limit is often far higher: Node raises it):
/// what a run can pin in the kernel without a memory cgroup grows with it.
pub const OPEN_FILES: u64 = 1024;

fn sandbox_plan(confine: &Confinement, helper: &Path, interpreter: &Path, staging: &Staging, lifeline: bool) -> Plan {
    let scratch = staging.scratch();
    let mut read_only: Vec<PathBuf> = SYSTEM_READ_ONLY.iter().map(PathBuf::from).collect();
    read_only.extend(confine.interpreter_paths.iter().cloned());
    // A forked child's directory that is only a name in its own root is no grant: what the host
    // may have at that path is nothing of the run's.
    if staging.on_host {
        read_only.push(staging.dir.clone());
    }
    let roles = crate::sandbox::helper::roles();
    let join = roles.is_some_and(|r| r.linked_statically);
    let mut read_write = vec![scratch.clone(), PathBuf::from("/dev/null")];
    let mut as_host = Vec::new();
    if let Some(policy) = confine.policy {
        read_only.extend(policy.read_only.iter().cloned());
        read_write.extend(policy.read_write.iter().cloned());
        as_host = policy.host_paths();
    }
    Plan {
        namespaces: true,
        tmpfs: Some((scratch.clone(), SCRATCH_BYTES)),
        private_proc: true,
        root: helper.parent().map(Path::to_path_buf),
        cwd: Some(confine.policy.map_or_else(|| scratch.clone(), |p| p.cwd.clone())),
        network: confine.policy.is_some_and(|p| p.network),
        // Without a policy the run reaches no host file but the system's own (which the host does
        // not lock) and its scratch, where a program's sqlite or dbm takes locks of its own.
        no_locks: confine.policy.is_some_and(|p| !p.locks),
        run_as: confine.run_as,
        lifeline,
        read_only,
        read_write,
        as_host,
        rlimits: vec![(RlimitKind::Nproc, PROCESS_CAP, PROCESS_CAP), (RlimitKind::Nofile, OPEN_FILES, OPEN_FILES)],
        cgroup: confine.cgroup.map(Path::to_path_buf),
        memory_cgroup: confine.memory_cgroup.map(Path::to_path_buf),
        slim: (confine.ahead || join).then(|| roles.map_or(helper, |r| r.path.as_path()).to_path_buf()),
        join,
        keeper_stays: join && !confine.ahead,
        env: child_env(staging, confine.hash_seed),
        status_fd: STATUS_FD,
        argv: [vec![interpreter.as_os_str().to_os_string()], child_args(staging, confine.hash_seed)].concat(),
    }
}

/// The interpreter's arguments: `-u -I <bootstrap>`. `-I` also ignores `PYTHONHASHSEED`, so a
/// child with a fixed hash secret runs `-u -s <bootstrap>` instead: its environment is
/// `child_env` alone (cleared, so no other `PYTHON*` variable reaches it) and the bootstrap drops
/// its own directory from `sys.path`, which leaves it as isolated as `-I` would.
fn child_args(staging: &Staging, hash_seed: Option<u32>) -> Vec<OsString> {
    let isolation = if hash_seed.is_some() { "-s" } else { "-I" };
    vec!["-u".into(), isolation.into(), staging.bootstrap().into()]
}

/// The child's whole environment: its scratch directory as `TMPDIR`, and a fixed hash secret.
fn child_env(staging: &Staging, hash_seed: Option<u32>) -> Vec<(OsString, OsString)> {
    let mut env = vec![("TMPDIR".into(), staging.scratch().into_os_string())];
    env.extend(hash_seed.map(|seed| ("PYTHONHASHSEED".into(), seed.to_string().into())));
    env
}

/// `<interpreter> -u -I <bootstrap>` with `{ TMPDIR: <scratch> }`, in a new session, fds 0–3 as
/// pipes (fd 3 a socket pair, since the protocol goes both ways), nothing else inherited, limits
/// applied pre-exec; through the sandbox helper when there is one.
pub fn spawn(
    interpreter: &Path,
    staging: &mut Staging,
    cache: &[CachedFile],
    plan: LimitPlan,
    confine: &Confinement,
) -> Result<Spawned, SpawnError> {
    let sys = |e: nix::Error| SpawnError::Failed(errors::syscall("spawn", &e.into()));
    let (stdin_r, stdin_w) = pipe2(OFlag::O_CLOEXEC).map_err(sys)?;
    let (out_r, out_w) = pipe2(OFlag::O_CLOEXEC).map_err(sys)?;
    let (err_r, err_w) = pipe2(OFlag::O_CLOEXEC).map_err(sys)?;
    #[cfg(target_os = "linux")]
    if let (Some(helper), Some(runtime_template), None) = (confine.helper, confine.template, confine.hash_seed) {
        if let Some(template) = runtime_template.get() {
            let lifeline = crate::sandbox::lifeline::hold();
            let helper_plan = sandbox_plan(confine, helper, interpreter, staging, lifeline.is_some());
            match spawn_forked(&template, &helper_plan, &plan, lifeline) {
                Ok(spawned) => return Ok(spawned),
                // Spawned instead, and the next run has a new template.
                Err(ForkError::Unanswered) => runtime_template.lost(&template),
                Err(ForkError::Failed(m)) => return Err(SpawnError::Failed(m)),
                Err(ForkError::PolicyRefused(index, e)) => {
                    let path = helper_plan.as_host.get(index).map(PathBuf::as_path);
                    return Err(SpawnError::PolicyRefused(policy_refused(path, &e)));
                }
            }
        }
    }
    staging.make_on_host(confine.run_as).map_err(SpawnError::Stage)?;
    staging.stage_bootstrap(cache).map_err(SpawnError::Stage)?;
    let lifeline = confine.helper.and_then(|_| crate::sandbox::lifeline::hold());
    let plan_of_helper =
        confine.helper.map(|helper| sandbox_plan(confine, helper, interpreter, staging, lifeline.is_some()));
    let (executable, args, env) = match (confine.helper, &plan_of_helper) {
        (Some(helper), Some(helper_plan)) => (helper, helper_plan.to_args(), Vec::new()),
        _ => (interpreter, child_args(staging, confine.hash_seed), child_env(staging, confine.hash_seed)),
    };
    let launch = Launch {
        executable,
        args,
        env,
        cwd: None,
        reports: confine.helper.is_some(),
        stdin: Stdio::from(stdin_r),
        stdout: Stdio::from(out_w),
        stderr: Stdio::from(err_w),
        lifeline,
    };
    let launched = launch_child(launch, move || Ok(plan.apply_to_child()?));
    drop(stdin_w); // the child reads EOF on fd 0
    let Launched { pid, pidfd, channel, layers, init, lifeline } = launched.map_err(|e| match e {
        LaunchError::Setup(_, e) => SpawnError::Failed(errors::syscall("spawn", &e)),
        LaunchError::Spawn(e) => SpawnError::Failed(errors::syscall(&format!("spawn {}", executable.display()), &e)),
        // The helper could not start the interpreter: a spawn error, as if spawned directly.
        LaunchError::Exec(e) => SpawnError::Failed(errors::syscall(&format!("spawn {}", interpreter.display()), &e)),
        LaunchError::PolicyRefused(index, e) => {
            let path = plan_of_helper.as_ref().and_then(|p| p.as_host.get(index));
            SpawnError::PolicyRefused(policy_refused(path.map(PathBuf::as_path), &e))
        }
    })?;
    let start_time = start_time(pid);
    let fd3 = OwnedFd::from(channel);
    for fd in [&fd3, &out_r, &err_r] {
        nonblocking(fd);
    }
    Ok(Spawned {
        pid,
        start_time,
        fd3,
        stdout: out_r,
        stderr: err_r,
        pidfd,
        layers,
        init,
        lifeline,
        by_template: false,
        address_space_extra: 0,
    })
}

/// Why a child was not started.
pub enum SpawnError {
    /// The bootstrap could not be written into the staging directory.
    Stage(String),
    /// The plumbing failed (the run's `worker-exit` message).
    Failed(String),
    /// The sandbox helper refused the run's file policy: one of its paths is no longer what
    /// `resolve()` checked (the run's `sandbox-unavailable` message).
    PolicyRefused(String),
}

/// The message of a run whose policy path `path` the helper could not open with no symbolic
/// link followed.
fn policy_refused(path: Option<&Path>, e: &std::io::Error) -> String {
    let shown =
        path.map_or_else(|| "a path of the file policy".to_string(), |p| format!("{:?}", p.display().to_string()));
    let why = match e.raw_os_error() {
        Some(libc::ELOOP) => "a symbolic link is on its way now (an earlier run may have planted it)".to_string(),
        Some(libc::ESTALE) => "another directory took its place while the run was being set up".to_string(),
        _ => format!("it cannot be opened now ({e})"),
    };
    format!(
        "code-runtime-native: the sandbox policy's path {shown} is no longer what resolve() checked: {why}. \
         The program did not run, and no link is ever followed into a run's view: resolve the request again \
         with a path that has no symbolic link in it"
    )
}

/// One child spawned exactly as a run's (then killed at once): the layers the helper reports.
pub fn probe_layers(
    interpreter: &Path,
    interpreter_paths: &[PathBuf],
    tmpdir: &str,
    run_as: Option<(u32, u32)>,
) -> (Option<Layers>, bool) {
    let Some(helper) = crate::sandbox::helper::path() else { return (None, false) };
    let Ok(mut staging) = Staging::create(tmpdir, run_as) else { return (None, false) };
    let plan = LimitPlan::for_host(10, 1 << 30, SCRATCH_BYTES);
    let cgroups = crate::python::process::cgroups::Cgroups::for_child((1u64 << 30) as f64);
    let confine = Confinement {
        helper: Some(helper),
        interpreter_paths,
        cgroup: cgroups.pids.as_ref().map(|c| c.path()),
        memory_cgroup: cgroups.memory.as_ref().map(|c| c.path()),
        run_as,
        policy: None,
        #[cfg(target_os = "linux")]
        template: None,
        ahead: false,
        hash_seed: None,
    };
    let spawned = spawn(interpreter, &mut staging, &[], plan, &confine);
    if let Ok(child) = &spawned {
        match &child.init {
            Some(init) => kill_init(init),
            None => crate::python::process::teardown::signal_group(
                child.pid,
                child.start_time,
                nix::sys::signal::Signal::SIGKILL,
            ),
        }
        crate::sandbox::exit::reap(child.pid);
    }
    staging.remove();
    (spawned.ok().and_then(|s| s.layers), cgroups.memory.is_some())
}
