//! A run's JavaScript-facing handle and its thread: commands in (replies, aborts, an immediate
//! kill for an exiting host), and a guard so that even a panicking run resolves and leaves no child.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use nix::sys::signal::Signal;

use crate::outcome::{FailureKind, RunEnd};
use crate::panic::Lock;
use crate::python::process::teardown::signal_group;
use crate::python::protocol::events::{emit_settled, failure, Events, Tracked, Usage};
use crate::python::run::shared::Shared;
use crate::python::run::{Attach, Run, RunSpec};

/// Commands from JavaScript.
pub enum Command {
    /// `payload` is the resolution's JSON text (`ok`) or the rejection message as a JSON string.
    Reply {
        id: f64,
        ok: bool,
        payload: String,
    },
    Abort {
        kind: FailureKind,
        message: Vec<u16>,
    },
}

/// The child's process group while it may be alive: pid, start time (for the pid-reuse guard)
/// and the staging directory.
pub type Group = Arc<Mutex<Option<(i32, Option<u64>, PathBuf)>>>;

/// The JavaScript handle's side of a run.
pub struct Control {
    tx: Sender<Command>,
    /// The waker's write end; the run closes it when it ends, so no descriptor waits for GC.
    wake: Arc<Mutex<Option<UnixStream>>>,
    group: Group,
    /// An abort was sent: replies sent after it are dropped (abort wins).
    aborted: AtomicBool,
    /// The run as its thread and Node's main thread share it: replies are written from here.
    shared: Arc<Shared>,
}

impl Control {
    /// Never fails: after the run ends, commands are dropped, and so are replies after an abort.
    pub fn send(&self, cmd: Command) {
        let cmd = match cmd {
            Command::Abort { kind, message } => {
                self.aborted.store(true, Ordering::SeqCst);
                Command::Abort { kind, message }
            }
            // The call-backlog barrier (id -1) is not a settlement: it still passes.
            Command::Reply { id, .. } if id >= 0.0 && self.aborted.load(Ordering::SeqCst) => return,
            // A binding's reply is written from this thread (`shared.rs`); one the run no longer
            // takes (its end is being settled) goes to the run's thread, which drops it.
            Command::Reply { id, ok, payload } if id >= 0.0 => match self.shared.reply(id, ok, payload) {
                None => return,
                Some(payload) => Command::Reply { id, ok, payload },
            },
            cmd => cmd,
        };
        if self.tx.send(cmd).is_ok() {
            if let Some(wake) = self.wake.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                let _ = (&*wake).write(&[1]);
            }
        }
    }

    /// SIGKILLs the group and removes the staging directory at once, from the calling thread: for
    /// a host that is exiting and cannot wait for the run's own teardown. A no-op once it is gone.
    pub fn kill_now(&self) {
        if let Some((pid, start, dir)) = self.group.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            signal_group(*pid, *start, Signal::SIGKILL);
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Starts a run on its own thread.
/// `end` is decided with the run's outcome; the host delivers no call of the run after it.
/// `attach` has Node's main thread read the run's fd 3 once its child is up.
pub fn start(spec: RunSpec, events: Box<dyn Events>, end: RunEnd, attach: Option<Attach>) -> std::io::Result<Control> {
    let group: Group = Arc::new(Mutex::new(None));
    let run_group = group.clone();
    let (tx, rx) = mpsc::channel();
    let (wake, wake_rx) = UnixStream::pair()?;
    wake.set_nonblocking(true)?;
    wake_rx.set_nonblocking(true)?;
    let wake = Arc::new(Mutex::new(Some(wake)));
    let run_wake = wake.clone();
    let shared = Arc::new(Shared::new(wake.clone()));
    let run_shared = shared.clone();
    // The spec reaches the thread once its spare's first frames are written (below), so they
    // are written only for a run that has a thread to watch it.
    let (spec_tx, spec_rx) = mpsc::sync_channel::<RunSpec>(1);
    let started = std::thread::Builder::new().name("crn-python-run".into()).stack_size(1 << 20).spawn(move || {
        if let Ok(spec) = spec_rx.recv() {
            guarded(spec, events, rx, wake_rx, run_group, end, (run_shared, attach));
        }
        *run_wake.lock().unwrap_or_else(|p| p.into_inner()) = None;
    });
    let mut spec = spec;
    if let Err(e) = started {
        if let Some(spare) = spec.spare.take() {
            spare.discard();
        }
        return Err(e);
    }
    spec.write_first_frames();
    // The thread holds the receiver until it has the spec.
    let _ = spec_tx.send(spec);
    Ok(Control { tx, wake, group, aborted: AtomicBool::new(false), shared })
}

/// Runs one run; should it ever panic (a bug), the group is killed, the staging directory removed
/// and the run still resolves, so neither a child nor a pending promise outlives the failure.
fn guarded(
    spec: RunSpec,
    events: Box<dyn Events>,
    rx: Receiver<Command>,
    wake: UnixStream,
    group: Group,
    end: RunEnd,
    (run, attach): (Arc<Shared>, Option<Attach>),
) {
    let began = Instant::now();
    let shared: Arc<dyn Events> = Arc::from(events);
    let settled = Arc::new(AtomicBool::new(false));
    let tracked = Box::new(Tracked { inner: shared.clone(), settled: settled.clone() });
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        Run::execute(spec, tracked, rx, wake, group.clone(), end.clone(), (run.clone(), attach))
    }));
    let Err(panic) = outcome else { return };
    end.decide();
    // Nobody reads for the run any more; its descriptors close with it.
    run.main.reads.store(false, Ordering::Release);
    drop(run.run.locked().take());
    if let Some((pid, start, dir)) = group.lock().unwrap_or_else(|p| p.into_inner()).take() {
        signal_group(pid, start, Signal::SIGKILL);
        let _ = std::fs::remove_dir_all(dir);
        crate::sandbox::exit::reap_in_background(pid);
    }
    if !settled.load(Ordering::SeqCst) {
        let what = crate::panic::reason(&*panic).unwrap_or_default();
        let message = format!("python host failure: {what}");
        emit_settled(
            &*shared,
            &[],
            &failure(FailureKind::WorkerExit, &message),
            Usage { cpu_wall_rss: None, stopped_at: None },
            began,
        );
    }
}
