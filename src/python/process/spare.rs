//! Children booted ahead of their run (docs/python.md#spares): staged, spawned behind the sandbox,
//! and left importing and waiting for their `boot` frame, so a run does not wait for interpreter
//! start-up. A spare is never used by any program before its run, and is replaced after each run.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::python::process::cgroups::Cgroups;
use crate::python::process::interp::CachedFile;
use crate::python::process::limits::LimitPlan;
use crate::python::process::policy::FilePolicy;
use crate::python::process::spawn::{spawn, Confinement, SpawnError};
use crate::python::process::spawned::Spawned;
use crate::python::process::staging::{Staging, SCRATCH_BYTES};
use crate::python::process::teardown::signal_group;
use crate::sandbox::fds::kill_init;

/// What a child is started with (the same for a spare and for a run that boots its own).
#[derive(Clone)]
pub struct ChildSpec {
    pub executable: PathBuf,
    pub interpreter_paths: Vec<PathBuf>,
    pub pycache: Arc<Vec<CachedFile>>,
    pub tmpdir: String,
    pub cpu_seconds: f64,
    pub address_space_bytes: f64,
    /// The ids a root host's child has (`None` for other hosts).
    pub run_as: Option<(u32, u32)>,
    /// The run's file policy (`None`: its own directories only, no network).
    pub policy: Option<FilePolicy>,
    /// The runtime's template, which forks the child when it can.
    #[cfg(target_os = "linux")]
    pub template: Option<Arc<crate::python::template::host::RuntimeTemplate>>,
    /// A durable attempt's string hash secret (docs/durable.md#determinism); `None` for `run()`.
    pub hash_seed: Option<u32>,
}

impl ChildSpec {
    /// Whether a child started for `self` serves a run that asks for `other`.
    fn serves(&self, other: &ChildSpec) -> bool {
        #[cfg(target_os = "linux")]
        let same_template = match (&self.template, &other.template) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        #[cfg(not(target_os = "linux"))]
        let same_template = true;
        same_template
            && self.executable == other.executable
            && self.tmpdir == other.tmpdir
            && self.cpu_seconds == other.cpu_seconds
            && self.address_space_bytes == other.address_space_bytes
            && self.interpreter_paths == other.interpreter_paths
            && self.run_as == other.run_as
            && self.policy == other.policy
            && self.hash_seed == other.hash_seed
    }
}

/// A spawned child with its staging directory and cgroups.
pub struct Booted {
    pub staging: Staging,
    pub cgroups: Cgroups,
    pub spawned: Spawned,
}

/// Why a child could not be started: the run's `worker-exit` message.
pub enum BootError {
    Stage(String),
    Spawn(String),
    /// The helper refused the run's file policy (its message is the run's `sandbox-unavailable`).
    PolicyRefused(String),
}

impl BootError {
    pub fn message(&self) -> String {
        match self {
            BootError::Stage(m) => format!("failed to stage the python bootstrap: {m}"),
            BootError::Spawn(m) => format!("python spawn error: {m}"),
            BootError::PolicyRefused(m) => m.clone(),
        }
    }
}

/// Stages and spawns one child, for a spare (`ahead`) or for the run at hand.
pub fn boot(spec: &ChildSpec, ahead: bool) -> Result<Booted, BootError> {
    #[cfg(target_os = "linux")]
    let forked_into_own_root = spec.hash_seed.is_none() && spec.template.as_ref().is_some_and(|t| t.own_root());
    #[cfg(not(target_os = "linux"))]
    let forked_into_own_root = false;
    let mut staging = match forked_into_own_root {
        true => Staging::in_root_only(&spec.tmpdir),
        false => Staging::create(&spec.tmpdir, spec.run_as).map_err(BootError::Stage)?,
    };
    let plan = LimitPlan::for_host(spec.cpu_seconds as u64, spec.address_space_bytes as u64, SCRATCH_BYTES);
    let cgroups = Cgroups::for_child(spec.address_space_bytes);
    let confine = Confinement {
        helper: crate::sandbox::helper::path(),
        interpreter_paths: &spec.interpreter_paths,
        cgroup: cgroups.pids.as_ref().map(|c| c.path()),
        memory_cgroup: cgroups.memory.as_ref().map(|c| c.path()),
        run_as: spec.run_as,
        policy: spec.policy.as_ref(),
        #[cfg(target_os = "linux")]
        template: spec.template.as_deref(),
        ahead,
        hash_seed: spec.hash_seed,
    };
    match spawn(&spec.executable, &mut staging, &spec.pycache, plan, &confine) {
        Ok(spawned) => Ok(Booted { staging, cgroups, spawned }),
        Err(e) => {
            staging.remove();
            Err(match e {
                SpawnError::Stage(m) => BootError::Stage(m),
                SpawnError::Failed(m) => BootError::Spawn(m),
                SpawnError::PolicyRefused(m) => BootError::PolicyRefused(m),
            })
        }
    }
}

impl Booted {
    /// Whether the child is still running (a spare that died waiting is discarded, reaped).
    fn alive(&self) -> bool {
        self.spawned.running()
    }

    /// Kills a child no run will use, reaps it and removes its directory and cgroup.
    pub fn discard(self) {
        match &self.spawned.init {
            Some(init) => kill_init(init),
            None => signal_group(self.spawned.pid, self.spawned.start_time, nix::sys::signal::Signal::SIGKILL),
        }
        self.spawned.wait_exit();
        self.staging.remove();
        drop(self.cgroups);
    }
}

