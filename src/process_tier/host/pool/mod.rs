//! The sandbox processes of one runtime: forked on demand from the runtime's template (started
//! through the helper, never running a program: `super::template`) up to a maximum, one run at a
//! time each, runs beyond it admitted in FIFO order; one spare kept ready so a run does not wait
//! for a fork; a process is replaced after an abnormal end or `max_runs` runs (by default one: a
//! process a program may have compromised never serves another run).
//!
//! The pool knows processes only through `source::Source` and `source::Pooled`, and time through
//! `source::Clock`, so its admission is unit-tested with fakes (`tests`).

mod forked;
mod source;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::process::ProcessSpec;
use crate::panic::{Lock, Wait};
use crate::sandbox::Layers;
pub use forked::TemplateSource;
pub use source::{Clock, Pooled, Source, SystemClock};

/// How long `close` waits for the processes of runs in flight to be reaped.
const CLOSE_WAIT: Duration = Duration::from_secs(10);

pub struct PoolConfig {
    pub spec: ProcessSpec,
    pub max_processes: usize,
    pub max_runs: u32,
    pub frame_cap: usize,
}

struct State<P> {
    idle: Vec<P>,
    /// Processes that exist or are being started (idle, running, booting).
    live: usize,
    /// Spares being started in the background.
    booting: usize,
    /// Runs waiting for a process, in FIFO order.
    queue: VecDeque<Waiter>,
    next_ticket: u64,
    closed: bool,
    /// What the first process reported (or why it could not start).
    layers: Option<Result<Reported, String>>,
    /// When a run last gave its process back, and how long the last spare took to start: a run
    /// that comes sooner than twice that after the last one comes back to back.
    released_at: Option<Instant>,
    spare_took: Option<Duration>,
}

/// A run waiting in `acquire`: only the front one can be served, so only it is woken when
/// something changes (a burst of runs queued behind `maxProcesses` would otherwise all wake, take
/// the lock and sleep again on every change: measured, 135 futex sleeps of supervisor threads per
/// run in bursts of 64).
struct Waiter {
    ticket: u64,
    wake: Arc<Condvar>,
}

impl<P> Default for State<P> {
    fn default() -> Self {
        State {
            idle: Vec::new(),
            live: 0,
            booting: 0,
            queue: VecDeque::new(),
            next_ticket: 0,
            closed: false,
            layers: None,
            released_at: None,
            spare_took: None,
        }
    }
}

pub struct Pool<S: Source = TemplateSource, C: Clock = SystemClock> {
    /// Starts processes (production: forks them from the template, started on first need, again
    /// if it died).
    source: S,
    clock: C,
    max_processes: usize,
    max_runs: u32,
    state: Mutex<State<S::Process>>,
    changed: Condvar,
}

/// What holds around a sandbox process: the helper's report, and what the process and the
/// host added (the seccomp allowlist, a memory cgroup).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reported {
    pub helper: Option<Layers>,
    pub allowlist: bool,
    pub memory_cgroup: bool,
}

/// Why a run got no process.
#[derive(Debug, PartialEq)]
pub enum Denied {
    /// The run's deadline passed, or it was aborted, while it waited.
    GaveUp,
    Closed,
    Failed(String),
}

impl Pool {
    pub fn new(config: PoolConfig) -> Arc<Pool> {
        let PoolConfig { spec, max_processes, max_runs, frame_cap } = config;
        Pool::with_source(TemplateSource::new(spec, frame_cap), SystemClock, max_processes, max_runs)
    }
}

