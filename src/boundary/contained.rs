//! `containment: 'process'`'s JavaScript boundary: the pool of sandbox processes, a contained
//! run, and the suite's probe and forged-process harnesses (src/process_tier/host).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;

use napi::bindgen_prelude::{Function, JsValue, Utf16String};
use napi_derive::napi;

use super::identity::RunAs;

use super::isolate::{event_sink, run_config, EventArgs, IsolateRunOptions};
use crate::isolate::env_hook::EnvHook;
use crate::isolate::host::{HostEvent, Sink};
use crate::isolate::run::RunConfig;
use crate::ledger::text::Text;
use crate::outcome::{FailureKind, RunEnd};
use crate::panic::Lock;
use crate::process_tier::host::{forge, main_call, memory_cap, pool, process, supervise, uv};
use pool::{Pool, PoolConfig};
use process::ProcessSpec;
use supervise::{ContainedConfig, RunControl};

#[napi(object)]
pub struct IsolatePoolOptions {
    pub max_old_generation_size_mb: f64,
    pub max_output_bytes: f64,
    pub max_processes: u32,
    pub max_runs_per_process: u32,
    pub run_as: Option<RunAs>,
}

/// The hardening layers of the sandbox processes, as the first one reported them.
#[napi(object)]
pub struct IsolateSandboxLayers {
    pub process: bool,
    pub helper: bool,
    pub namespaces: bool,
    pub landlock: u32,
    pub seccomp: bool,
    /// The seccomp allowlist holds on every thread of the process (on top of the deny-list).
    pub seccomp_allowlist: bool,
    pub process_cap: bool,
    /// A memory cgroup caps the process (its resident memory is read by the supervisor anyway).
    pub memory_cgroup: bool,
    /// The process runs in a root of its own (bind mounts of the loader's files and the addon).
    pub private_root: bool,
    /// The uid the process has as the host's kernel sees it.
    pub uid: Option<u32>,
}

/// Whether this build and machine can contain isolates in processes (Linux, helper shipped).
#[napi(catch_unwind)]
pub fn contained_isolates_available() -> bool {
    process::locate().is_some()
}

/// Starts one sandbox process in probe mode: hardened as a serving one, it makes the system calls
/// an escaped program would against this host and reports each errno (JSON text). For the suite.
/// `allowlist: false` leaves the seccomp allowlist out (the layers beneath it, on their own).
#[napi(catch_unwind)]
pub fn probe_contained_isolate(allowlist: bool) -> napi::Result<String> {
    let Some((helper, addon)) = process::locate() else {
        return Err(napi::Error::from_reason("the sandbox helper is not beside the addon"));
    };
    let run_as = crate::sandbox::identity::run_as(None);
    let spec =
        ProcessSpec { helper, addon, heap_mb: 64.0, memory_cap: memory_cap(64.0), forge: None, run_as, children: 1 };
    let pid = std::process::id() as i32;
    process::SandboxProcess::probe(&spec, if allowlist { pid } else { -pid }).map_err(napi::Error::from_reason)
}

/// The sandbox processes of one runtime.
#[napi]
pub struct IsolatePool {
    pool: Arc<Pool>,
    heap_mb: f64,
    /// Closes the pool if its env is torn down without the runtime's dispose (a Worker that
    /// ends): its processes are killed and its runs end instead of outliving the env.
    hook: Mutex<Option<EnvHook>>,
}

#[napi]
impl IsolatePool {
    #[napi(catch_unwind, constructor)]
    pub fn new(env: napi::Env, options: IsolatePoolOptions) -> napi::Result<Self> {
        Self::of(env, options, None)
    }

    /// A pool whose processes are honest (`forge: None`) or play the suite's forged scenario.
    fn of(env: napi::Env, options: IsolatePoolOptions, forge: Option<String>) -> napi::Result<Self> {
        let Some((helper, addon)) = process::locate() else {
            return Err(napi::Error::from_reason(
                "containment 'process' needs the code-runtime-native-sandbox helper beside the addon (Linux); use containment: 'thread'",
            ));
        };
        let cap = options.max_output_bytes as usize;
        let pool = Pool::new(PoolConfig {
            spec: ProcessSpec {
                helper,
                addon,
                heap_mb: options.max_old_generation_size_mb,
                memory_cap: memory_cap(options.max_old_generation_size_mb),
                forge,
                run_as: super::identity::run_as(options.run_as),
                children: options.max_processes.max(1) as usize,
            },
            max_processes: options.max_processes.max(1) as usize,
            max_runs: options.max_runs_per_process.max(1),
            // Every frame carries at most the output budget, JSON-escaped (6 bytes a unit at worst).
            frame_cap: cap.saturating_mul(6).saturating_add(1 << 20),
        });
        let hook = EnvHook::register(env.raw(), &pool, Pool::close);
        Ok(IsolatePool { pool, heap_mb: options.max_old_generation_size_mb, hook: Mutex::new(hook) })
    }

