//! The pool's admission with a fake source of processes and a fake clock. The pool polls its
//! waiters every few milliseconds of real time (a `Condvar` wait); every deadline here is the fake
//! clock's, and every step waits for an observable state (bounded by `SETTLE`), never for a
//! guessed span of time.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::*;

/// How long a test waits for a state it expects before it fails.
const SETTLE: Duration = Duration::from_secs(5);

/// What the fakes share with the test.
#[derive(Default)]
struct World {
    state: Mutex<WorldState>,
    changed: Condvar,
}

#[derive(Default)]
struct WorldState {
    /// Starts asked for (finished or not).
    starts: u32,
    /// `Some(n)`: only `n` more starts may finish; the rest wait for `allow`.
    permits: Option<u32>,
    /// Reasons the next starts fail with, in order.
    failures: VecDeque<String>,
    /// Processes dropped (killed and reaped), by id.
    reaped: Vec<u32>,
    closed: bool,
    /// Whether the source was asked to start after the pool closed.
    started_closed: bool,
}

impl World {
    fn new() -> Arc<World> {
        Arc::new(World::default())
    }

    fn with<R>(&self, f: impl FnOnce(&mut WorldState) -> R) -> R {
        let r = f(&mut self.state.lock().unwrap());
        self.changed.notify_all();
        r
    }

    /// Lets `n` more held starts finish.
    fn allow(&self, n: u32) {
        self.with(|w| w.permits = w.permits.map(|p| p + n));
    }

    fn starts(&self) -> u32 {
        self.with(|w| w.starts)
    }

    fn reaped(&self) -> Vec<u32> {
        self.with(|w| w.reaped.clone())
    }
}

struct FakeSource(Arc<World>);

struct FakeProcess {
    id: u32,
    runs: u32,
    alive: Arc<AtomicBool>,
    world: Arc<World>,
}

impl Source for FakeSource {
    type Process = FakeProcess;

    fn start(&self, closed: &dyn Fn() -> bool) -> Result<FakeProcess, String> {
        let world = &self.0;
        let mut w = world.state.lock().unwrap();
        let id = w.starts;
        w.starts += 1;
        world.changed.notify_all();
        while w.permits == Some(0) {
            w = world.changed.wait(w).unwrap();
        }
        if let Some(p) = w.permits.as_mut() {
            *p -= 1;
        }
        drop(w);
        // Asked outside the world's lock: the pool's lock is never taken under it.
        let closed = closed();
        let mut w = world.state.lock().unwrap();
        w.started_closed |= closed;
        if let Some(reason) = w.failures.pop_front() {
            return Err(reason);
        }
        Ok(FakeProcess { id, runs: 0, alive: Arc::new(AtomicBool::new(true)), world: world.clone() })
    }

    fn close(&self) {
        self.0.with(|w| w.closed = true);
    }
}

impl Pooled for FakeProcess {
    fn idle_and_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    fn runs(&self) -> u32 {
        self.runs
    }

    fn count_run(&mut self) {
        self.runs += 1;
    }

    /// The first process (id 0) reports an allowlist, later ones a memory cgroup.
    fn reported(&self) -> Reported {
        Reported { helper: None, allowlist: self.id == 0, memory_cgroup: self.id != 0 }
    }
}

impl Drop for FakeProcess {
    fn drop(&mut self) {
        let id = self.id;
        self.world.with(|w| w.reaped.push(id));
    }
}

/// A clock that moves only when the test moves it.
#[derive(Clone)]
struct FakeClock {
    start: Instant,
    elapsed: Arc<Mutex<Duration>>,
    /// Times the clock was read.
    reads: Arc<AtomicUsize>,
}

impl FakeClock {
    fn new() -> FakeClock {
        FakeClock { start: Instant::now(), elapsed: Arc::default(), reads: Arc::default() }
    }

    fn advance(&self, by: Duration) {
        *self.elapsed.lock().unwrap() += by;
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        let now = self.start + *self.elapsed.lock().unwrap();
        self.reads.fetch_add(1, Ordering::SeqCst);
        now
    }
}

type TestPool = Pool<FakeSource, FakeClock>;

fn pool(world: &Arc<World>, clock: &FakeClock, max_processes: usize, max_runs: u32) -> Arc<TestPool> {
    Pool::with_source(FakeSource(world.clone()), clock.clone(), max_processes, max_runs)
}