impl<S: Source, C: Clock> Pool<S, C> {
    pub fn with_source(source: S, clock: C, max_processes: usize, max_runs: u32) -> Arc<Self> {
        let pool = Arc::new(Pool {
            source,
            clock,
            max_processes,
            max_runs,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        pool.keep_spare();
        pool
    }

    /// The layers the first process reported; waits for it to start (bounded by its boot deadline).
    pub fn layers(&self) -> Result<Reported, String> {
        let mut st = self.state.locked();
        while st.layers.is_none() && !st.closed {
            st = self.changed.wait_for(st, Duration::from_millis(20));
        }
        st.layers.clone().unwrap_or(Ok(Reported::default()))
    }

    fn note_layers(st: &mut State<S::Process>, outcome: &Result<S::Process, String>) {
        if st.layers.is_none() {
            st.layers = Some(outcome.as_ref().map(Pooled::reported).map_err(Clone::clone));
        }
    }

    /// A process for one run, waiting in FIFO order; `give_up` is polled while waiting.
    pub fn acquire(self: &Arc<Self>, give_up: &dyn Fn() -> bool) -> Result<S::Process, Denied> {
        let mut st = self.state.locked();
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        let wake = Arc::new(Condvar::new());
        st.queue.push_back(Waiter { ticket, wake: wake.clone() });
        loop {
            if st.closed {
                Self::leave(&mut st, ticket);
                return Err(Denied::Closed);
            }
            if st.queue.front().map(|w| w.ticket) == Some(ticket) {
                while let Some(process) = st.idle.pop() {
                    if !process.idle_and_alive() {
                        self.discard(&mut st, process);
                        continue;
                    }
                    st.queue.pop_front();
                    self.notify(&st);
                    let early = self.back_to_back(&st, &process);
                    drop(st);
                    if early {
                        self.keep_spare();
                    }
                    return Ok(process);
                }
                // A spare on its way serves a waiting run sooner than a process started now.
                if st.live < self.max_processes && st.booting < st.queue.len() {
                    st.live += 1;
                    st.queue.pop_front();
                    self.notify(&st);
                    drop(st);
                    let started = self.start_process();
                    let mut st = self.state.locked();
                    Self::note_layers(&mut st, &started);
                    if started.is_err() {
                        st.live -= 1;
                    }
                    self.notify(&st);
                    return started.map_err(Denied::Failed);
                }
            }
            if give_up() {
                Self::leave(&mut st, ticket);
                self.notify(&st);
                return Err(Denied::GaveUp);
            }
            st = wake.wait_for(st, Duration::from_millis(5));
        }
    }

    /// Takes `ticket` out of the queue.
    fn leave(st: &mut State<S::Process>, ticket: u64) {
        st.queue.retain(|w| w.ticket != ticket);
    }

    /// Something changed: wakes `layers` and `close`, and the one run that can be served next.
    fn notify(&self, st: &State<S::Process>) {
        self.changed.notify_all();
        if let Some(front) = st.queue.front() {
            front.wake.notify_one();
        }
    }

    /// An idle process for a run that need not queue (nobody is waiting ahead of it), at once.
    pub fn take_idle(self: &Arc<Self>) -> Option<S::Process> {
        let mut st = self.state.locked();
        if st.closed || !st.queue.is_empty() {
            return None;
        }
        while let Some(process) = st.idle.pop() {
            if !process.idle_and_alive() {
                self.discard(&mut st, process);
                continue;
            }
            self.notify(&st);
            let early = self.back_to_back(&st, &process);
            drop(st);
            if early {
                self.keep_spare();
            }
            return Some(process);
        }
        None
    }

    /// Whether runs come back to back: this one sooner after the last one's end than twice the
    /// time the last spare took to start. Its successor's spare is then started as it takes its
    /// process, beside it, not once it ends: a spare started at its end would not be ready for
    /// the next run. Runs further apart keep the CPU to themselves, and a process with runs left
    /// after this one serves the next itself.
    fn back_to_back(&self, st: &State<S::Process>, process: &S::Process) -> bool {
        if !self.is_last_run(process) {
            return false;
        }
        match (st.released_at, st.spare_took) {
            (Some(released), Some(took)) => self.clock.now().saturating_duration_since(released) < took * 2,
            _ => false,
        }
    }

    /// Whether `process` is retired after the run it serves now (or is about to).
    pub fn is_last_run(&self, process: &S::Process) -> bool {
        process.runs() + 1 >= self.max_runs
    }

    /// Takes a process back after its run (its result delivered): kept for the next run when it
    /// is healthy (its next isolate is ready) and has runs left, otherwise killed and reaped. The
    /// next spare is forked here, not when the run began, so a run does not share the CPU with
    /// its successor's start; unless runs come back to back (`back_to_back`).
    pub fn release(self: &Arc<Self>, mut process: S::Process, healthy: bool) {
        process.count_run();
        let keep = healthy && process.runs() < self.max_runs;
        let mut st = self.state.locked();
        st.released_at = Some(self.clock.now());
        if keep && !st.closed {
            st.idle.push(process);
        } else {
            drop(st);
            // Killed and reaped before it stops counting: `maxProcesses` bounds live processes.
            drop(process);
            st = self.state.locked();
            st.live -= 1;
        }
        self.notify(&st);
        drop(st);
        self.keep_spare();
    }

    /// Kills and reaps an idle process found dying, off the caller's thread (which may be Node's
    /// main thread); it stops counting once it is gone.
    fn discard(self: &Arc<Self>, st: &mut State<S::Process>, process: S::Process) {
        let pool = self.clone();
        let reaper = std::thread::Builder::new().name("code-runtime-reaper".into()).spawn(move || {
            drop(process);
            pool.release_dead();
        });
        // No thread to spare: the process was reaped as the closure dropped.
        if reaper.is_err() {
            st.live -= 1;
        }
    }

    /// Forgets a process its run killed and reaped.
    pub fn release_dead(self: &Arc<Self>) {
        let mut st = self.state.locked();
        st.live -= 1;
        self.notify(&st);
        drop(st);
        self.keep_spare();
    }

    /// Starts one process in the background when none is idle and there is room.
    fn keep_spare(self: &Arc<Self>) {
        {
            let mut st = self.state.locked();
            if st.closed || !st.idle.is_empty() || st.booting > 0 || st.live >= self.max_processes {
                return;
            }
            st.live += 1;
            st.booting += 1;
        }
        let pool = self.clone();
        let spawned = std::thread::Builder::new().name("code-runtime-spare".into()).spawn(move || {
            let began = pool.clock.now();
            let started = pool.start_process();
            let took = pool.clock.now().saturating_duration_since(began);
            let mut st = pool.state.locked();
            Self::note_layers(&mut st, &started);
            st.booting -= 1;
            if started.is_ok() {
                st.spare_took = Some(took);
            }
            match started {
                Ok(process) if !st.closed => st.idle.push(process),
                other => {
                    drop(st);
                    // Killed and reaped before it stops counting.
                    drop(other);
                    st = pool.state.locked();
                    st.live -= 1;
                }
            }
            pool.notify(&st);
        });
        if spawned.is_err() {
            let mut st = self.state.locked();
            st.live -= 1;
            st.booting -= 1;
        }
    }

    /// A fresh process from the source (none once the pool is closed).
    fn start_process(&self) -> Result<S::Process, String> {
        self.source.start(&|| self.is_closed())
    }

    /// Processes that exist or are being started.
    pub fn live(&self) -> usize {
        self.state.locked().live
    }

    pub fn is_closed(&self) -> bool {
        self.state.locked().closed
    }

    /// Kills every idle process and waits until no process of this pool is left (runs in flight
    /// were ended first by the runtime's dispose; each kills its process once it sees `closed`).
    pub fn close(&self) {
        let idle = {
            let mut st = self.state.locked();
            st.closed = true;
            self.changed.notify_all();
            for waiter in &st.queue {
                waiter.wake.notify_one();
            }
            std::mem::take(&mut st.idle)
        };
        let killed = idle.len();
        self.source.close();
        drop(idle);
        let mut st = self.state.locked();
        st.live -= killed;
        let deadline = self.clock.now() + CLOSE_WAIT;
        while st.live > 0 && self.clock.now() < deadline {
            st = self.changed.wait_for(st, Duration::from_millis(5));
        }
    }
}