    /// What holds around the isolates; waits for the first process to start.
    #[napi(catch_unwind)]
    pub fn sandbox(&self) -> IsolateSandboxLayers {
        let reported = self.pool.layers().unwrap_or_default();
        let layers = reported.helper;
        IsolateSandboxLayers {
            process: true,
            helper: true,
            namespaces: layers.is_some_and(|l| l.namespaces),
            landlock: layers.map_or(0, |l| l.landlock),
            seccomp: layers.is_some_and(|l| l.seccomp),
            seccomp_allowlist: reported.allowlist,
            process_cap: layers.is_some_and(|l| l.process_cap),
            memory_cgroup: reported.memory_cgroup,
            private_root: layers.is_some_and(|l| l.root),
            uid: layers.map(|l| l.uid),
        }
    }

    /// Kills every idle process and returns once none of this pool's processes is left.
    #[napi(catch_unwind)]
    pub fn close(&self) {
        self.pool.close();
        // The cgroups its processes emptied and left for later ones go with them.
        crate::sandbox::cgroup::remove_kept();
        if let Some(hook) = self.hook.locked().take() {
            hook.remove();
        }
    }
}

/// A contained run in flight.
#[napi]
pub struct ContainedIsolateRun {
    control: Arc<RunControl>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Keeps the main thread's callback alive while the run may still hand it a channel.
    on_main: Option<Arc<main_call::MainCallback>>,
}

#[napi]
impl ContainedIsolateRun {
    /// Ends the run with this message, unless it already ended: as `abort`, or as `kind`.
    #[napi(catch_unwind)]
    pub fn abort(&self, message: Utf16String, kind: Option<FailureKind>) {
        self.control.fail(kind.unwrap_or(FailureKind::Abort), Text::Utf16(message.to_vec()));
    }

    /// Delivers a binding call's outcome (see `IsolateRun.reply`); dropped once the run is being
    /// aborted (abort wins: the program never sees a settlement the host made after it).
    #[napi(catch_unwind)]
    pub fn reply(&self, id: f64, ok: bool, json: String) {
        if self.control.abort.locked().is_some() || self.control.end.is_decided() {
            return;
        }
        self.control.answered();
        // Written from here when the socket takes it (the common case: one hop fewer). A process
        // that leaves too many replies unread ends its run (src/channel/backlog.rs).
        let queued = self.control.out.locked().push_reply(crate::channel::host_frames::reply_frame(id, ok, &json));
        self.control.replies.fetch_add(1, Ordering::Relaxed);
        match queued {
            Ok(false) => {}
            Ok(true) => self.control.nudge(),
            Err(refused) => self
                .control
                .fail(FailureKind::Protocol, Text::new(&refused.message("on the isolate process's channel"))),
        }
    }

    /// Joins the supervisor thread if it has finished (or, with `wait`, once it has); returns
    /// whether it is joined. After Done the thread only hands its process back once the next
    /// isolate is prepared, which no run should wait for: the runtime joins it later.
    #[napi(catch_unwind)]
    pub fn join(&self, wait: Option<bool>) -> bool {
        // Called once the run's Done was delivered: nothing calls its `onEvent` again.
        if let Some(callback) = &self.on_main {
            callback.release();
        }
        super::isolate::join_thread(&self.thread, wait)
    }
}

