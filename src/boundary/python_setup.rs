//! The Python backend's JavaScript boundary before any run: the interpreter's load, its
//! precompiled modules, the sandbox layers that hold, the runtime's template and spares, and how a
//! child is started (src/python/process, src/python/template). Runs are in `python.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::identity::{self, RunAs};
use crate::channel::table::python_roster;
use crate::python::process::interp::{self, CachedFile};
use crate::python::process::policy::FilePolicy;
use crate::python::process::spare::{ChildSpec, Spare};
use crate::python::protocol::logs::log_truncation_marker;

#[napi(object)]
pub struct PythonInterpreter {
    /// `pythonBin` resolved to an absolute path.
    pub resolved: String,
    /// The path runs spawn: the probe's `sys.executable` when usable, else `resolved`.
    pub executable: String,
    /// `cpython 3 11 7`
    pub version: String,
    /// The installation's directories (`sys.prefix` and friends), which a sandboxed child may read.
    pub prefixes: Vec<String>,
}

#[napi(object)]
pub struct PythonLoad {
    pub interpreter: Option<PythonInterpreter>,
    /// The load-time error, without the package prefix.
    pub error: Option<String>,
}

/// Resolves `pythonBin` (against `cwd` or the absolute entries of `path`) and probes it.
#[napi(catch_unwind)]
pub fn python_load_interpreter(bin: String, path: Option<String>, cwd: String, tmpdir: String) -> PythonLoad {
    match interp::load(&bin, path.as_deref(), Path::new(&cwd), &tmpdir) {
        Ok(i) => PythonLoad {
            interpreter: Some(PythonInterpreter {
                resolved: i.resolved.to_string_lossy().into_owned(),
                executable: i.executable.to_string_lossy().into_owned(),
                version: i.version,
                prefixes: i.prefixes.iter().map(|p| p.to_string_lossy().into_owned()).collect(),
            }),
            error: None,
        },
        Err(e) => PythonLoad { interpreter: None, error: Some(e) },
    }
}

/// The child's modules compiled once per load by the chosen interpreter.
#[napi]
pub struct PythonPycache {
    files: Arc<Vec<CachedFile>>,
}

#[napi]
impl PythonPycache {
    /// Relative paths of the cached files, e.g. `__pycache__/protocol.cpython-311.pyc`.
    #[napi(catch_unwind, getter)]
    pub fn files(&self) -> Vec<String> {
        self.files.iter().map(|(rel, _)| rel.clone()).collect()
    }
}

/// Compiles the child's modules (the addon's embedded copies) with the interpreter runs will use;
/// `null` when it cannot (runs still work).
#[napi(catch_unwind)]
pub fn python_precompile(executable: String, tmpdir: String) -> Option<PythonPycache> {
    interp::precompile(Path::new(&executable), &tmpdir).map(|files| PythonPycache { files: Arc::new(files) })
}

/// Which layers hold around a child, as one real spawn through the sandbox showed them.
#[napi(object)]
pub struct PythonSandbox {
    /// The sandbox helper was found beside the addon.
    pub helper: bool,
    pub namespaces: bool,
    /// The Landlock ABI enforced (0: none).
    pub landlock: u32,
    pub seccomp: bool,
    /// A per-run process cap holds (RLIMIT_NPROC in the run's user namespace, or a cgroup).
    pub process_cap: bool,
    /// The child runs in a root of its own (bind mounts of exactly what it needs).
    pub private_root: bool,
    /// The uid the child has as the host's kernel sees it (absent without the helper).
    pub uid: Option<u32>,
    /// A memory cgroup caps each run as a whole (what it allocates and the kernel memory it pins).
    pub memory_cgroup: bool,
}

/// Removes what dead hosts left in `tmpdir`, then spawns one child the way runs do, reads the
/// helper's report, and kills it.
#[napi(catch_unwind)]
pub fn python_sandbox_layers(
    executable: String,
    interpreter_paths: Vec<String>,
    tmpdir: String,
    run_as: Option<RunAs>,
) -> PythonSandbox {
    crate::python::process::staging::sweep(&tmpdir);
    let paths: Vec<PathBuf> = interpreter_paths.into_iter().map(PathBuf::from).collect();
    let run_as = identity::run_as(run_as);
    let (layers, memory_cgroup) =
        crate::python::process::spawn::probe_layers(Path::new(&executable), &paths, &tmpdir, run_as);
    PythonSandbox {
        helper: crate::sandbox::helper::path().is_some(),
        namespaces: layers.is_some_and(|l| l.namespaces),
        landlock: layers.map_or(0, |l| l.landlock),
        seccomp: layers.is_some_and(|l| l.seccomp),
        process_cap: layers.is_some_and(|l| l.process_cap),
        private_root: layers.is_some_and(|l| l.root),
        uid: layers.map(|l| l.uid),
        memory_cgroup,
    }
}