/// Waits (bounded) until `what` holds.
fn settle(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + SETTLE;
    while !cond() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

impl<S: Source, C: Clock> Pool<S, C> {
    fn waiting(&self) -> usize {
        self.state.locked().queue.len()
    }

    fn idle(&self) -> usize {
        self.state.locked().idle.len()
    }
}

fn never() -> bool {
    false
}

/// A waiter on its own thread, which hands back what `acquire` gave it.
fn waiter(
    pool: &Arc<TestPool>,
    give_up: impl Fn() -> bool + Send + 'static,
) -> mpsc::Receiver<Result<FakeProcess, Denied>> {
    let (tx, rx) = mpsc::channel();
    let pool = pool.clone();
    std::thread::spawn(move || {
        let _ = tx.send(pool.acquire(&give_up));
    });
    rx
}

/// Queues one waiter and waits until it is in the queue (behind `ahead` others).
fn queued(
    pool: &Arc<TestPool>,
    ahead: usize,
    give_up: impl Fn() -> bool + Send + 'static,
) -> mpsc::Receiver<Result<FakeProcess, Denied>> {
    let rx = waiter(pool, give_up);
    settle("the waiter queued", || pool.waiting() == ahead + 1);
    rx
}

fn got(rx: &mpsc::Receiver<Result<FakeProcess, Denied>>) -> Result<FakeProcess, Denied> {
    rx.recv_timeout(SETTLE).expect("the waiter was answered")
}

/// The id of the process a run got (dropped here: killed and reaped, still counted as live).
fn id(outcome: Result<FakeProcess, Denied>) -> u32 {
    outcome.map(|p| p.id).unwrap_or_else(|denied| panic!("denied: {denied:?}"))
}

#[test]
fn the_spare_is_ready_and_a_run_takes_it_without_a_fork() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 2, 1);
    settle("the spare is idle", || pool.idle() == 1);
    let process = pool.take_idle().expect("the spare");
    assert_eq!((process.id, world.starts()), (0, 1), "the run started no process of its own");
    // Its successor is started once it is given back, not while it runs.
    assert_eq!(pool.live(), 1);
    pool.release(process, true);
    settle("the next spare is idle", || pool.idle() == 1);
    assert_eq!(world.reaped(), vec![0], "retired after max_runs = 1");
    assert_eq!(world.starts(), 2);
}

#[test]
fn a_run_waits_for_the_spare_on_its_way_rather_than_forking_another() {
    let (world, clock) = (World::new(), FakeClock::new());
    world.with(|w| w.permits = Some(0));
    let pool = pool(&world, &clock, 2, 1);
    settle("the spare is starting", || world.starts() == 1);
    let rx = queued(&pool, 0, never);
    // Room for a second process, but the spare on its way is this run's.
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(world.starts(), 1);
    world.allow(1);
    assert_eq!(id(got(&rx)), 0);
    assert_eq!(world.starts(), 1);
}

/// A run on the spare (which took `spare` of the fake clock to start) given back, then the next
/// run `after` its end taking the spare started then (as long to start). The pool then started
/// two processes, and maybe a third.
fn the_next_run(spare: Duration, after: Duration) -> (Arc<TestPool>, Arc<World>) {
    let (world, clock) = (World::new(), FakeClock::new());
    world.with(|w| w.permits = Some(0));
    let pool = pool(&world, &clock, 3, 1);
    let started = |n| {
        settle("a spare is starting", || world.starts() == n);
        clock.advance(spare);
        world.allow(1);
        settle("the spare is idle", || pool.idle() == 1);
    };
    started(1);
    let first = pool.take_idle().expect("the spare");
    assert_eq!(world.starts(), 1, "the first run has no run before it");
    pool.release(first, true);
    started(2);
    clock.advance(after);
    // Dropped at once: killed and reaped, still counted as live (its run has not given it back).
    assert_eq!(pool.take_idle().map(|p| p.id), Some(1));
    (pool, world)
}

#[test]
fn runs_back_to_back_have_their_successors_spare_started_as_they_take_theirs() {
    // 1 ms after the last run's end, with spares taking 2 ms: 2 + 1 < 2 × 2.
    let (pool, world) = the_next_run(Duration::from_millis(2), Duration::from_millis(1));
    settle("the successor's spare is starting", || world.starts() == 3);
    world.allow(1);
    settle("the early spare is idle", || pool.idle() == 1);
    assert_eq!(pool.live(), 2, "the run's process and its successor's spare");
}