/// Starts a contained run; events arrive exactly as `startIsolateRun`'s.
#[napi(
    catch_unwind,
    ts_args_type = "pool: IsolatePool, options: IsolateRunOptions, onEvent: (kind: RunEventKind, id: number, ns: number, name: number, payload: string | string[] | IsolateReport | undefined) => void"
)]
pub fn start_contained_isolate_run(
    env: napi::Env,
    pool: &IsolatePool,
    options: IsolateRunOptions,
    on_event: Function<EventArgs, ()>,
) -> napi::Result<ContainedIsolateRun> {
    let on_event_value = on_event.value().value;
    let end = RunEnd::default();
    let host = event_sink(on_event, end.clone())?;
    let (wake_r, wake_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
        .map_err(|e| napi::Error::from_reason(format!("failed to start the run's supervisor: {e}")))?;
    let control = Arc::new(RunControl {
        abort: Mutex::new(None),
        out: Mutex::new(supervise::Outbound::default()),
        wake: Mutex::new(Some(wake_w)),
        replies: AtomicU64::new(0),
        end,
        pending_calls: Default::default(),
    });
    // The isolate's heap cap is the one its process was prepared with.
    let run = RunConfig { heap_mb: pool.heap_mb, ..run_config(options)? };
    let config = Arc::new(ContainedConfig { memory_cap: memory_cap(run.heap_mb), run });
    // Node's main thread reads the run's channel and calls `onEvent` directly with what it
    // reads. The callback's strong references all live on this thread (this run's object and
    // the poll handles), so it is released here.
    let on_main = main_call::MainCallback::new(env.raw(), on_event_value).map(Arc::new);
    // An idle process is taken at once, here; one the supervisor obtains later (spawned, or
    // after a wait for admission) is handed to this thread through the event queue.
    let mut taken = supervise::take_ready(&pool.pool, &config, &control, &host, |fd, reader| {
        on_main.as_ref().is_some_and(|callback| uv::read_on_main(env.raw(), fd, reader, callback.clone()))
    });
    let attach = on_main.as_ref().map(|callback| attach_on_main(Arc::downgrade(callback), host.clone()));
    let thread_pool = pool.pool.clone();
    let thread_control = control.clone();
    let thread_config = config.clone();
    // The supervisor gets the taken process once its `run` frame is written (below), so the
    // frame goes out only for a run that has a supervisor.
    let (taken_tx, taken_rx) = std::sync::mpsc::sync_channel(1);
    let thread = std::thread::Builder::new()
        .name("code-runtime-supervisor".into())
        .spawn(move || {
            let taken = taken_rx.recv().unwrap_or(None);
            supervise::run(thread_pool, thread_config, thread_control, wake_r, host, taken, attach)
        })
        .map_err(|e| napi::Error::from_reason(format!("failed to start the run's supervisor: {e}")))?;
    if let Some(Ok(ready)) = taken.as_mut() {
        ready.send_run(&pool.pool, &config, &control);
    }
    // The thread holds the receiver until it has this.
    let _ = taken_tx.send(taken);
    Ok(ContainedIsolateRun { control, thread: Mutex::new(Some(thread)), on_main })
}

/// Has Node's main thread read a channel the supervisor obtained: the work travels through the
/// run's event queue and runs there with its `env`.
fn attach_on_main(callback: Weak<main_call::MainCallback>, host: Sink) -> supervise::Attach {
    Box::new(move |fd, reader| {
        let callback = callback.clone();
        host.send(HostEvent::OnMain(Box::new(move |env| {
            // The run's object holds the callback while the run is in flight.
            let Some(callback) = callback.upgrade() else { return };
            if uv::read_on_main(env, fd, reader.clone(), callback) {
                reader.read_by_main();
            }
        })));
    })
}

/// A pool like `new IsolatePool(options)` whose processes play `scenario` (`isolate-forge`), for
/// the suite: its runs go the whole real way (`startContainedIsolateRun`, the channel read on
/// Node's main thread, the JavaScript runtime), only the process on the other end is subverted.
#[napi(catch_unwind)]
pub fn forge_isolate_pool(env: napi::Env, scenario: String, options: IsolatePoolOptions) -> napi::Result<IsolatePool> {
    IsolatePool::of(env, options, Some(scenario))
}

/// Runs one program on a sandbox process playing `scenario` (declared binding: `tools.echo`) and
/// returns `{ result: { logs, value?, error? }, calls, streamed, processesLeft }` as JSON text.
/// For the suite.
#[napi(catch_unwind)]
pub fn forge_contained_isolate_run(scenario: String, max_output_bytes: f64) -> napi::Result<String> {
    forge::forged_run(scenario, max_output_bytes).map_err(napi::Error::from_reason)
}

/// Runs `programs` one after another on a pool of processes playing `scenario`, each serving
/// `maxRunsPerProcess` runs at most; returns `{ results: [{ result, calls, streamed }], processesLeft }`
/// as JSON text. For the suite (a compromised process must never see a later run).
#[napi(catch_unwind)]
pub fn forge_contained_isolate_runs(
    scenario: String,
    max_output_bytes: f64,
    programs: Vec<String>,
    max_runs_per_process: u32,
) -> napi::Result<String> {
    let (results, left) = forge::forged_runs(scenario, max_output_bytes, &programs, max_runs_per_process)
        .map_err(napi::Error::from_reason)?;
    Ok(serde_json::json!({ "results": results, "processesLeft": left }).to_string())
}