/// What a run's own root holds of the host's beside the interpreter and a policy's trees.
#[napi(object)]
pub struct PythonRootHolds {
    /// The system's trees, read-only.
    pub system: Vec<String>,
    /// The prefix every staging directory (the bootstrap and the run's scratch) of this host has.
    pub staging_prefix: String,
}

/// What a run's own root holds of the host's (docs/seam.md#denied-the-programs-claim): a file
/// beneath none of it, nor beneath the interpreter's or the policy's trees, is absent from the run.
#[napi(catch_unwind)]
pub fn python_root_holds(tmpdir: String) -> PythonRootHolds {
    let (system, staging_prefix) = crate::python::process::staging::root_holds(&tmpdir);
    PythonRootHolds { system, staging_prefix }
}

#[napi(object)]
pub struct PythonProtocolInfo {
    pub protocol_fd: i32,
    /// `py/protocol.py`'s TypedDicts as src/channel/table lists them, the one roster the suite
    /// holds the child to.
    pub roster: Vec<PythonRosterRow>,
}

/// One TypedDict of the fd-3 roster (docs/protocol.md#frame-roster).
#[napi(object)]
pub struct PythonRosterRow {
    pub name: String,
    /// The frame's `type` word; absent for an object inside a frame.
    pub frame_type: Option<String>,
    /// Required keys (a frame's `type` among them), in the table's order.
    pub required: Vec<String>,
    pub optional: Vec<String>,
}

/// The host's protocol constants and the fd-3 roster, from src/channel/table, for the mirror
/// test against `py/protocol.py`.
#[napi(catch_unwind)]
pub fn python_protocol_info() -> PythonProtocolInfo {
    let owned = |keys: Vec<&str>| keys.into_iter().map(str::to_string).collect();
    PythonProtocolInfo {
        protocol_fd: crate::python::PROTOCOL_FD,
        roster: python_roster()
            .into_iter()
            .map(|row| PythonRosterRow {
                name: row.name.to_string(),
                frame_type: row.ty.map(str::to_string),
                required: owned(row.required),
                optional: owned(row.optional),
            })
            .collect(),
    }
}

/// `[code-runtime-native] log capture truncated at <N> bytes`, as the host writes it.
#[napi(catch_unwind)]
pub fn python_log_truncation_marker(max_bytes: u32) -> String {
    log_truncation_marker(max_bytes as usize)
}

/// How a spare child is started: the run options it must match.
#[napi(object)]
pub struct PythonSpareOptions {
    pub executable: String,
    pub interpreter_paths: Vec<String>,
    pub tmpdir: String,
    pub cpu_seconds: f64,
    pub address_space_bytes: f64,
    pub run_as: Option<RunAs>,
    /// The file policy of the runs it may serve (absent: runs without one).
    pub file_policy: Option<PythonFilePolicy>,
}

/// A child booted ahead of the next run (behind the same sandbox and limits), never used by any
/// program before it. Dropping or disposing it kills it.
#[napi]
pub struct PythonSpare {
    pub(super) inner: Arc<Spare>,
}

#[napi]
impl PythonSpare {
    /// How many milliseconds the spare took to boot, once it has (none while it boots, or if it
    /// failed): how soon before a run one must be started to be ready for it.
    #[napi(catch_unwind, getter)]
    pub fn boot_ms(&self) -> Option<f64> {
        self.inner.boot_time().map(|d| d.as_secs_f64() * 1000.0)
    }

    /// Kills the spare and removes its directory; returns once it is gone.
    #[napi(catch_unwind)]
    pub fn dispose(&self) {
        self.inner.dispose();
    }

    /// Whether nothing of the spare is left to wait for (its child gone or taken by a run, no
    /// boot or dispose under way): a released spare that `dispose` need not wait for any more.
    #[napi(catch_unwind, getter)]
    pub fn gone(&self) -> bool {
        self.inner.gone()
    }

    /// Kills the spare and removes its directory and cgroups on a thread of its own (the kernel
    /// may take milliseconds to remove a cgroup); returns at once. A `dispose` meanwhile returns
    /// once that is done.
    #[napi(catch_unwind)]
    pub fn release(&self) {
        let spare = self.inner.clone();
        let spawned = std::thread::Builder::new()
            .name("crn-python-release".into())
            .stack_size(256 << 10)
            .spawn(move || spare.dispose());
        if spawned.is_err() {
            self.inner.dispose();
        }
    }
}