/// One spare being booted (on a thread of its own) or ready.
pub struct Spare {
    slot: Arc<(Mutex<SpareSlot>, Condvar)>,
    spec: ChildSpec,
    /// Under a file policy: the objects its host paths named when the spare was prepared
    /// (`FilePolicy::host_objects`). It serves a run only if they still do, so a path that a link
    /// or another directory took over since refuses the run as it would have without a spare.
    policy_objects: Option<Vec<(u64, u64)>>,
    /// Held for the whole of a dispose: one called while another runs (a release's, on a thread
    /// of its own) returns only once the spare is gone.
    disposing: Mutex<()>,
}

enum SpareSlot {
    Booting,
    /// Disposed while booting: the boot thread discards the child once its spawn returns.
    Abandoned,
    /// The child (boxed: the slot's other states are small), and how long its boot took.
    Ready(Box<Booted>, Duration),
    /// Taken by a run, after a boot that took this long.
    Taken(Duration),
    Gone,
}

impl Spare {
    /// Starts booting a spare off the caller's thread.
    pub fn prepare(spec: ChildSpec) -> Spare {
        let policy_objects = spec.policy.as_ref().and_then(FilePolicy::host_objects);
        let slot = Arc::new((Mutex::new(SpareSlot::Booting), Condvar::new()));
        if spec.policy.is_some() && policy_objects.is_none() {
            // A path of the policy cannot be opened as the helper would: no spare serves it.
            *slot.0.lock().unwrap_or_else(|p| p.into_inner()) = SpareSlot::Gone;
            return Spare { slot, spec, policy_objects, disposing: Mutex::new(()) };
        }
        let (thread_slot, thread_spec) = (slot.clone(), spec.clone());
        // Detached: a thread kept joinable keeps its stack mapped until its handle is dropped,
        // which for a spare a run took is whenever the host's collector finalizes the JS object
        // (a soak of policy runs grew by that). Waiting for the boot is the slot's condvar.
        let started =
            std::thread::Builder::new().name("crn-python-spare".into()).stack_size(256 << 10).spawn(move || {
                let started = Instant::now();
                let booted = std::panic::catch_unwind(|| boot(&thread_spec, true).ok()).ok().flatten();
                let (lock, ready) = &*thread_slot;
                let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
                match (booted, &*slot) {
                    (Some(b), SpareSlot::Booting) => *slot = SpareSlot::Ready(Box::new(b), started.elapsed()),
                    (Some(b), _) => {
                        b.discard();
                        *slot = SpareSlot::Gone;
                    }
                    (None, _) => *slot = SpareSlot::Gone,
                }
                ready.notify_all();
            });
        if started.is_err() {
            *slot.0.lock().unwrap_or_else(|p| p.into_inner()) = SpareSlot::Gone;
        }
        Spare { slot, spec, policy_objects, disposing: Mutex::new(()) }
    }

    /// Whether the policy's host paths still name the objects they named at `prepare`.
    fn policy_holds(&self) -> bool {
        match &self.spec.policy {
            None => true,
            Some(policy) => self.policy_objects.is_some() && policy.host_objects() == self.policy_objects,
        }
    }

    /// The booted child, if it is ready, alive, and was started the way `spec` would start one.
    pub fn take(&self, spec: &ChildSpec) -> Option<Booted> {
        let same = self.spec.serves(spec) && self.policy_holds();
        let (lock, ready) = &*self.slot;
        let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
        // Still spawning (milliseconds: the spawn returns once the interpreter has started): that
        // is sooner than a spawn of the run's own.
        while matches!(*slot, SpareSlot::Booting | SpareSlot::Abandoned) {
            slot = ready.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
        match std::mem::replace(&mut *slot, SpareSlot::Gone) {
            SpareSlot::Ready(b, took) if same && b.alive() => {
                *slot = SpareSlot::Taken(took);
                Some(*b)
            }
            SpareSlot::Ready(b, _) => {
                b.discard();
                None
            }
            SpareSlot::Booting | SpareSlot::Abandoned | SpareSlot::Taken(_) | SpareSlot::Gone => None,
        }
    }

    /// Whether nothing of the spare is left to wait for: no child of its own (disposed, taken by a
    /// run, or never booted), no boot under way and no dispose running.
    pub fn gone(&self) -> bool {
        if let Err(std::sync::TryLockError::WouldBlock) = self.disposing.try_lock() {
            return false;
        }
        matches!(*self.slot.0.lock().unwrap_or_else(|p| p.into_inner()), SpareSlot::Gone | SpareSlot::Taken(_))
    }

    /// How long the spare took to boot, once it has (`None` while it boots, or if it failed).
    pub fn boot_time(&self) -> Option<Duration> {
        match &*self.slot.0.lock().unwrap_or_else(|p| p.into_inner()) {
            SpareSlot::Ready(_, took) | SpareSlot::Taken(took) => Some(*took),
            SpareSlot::Booting | SpareSlot::Abandoned | SpareSlot::Gone => None,
        }
    }

    /// Kills the spare (booting or ready) and removes what it staged; returns once it is gone.
    pub fn dispose(&self) {
        let _whole = self.disposing.lock().unwrap_or_else(|p| p.into_inner());
        let (lock, ready) = &*self.slot;
        let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *slot, SpareSlot::Gone) {
            SpareSlot::Ready(b, _) => b.discard(),
            SpareSlot::Booting | SpareSlot::Abandoned => {
                // Its boot thread discards the child once its spawn returns: wait for that.
                *slot = SpareSlot::Abandoned;
                while matches!(*slot, SpareSlot::Abandoned) {
                    slot = ready.wait(slot).unwrap_or_else(|p| p.into_inner());
                }
            }
            taken @ SpareSlot::Taken(_) => *slot = taken,
            SpareSlot::Gone => {}
        }
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        self.dispose();
    }
}