#[test]
fn runs_back_to_back_on_processes_with_runs_left_start_no_spare_early() {
    // `maxRunsPerProcess` 100: the process taken serves the next run itself.
    let (world, clock) = (World::new(), FakeClock::new());
    world.with(|w| w.permits = Some(0));
    let pool = pool(&world, &clock, 3, 100);
    settle("a spare is starting", || world.starts() == 1);
    clock.advance(Duration::from_millis(2));
    world.allow(1);
    settle("the spare is idle", || pool.idle() == 1);
    for _ in 0..3 {
        let process = pool.take_idle().expect("the process");
        clock.advance(Duration::from_millis(1));
        pool.release(process, true);
        clock.advance(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!((world.starts(), pool.live(), pool.idle()), (1, 1, 1));
}

#[test]
fn runs_further_apart_start_their_successors_spare_only_when_they_end() {
    // 10 ms after: the spare started at the last run's end was ready long before.
    let (pool, world) = the_next_run(Duration::from_millis(2), Duration::from_millis(10));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!((world.starts(), pool.live()), (2, 1));
}

#[test]
fn runs_beyond_max_processes_are_admitted_in_fifo_order() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    let first = pool.acquire(&never).expect("the spare");
    let waiters: Vec<_> = (0..4).map(|ahead| queued(&pool, ahead, never)).collect();
    // No process beyond the maximum was started for them.
    assert_eq!((pool.live(), world.starts()), (1, 1));
    pool.release(first, true);
    for (n, rx) in waiters.iter().enumerate() {
        let process = got(rx).expect("admitted");
        assert_eq!(pool.waiting(), waiters.len() - n - 1, "waiter {n} was first in line");
        pool.release(process, true);
    }
    assert_eq!((world.starts(), pool.live()), (1, 1));
}

#[test]
fn a_process_is_replaced_after_max_runs() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 2);
    let process = pool.acquire(&never).expect("the spare");
    assert!(!pool.is_last_run(&process));
    pool.release(process, true);
    let process = pool.acquire(&never).expect("kept");
    assert_eq!(process.id, 0);
    assert!(pool.is_last_run(&process));
    pool.release(process, true);
    assert_eq!(world.reaped(), vec![0]);
    assert_eq!(id(pool.acquire(&never)), 1);
    assert_eq!(pool.live(), 1);
}

#[test]
fn a_process_is_replaced_after_an_abnormal_end() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    // Ended unhealthy (its next isolate never got ready).
    let process = pool.acquire(&never).expect("the spare");
    pool.release(process, false);
    assert_eq!(world.reaped(), vec![0]);
    // Killed by its run (a budget, a crash): the run reaps it and the pool forgets it.
    let process = pool.acquire(&never).expect("a fresh one");
    assert_eq!(process.id, 1);
    drop(process);
    pool.release_dead();
    assert_eq!(id(pool.acquire(&never)), 2);
    assert_eq!(pool.live(), 1);
}

#[test]
fn an_idle_process_that_vanished_is_replaced() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    settle("the spare is idle", || pool.idle() == 1);
    let alive = pool.state.locked().idle[0].alive.clone();
    alive.store(false, Ordering::SeqCst);
    // A run that need not queue does not wait for its replacement.
    assert!(pool.take_idle().is_none());
    settle("reaped off the caller's thread", || world.reaped() == vec![0]);
    let process = pool.acquire(&never).expect("the replacement");
    assert_eq!(process.id, 1);
    // Found dead by a waiting run: reaped, and the run served by its replacement.
    let alive = process.alive.clone();
    pool.release(process, true);
    alive.store(false, Ordering::SeqCst);
    let replacement = pool.acquire(&never).expect("the replacement");
    assert_eq!(replacement.id, 2);
    settle("reaped", || world.reaped() == vec![0, 1]);
    assert_eq!(pool.live(), 1);
}

#[test]
fn a_run_whose_process_vanished_runs_again_on_another() {
    // The supervisor's retry: the process died before it said anything of the run; it is reaped,
    // forgotten, and the run acquires again.
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 1);
    let process = pool.acquire(&never).expect("the spare");
    drop(process);
    pool.release_dead();
    let again = pool.acquire(&never).expect("another");
    assert_eq!((again.id, world.reaped()), (1, vec![0]));
}

#[test]
fn a_fork_that_fails_denies_the_run_with_its_reason() {
    let (world, clock) = (World::new(), FakeClock::new());
    world.with(|w| w.failures.extend(["no template".to_string(), "no fork".to_string()]));
    let pool = pool(&world, &clock, 1, 1);
    assert_eq!(pool.layers(), Err("no template".to_string()), "the first start's failure is reported");
    settle("the spare's place is freed", || pool.live() == 0);
    assert_eq!(pool.acquire(&never).err(), Some(Denied::Failed("no fork".into())));
    assert_eq!(pool.live(), 0);
    // The next run starts a process again.
    assert_eq!(id(pool.acquire(&never)), 2);
}