/// A runtime's Python template (docs/python.md#the-template): one interpreter that has imported
/// what runs need and forks each run's child; killed at dispose.
#[napi]
pub struct PythonTemplate {
    #[cfg(target_os = "linux")]
    inner: Arc<crate::python::template::host::RuntimeTemplate>,
}

#[napi]
impl PythonTemplate {
    /// The template process's pid while one runs (none after dispose).
    #[napi(catch_unwind, getter)]
    pub fn pid(&self) -> Option<i32> {
        #[cfg(target_os = "linux")]
        return self.inner.pid();
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Kills the template; runs still in flight end as they would have.
    #[napi(catch_unwind)]
    pub fn dispose(&self) {
        #[cfg(target_os = "linux")]
        self.inner.dispose();
    }
}

/// Starts the runtime's template for runs of `executable` (Linux, behind the sandbox helper);
/// throws why it cannot (runs then start their own interpreter). `ownRoot`: the load's probe
/// showed runs get a root of their own (namespaces and `privateRoot`), so a forked run's
/// directory need not be made on the host's disk.
#[napi(catch_unwind)]
pub fn python_start_template(
    executable: String,
    tmpdir: String,
    run_as: Option<RunAs>,
    own_root: Option<bool>,
) -> Result<PythonTemplate> {
    #[cfg(target_os = "linux")]
    {
        use crate::python::template::host::RuntimeTemplate;
        let own_root = own_root.unwrap_or(false);
        RuntimeTemplate::start(Path::new(&executable), &tmpdir, identity::run_as(run_as), own_root)
            .map(|t| PythonTemplate { inner: Arc::new(t) })
            .map_err(Error::from_reason)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (executable, tmpdir, run_as, own_root);
        Err(Error::from_reason("no Python template on this platform"))
    }
}

/// Starts booting a spare child on a thread of its own (under `filePolicy`, for runs with exactly
/// that policy; none boots when one of its paths cannot be opened with no link followed).
#[napi(catch_unwind)]
pub fn python_prepare_spare(
    options: PythonSpareOptions,
    pycache: Option<&PythonPycache>,
    template: Option<&PythonTemplate>,
) -> Result<PythonSpare> {
    let PythonSpareOptions {
        executable,
        interpreter_paths,
        tmpdir,
        cpu_seconds,
        address_space_bytes,
        run_as,
        file_policy,
    } = options;
    let mut spec = child_spec(
        executable,
        interpreter_paths,
        tmpdir,
        (cpu_seconds, address_space_bytes),
        run_as,
        pycache,
        template,
    );
    spec.policy = file_policy.map(file_policy_of).transpose()?;
    Ok(PythonSpare { inner: Arc::new(Spare::prepare(spec)) })
}

/// A run's or a spare's file policy, checked.
pub(super) fn file_policy_of(p: PythonFilePolicy) -> Result<FilePolicy> {
    FilePolicy::new(p.cwd, p.read_only, p.read_write, p.network, p.locks).map_err(Error::from_reason)
}

/// A child's start-up, from the options JavaScript passed (a run's or a spare's).
pub(super) fn child_spec(
    executable: String,
    interpreter_paths: Vec<String>,
    tmpdir: String,
    (cpu_seconds, address_space_bytes): (f64, f64),
    run_as: Option<RunAs>,
    pycache: Option<&PythonPycache>,
    template: Option<&PythonTemplate>,
) -> ChildSpec {
    #[cfg(not(target_os = "linux"))]
    let _ = template;
    ChildSpec {
        executable: PathBuf::from(executable),
        interpreter_paths: interpreter_paths.into_iter().map(PathBuf::from).collect(),
        pycache: pycache.map_or_else(|| Arc::new(Vec::new()), |p| p.files.clone()),
        tmpdir,
        cpu_seconds,
        address_space_bytes,
        run_as: identity::run_as(run_as),
        policy: None,
        #[cfg(target_os = "linux")]
        template: template.map(|t| t.inner.clone()),
        hash_seed: None,
    }
}

/// What of the host's tree a run is granted (lib/ptc/file-plan.mjs plans it from the policy).
#[napi(object)]
pub struct PythonFilePolicy {
    pub cwd: String,
    pub read_only: Vec<String>,
    pub read_write: Vec<String>,
    pub network: bool,
    /// The child may take file locks (`flock`, `fcntl` record and open file description locks,
    /// leases); `false` refuses them with EPERM (a `read-only` policy).
    pub locks: bool,
}

/// Whether this build enforces a run's `filePolicy` (the child's root and Landlock rules from the
/// sandbox helper; `runtime.sandbox` says whether they hold on this machine).
#[napi]
pub fn python_file_policy_available() -> bool {
    cfg!(target_os = "linux")
}