#[test]
fn the_layers_of_the_first_process_are_reported() {
    let (world, clock) = (World::new(), FakeClock::new());
    world.with(|w| w.permits = Some(0));
    let pool = pool(&world, &clock, 2, 1);
    let layers = {
        let pool = pool.clone();
        std::thread::spawn(move || pool.layers())
    };
    settle("the spare is starting", || world.starts() == 1);
    assert!(!layers.is_finished(), "waits for the first process");
    world.allow(10);
    let first = Reported { helper: None, allowlist: true, memory_cgroup: false };
    assert_eq!(layers.join().unwrap(), Ok(first));
    let process = pool.take_idle().expect("the spare");
    pool.release(process, false);
    settle("a second process", || world.starts() == 2);
    assert_eq!(pool.layers(), Ok(first));
}

#[test]
fn a_waiter_whose_deadline_passes_leaves_the_queue_and_the_next_is_served() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    let process = pool.acquire(&never).expect("the spare");
    let deadline = clock.now() + Duration::from_secs(30);
    let timed = {
        let clock = clock.clone();
        queued(&pool, 0, move || clock.now() >= deadline)
    };
    let next = queued(&pool, 1, never);
    clock.advance(Duration::from_secs(29));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(pool.waiting(), 2, "not yet");
    clock.advance(Duration::from_secs(1));
    assert_eq!(got(&timed).err(), Some(Denied::GaveUp));
    assert_eq!(pool.waiting(), 1);
    pool.release(process, true);
    assert_eq!(id(got(&next)), 0);
}

#[test]
fn an_aborted_waiter_leaves_the_queue_and_the_next_is_served() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    let process = pool.acquire(&never).expect("the spare");
    let next = queued(&pool, 0, never);
    let abort = Arc::new(AtomicBool::new(false));
    let aborted = {
        let abort = abort.clone();
        queued(&pool, 1, move || abort.load(Ordering::SeqCst))
    };
    abort.store(true, Ordering::SeqCst);
    assert_eq!(got(&aborted).err(), Some(Denied::GaveUp));
    pool.release(process, true);
    assert_eq!(id(got(&next)), 0);
    assert_eq!(pool.waiting(), 0);
}

#[test]
fn close_denies_every_waiter_and_waits_for_the_runs_in_flight() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    let process = pool.acquire(&never).expect("the spare");
    let waiters: Vec<_> = (0..3).map(|ahead| queued(&pool, ahead, never)).collect();
    let closing = {
        let pool = pool.clone();
        std::thread::spawn(move || pool.close())
    };
    for rx in &waiters {
        assert_eq!(got(rx).err(), Some(Denied::Closed));
    }
    settle("the source was closed", || world.with(|w| w.closed));
    std::thread::sleep(Duration::from_millis(20));
    assert!(!closing.is_finished(), "the run in flight still holds its process");
    // The run sees `closed` and gives its process back: killed, not kept.
    pool.release(process, true);
    closing.join().unwrap();
    assert_eq!((pool.live(), world.reaped()), (0, vec![0]));
    assert_eq!(pool.acquire(&never).err(), Some(Denied::Closed));
    assert!(pool.take_idle().is_none());
    assert_eq!(world.starts(), 1, "no spare after close");
}

#[test]
fn close_kills_the_idle_processes() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    settle("the spare is idle", || pool.idle() == 1);
    pool.close();
    assert_eq!((pool.live(), world.reaped()), (0, vec![0]));
}

#[test]
fn close_stops_waiting_for_a_run_in_flight_at_its_deadline() {
    let (world, clock) = (World::new(), FakeClock::new());
    let pool = pool(&world, &clock, 1, 100);
    let _held = pool.acquire(&never).expect("the spare");
    let read = clock.reads.load(Ordering::SeqCst);
    let closing = {
        let pool = pool.clone();
        std::thread::spawn(move || pool.close())
    };
    // Its deadline is read from the clock before the clock moves.
    settle("close set its deadline", || clock.reads.load(Ordering::SeqCst) > read);
    clock.advance(CLOSE_WAIT - Duration::from_millis(1));
    std::thread::sleep(Duration::from_millis(20));
    assert!(!closing.is_finished(), "still within its deadline");
    clock.advance(Duration::from_millis(1));
    closing.join().unwrap();
    assert_eq!(pool.live(), 1);
}

#[test]
fn a_spare_started_as_the_pool_closes_is_killed_and_no_new_one_is_started() {
    let (world, clock) = (World::new(), FakeClock::new());
    world.with(|w| w.permits = Some(0));
    let pool = pool(&world, &clock, 1, 100);
    settle("the spare is starting", || world.starts() == 1);
    let closing = {
        let pool = pool.clone();
        std::thread::spawn(move || pool.close())
    };
    settle("closed", || pool.is_closed());
    world.allow(1);
    closing.join().unwrap();
    assert_eq!((pool.live(), world.reaped()), (0, vec![0]));
    assert!(world.with(|w| w.started_closed), "the source was told the pool closed");
    assert_eq!(world.starts(), 1);
}
