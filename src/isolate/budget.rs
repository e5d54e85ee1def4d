//! Budgets enforced from outside the isolate thread
//! (docs/budgets-and-ledger.md#typescript-budgets): one watchdog thread reads each run's thread CPU
//! clock and wall deadline and terminates runs that exceed them; the heap is capped through V8's
//! near-heap-limit callback and a counting ArrayBuffer allocator.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::first_terminal::{RunClaim, Terminal};
use crate::ledger::text::Text;
use crate::outcome::{self, FailureKind};

pub use crate::os::cpu_clock::{current_thread_clock, thread_cpu_ns, ThreadClock};
use crate::panic::{Lock, Wait};

/// One run under the watchdog. It is registered by the isolate thread itself and unregistered by
/// it before it exits, so its CPU clock is only read while the thread is alive.
pub struct Watched {
    shared: Arc<RunClaim>,
    clock: ThreadClock,
    /// The thread's CPU time when the run began: a sandbox process's isolate thread prepared its
    /// isolate before, and that is not the program's.
    base_ns: u64,
    compute_ns: u64,
    compute_ms: f64,
    wall_deadline: Instant,
    max_wall_ms: f64,
    done: AtomicBool,
}

struct Watchdog {
    runs: Mutex<Patrol>,
    changed: Condvar,
}

/// The runs watched, and whether a thread patrols them.
#[derive(Default)]
struct Patrol {
    runs: Vec<Arc<Watched>>,
    patrolling: bool,
}

impl std::ops::Deref for Patrol {
    type Target = Vec<Arc<Watched>>;
    fn deref(&self) -> &Self::Target {
        &self.runs
    }
}

impl std::ops::DerefMut for Patrol {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.runs
    }
}

fn watchdog() -> &'static Watchdog {
    static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();
    WATCHDOG.get_or_init(|| Watchdog { runs: Mutex::new(Patrol::default()), changed: Condvar::new() })
}

/// Longest sleep between patrols; registrations wake the watchdog early.
const MAX_NAP: Duration = Duration::from_millis(50);
/// How long the watchdog's thread waits for a run once none is left before it exits (the next
/// run starts another): a host whose runtimes are disposed keeps no thread of ours.
const IDLE_EXIT: Duration = Duration::from_secs(1);
/// Shortest sleep, so a run on the edge of its budget does not make the watchdog spin.
const MIN_NAP: Duration = Duration::from_micros(250);

impl Watchdog {
    fn patrol(&self) {
        let mut runs = self.runs.locked();
        let mut idle_since = None;
        loop {
            let now = Instant::now();
            let mut nap = MAX_NAP;
            runs.retain(|run| !run.done.load(Ordering::Acquire));
            if runs.is_empty() {
                let since = *idle_since.get_or_insert(now);
                if now.duration_since(since) >= IDLE_EXIT {
                    runs.patrolling = false;
                    return;
                }
                runs = self.changed.wait_for(runs, IDLE_EXIT);
                continue;
            }
            idle_since = None;
            for run in runs.iter() {
                if now >= run.wall_deadline {
                    run.fire(Terminal::Failed(
                        FailureKind::Timeout,
                        Text::new(&outcome::wall_clock_message(run.max_wall_ms)),
                    ));
                    continue;
                }
                nap = nap.min(run.wall_deadline - now);
                let used =
                    thread_cpu_ns(run.clock).saturating_sub(run.base_ns).saturating_sub(run.shared.excluded_cpu_ns());
                if used >= run.compute_ns {
                    run.fire(Terminal::Failed(
                        FailureKind::Timeout,
                        Text::new(&outcome::compute_message(run.compute_ms)),
                    ));
                    continue;
                }
                // A thread cannot burn CPU faster than wall time passes, so sleeping for the
                // remaining budget never lets it overshoot by more than the wake-up latency.
                nap = nap.min(Duration::from_nanos(run.compute_ns - used));
            }
            let nap = nap.max(MIN_NAP);
            runs = self.changed.wait_for(runs, nap);
        }
    }
}

impl Watched {
    fn fire(&self, terminal: Terminal) {
        self.done.store(true, Ordering::Release);
        self.shared.claim(terminal);
    }
}

/// Registration of the calling (isolate) thread with the watchdog; unregisters on drop, which
/// must happen on that thread before it exits.
pub struct WatchGuard(Arc<Watched>);

pub fn watch(shared: Arc<RunClaim>, compute_ms: f64, max_wall_ms: f64, started: Instant) -> WatchGuard {
    let compute_ns = if compute_ms * 1e6 >= u64::MAX as f64 { u64::MAX } else { (compute_ms * 1e6) as u64 };
    let wall = Duration::from_secs_f64(max_wall_ms / 1000.0);
    let clock = current_thread_clock();
    let base_ns = thread_cpu_ns(clock);
    shared.time_from(clock, base_ns);
    let run = Arc::new(Watched {
        shared,
        clock,
        base_ns,
        compute_ns,
        compute_ms,
        wall_deadline: started + wall,
        max_wall_ms,
        done: AtomicBool::new(false),
    });
    let dog = watchdog();
    let mut runs = dog.runs.locked();
    runs.push(run.clone());
    // A run with nothing to watch it would never be stopped: failing to start the thread fails
    // this run's thread (a panic its guard turns into a failed run).
    patrolling(&mut runs).expect("spawn the watchdog thread");
    drop(runs);
    dog.changed.notify_one();
    WatchGuard(run)
}

/// Starts the watchdog's thread before a run needs it: a sandbox process does so while it waits
/// for its run, which then does not wait for a thread to be made. Without a run it exits after
/// [`IDLE_EXIT`], and the next `watch` starts it again.
pub fn start_watchdog() -> std::io::Result<()> {
    patrolling(&mut watchdog().runs.locked())
}

/// Has the watchdog's thread running.
fn patrolling(runs: &mut Patrol) -> std::io::Result<()> {
    if !runs.patrolling {
        std::thread::Builder::new().name("code-runtime-watchdog".into()).spawn(move || watchdog().patrol())?;
        runs.patrolling = true;
    }
    Ok(())
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        let dog = watchdog();
        // Holding the list lock while marking done guarantees the watchdog is not between reading
        // this thread's clock and using it.
        let mut runs = dog.runs.locked();
        self.0.done.store(true, Ordering::Release);
        runs.retain(|r| !Arc::ptr_eq(r, &self.0));
        drop(runs);
        self.0.shared.stop_timing();
    }
}

/// Near-heap-limit state of one isolate.
pub struct HeapGuard {
    pub shared: Arc<RunClaim>,
    pub limit_mb: f64,
    /// Allocations the ArrayBuffer budget refused (shared with the allocator).
    pub refusals: Arc<AtomicUsize>,
    /// `refusals` as of the previous callback, and how often a refusal was answered with headroom.
    pub seen_refusals: AtomicUsize,
    pub external_grants: AtomicUsize,
    /// The isolate lives in a sandbox process the supervisor can end: its unwinding headroom is
    /// smaller (the process's own cap bounds it anyway).
    pub contained: bool,
    pub unwind_grants: AtomicUsize,
}

/// Headroom granted while a terminated isolate unwinds: more than any single V8 object can be, so
/// the allocation in flight never reaches V8's fatal out-of-memory path.
const UNWIND_HEADROOM: usize = 2 << 30;
/// The one grant of a contained isolate: enough for the allocation in flight and the unwind of
/// an ordinary program; the sandbox process's memory cap bounds it either way.
const CONTAINED_HEADROOM: usize = 64 << 20;
/// Headroom for a GC V8 ran only because the ArrayBuffer budget refused an allocation.
const EXTERNAL_HEADROOM: usize = 1 << 20;
/// Refusals answered with headroom before a program that keeps hitting the buffer cap is treated
/// as exhausting its heap (bounds how far those grants can raise the heap limit).
const MAX_EXTERNAL_GRANTS: usize = 64;

/// Called by V8 on the isolate thread as the heap nears its limit.
///
/// A refused ArrayBuffer allocation makes V8 collect garbage and call this too; that case only
/// needs the allocation to fail as a catchable RangeError, so it gets a little headroom. Otherwise
/// the heap is really exhausted: the run ends as `worker-exit` and V8 gets ample headroom to unwind
/// instead of taking its fatal out-of-memory path, which would abort the whole host process.
pub unsafe extern "C" fn near_heap_limit(data: *mut c_void, current: usize, _initial: usize) -> usize {
    // SAFETY: `data` is the HeapGuard boxed by the run loop; it outlives the isolate.
    let guard = unsafe { &*(data as *const HeapGuard) };
    crate::panic::guard(
        || heap_limit_reached(guard, current),
        |reason| {
            let message = crate::outcome::internal_error_message("the heap limit callback", &reason);
            guard.shared.claim(Terminal::Failed(FailureKind::WorkerExit, Text::new(&message)));
            current.saturating_add(UNWIND_HEADROOM)
        },
    )
}

fn heap_limit_reached(guard: &HeapGuard, current: usize) -> usize {
    let refused = guard.refusals.load(Ordering::Relaxed);
    let new_refusal = guard.seen_refusals.swap(refused, Ordering::Relaxed) != refused;
    if new_refusal && guard.external_grants.fetch_add(1, Ordering::Relaxed) < MAX_EXTERNAL_GRANTS {
        return current.saturating_add(EXTERNAL_HEADROOM);
    }
    guard
        .shared
        .claim_at_heap_limit(Terminal::Failed(FailureKind::WorkerExit, Text::new(&heap_limit_message(guard.limit_mb))));
    // One grant, never repeated: the isolate is terminating and only needs to unwind. A second
    // exhaustion lets V8 take its fatal path, which ends a sandbox process (contained) or, on a
    // host thread, the host: the thread tier cannot contain a program that outgrows the grant.
    if guard.unwind_grants.fetch_add(1, Ordering::Relaxed) > 0 {
        return current;
    }
    let headroom = if guard.contained { CONTAINED_HEADROOM.max(current / 4) } else { UNWIND_HEADROOM };
    current.saturating_add(headroom)
}

/// Called by V8 on the isolate thread after each garbage collection: see [`heap_seen`].
pub unsafe extern "C" fn after_gc(
    mut isolate: v8::UnsafeRawIsolatePtr,
    _type: v8::GCType,
    _flags: v8::GCCallbackFlags,
    data: *mut c_void,
) {
    // SAFETY: `data` is the HeapGuard boxed by the run loop (it outlives the callback's
    // registration), and V8 passes the isolate it collected, on its own thread.
    let (guard, isolate) =
        unsafe { (&*(data as *const HeapGuard), v8::Isolate::ref_from_raw_isolate_ptr_mut(&mut isolate)) };
    crate::panic::guard(|| heap_seen(guard, isolate), |_| false);
}

/// Called by V8 on the isolate thread before each garbage collection: a young large object bigger
/// than the whole cap is claimed here, while it is still counted, whether or not the program still
/// holds it.
///
/// V8 admits the first object of its young large-object space whatever its size (a flattened
/// 2**28-character rope, say), past the old generation's limit, and a collection may then free it
/// unnoticed: the epilogue and the run's last look would see a heap within the cap. Every later
/// young large object must fit the young generation, smaller than the cap, so that space holds
/// more than the cap only through one object that alone was more than the cap when it was made.
pub unsafe extern "C" fn before_gc(
    mut isolate: v8::UnsafeRawIsolatePtr,
    _type: v8::GCType,
    _flags: v8::GCCallbackFlags,
    data: *mut c_void,
) {
    // SAFETY: as in `after_gc`.
    let (guard, isolate) =
        unsafe { (&*(data as *const HeapGuard), v8::Isolate::ref_from_raw_isolate_ptr_mut(&mut isolate)) };
    crate::panic::guard(|| young_large_seen(guard, isolate), |_| ());
}

fn young_large_seen(guard: &HeapGuard, isolate: &mut v8::Isolate) {
    let Some(young_large) = young_large_space(isolate).and_then(|i| isolate.get_heap_space_statistics(i)) else {
        return;
    };
    if over_cap(guard, young_large.space_used_size()) {
        guard.shared.claim(Terminal::Failed(FailureKind::WorkerExit, Text::new(&heap_limit_message(guard.limit_mb))));
    }
}

/// The index of V8's young large-object space among its heap spaces (fixed by the build).
fn young_large_space(isolate: &mut v8::Isolate) -> Option<usize> {
    static INDEX: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *INDEX.get_or_init(|| {
        (0..isolate.number_of_heap_spaces()).find(|&i| {
            isolate.get_heap_space_statistics(i).is_some_and(|s| s.space_name().to_bytes() == b"new_large_object_space")
        })
    })
}

/// Records the heap for the run's usage, and claims the heap limit when more of it is in use than
/// the cap allows: V8 lets one large young object past its old-generation limit (a flattened
/// 2**28-character rope, say), which only the whole heap's size shows. True when over the cap.
pub fn heap_seen(guard: &HeapGuard, isolate: &mut v8::Isolate) -> bool {
    let stats = isolate.get_heap_statistics();
    let used = stats.used_heap_size();
    guard.shared.note_heap(used as u64, stats.total_heap_size() as u64);
    if !over_cap(guard, used) {
        return false;
    }
    guard.shared.claim(Terminal::Failed(FailureKind::WorkerExit, Text::new(&heap_limit_message(guard.limit_mb))));
    true
}

/// Whether `used` bytes of heap are more than the cap allows.
fn over_cap(guard: &HeapGuard, used: usize) -> bool {
    // What the near-heap-limit callback granted ArrayBuffer refusals stays allowed.
    let granted = guard.external_grants.load(Ordering::Relaxed).min(MAX_EXTERNAL_GRANTS) * EXTERNAL_HEADROOM;
    used > (guard.limit_mb * 1024.0 * 1024.0) as usize + granted
}

/// `isolate heap limit reached (<N> MiB)` (docs/budgets-and-ledger.md#heap).
pub fn heap_limit_message(limit_mb: f64) -> String {
    format!("isolate heap limit reached ({} MiB)", crate::ledger::byte_meter::number_to_string(limit_mb))
}

/// ArrayBuffer backing stores counted against the same cap as the heap
/// (docs/budgets-and-ledger.md#heap): an allocation past it fails inside the program as a catchable
/// RangeError.
pub struct BufferBudget {
    used: AtomicUsize,
    cap: usize,
    refusals: Arc<AtomicUsize>,
}

impl BufferBudget {
    fn reserve(&self, len: usize) -> bool {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let Some(next) = used.checked_add(len).filter(|n| *n <= self.cap) else {
                self.refusals.fetch_add(1, Ordering::Relaxed);
                return false;
            };
            match self.used.compare_exchange_weak(used, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => used = now,
            }
        }
    }
}

unsafe extern "C" fn buffer_allocate(budget: &BufferBudget, len: usize) -> *mut c_void {
    crate::panic::guard(|| allocate_zeroed(budget, len), |_| std::ptr::null_mut())
}

fn allocate_zeroed(budget: &BufferBudget, len: usize) -> *mut c_void {
    if !budget.reserve(len) {
        return std::ptr::null_mut();
    }
    // SAFETY: calloc with any size is sound; a null result is reported to V8 as failure.
    let ptr = unsafe { libc::calloc(len.max(1), 1) };
    if ptr.is_null() {
        budget.used.fetch_sub(len, Ordering::Relaxed);
    }
    ptr
}

unsafe extern "C" fn buffer_allocate_uninitialized(budget: &BufferBudget, len: usize) -> *mut c_void {
    crate::panic::guard(|| allocate(budget, len), |_| std::ptr::null_mut())
}

fn allocate(budget: &BufferBudget, len: usize) -> *mut c_void {
    if !budget.reserve(len) {
        return std::ptr::null_mut();
    }
    // SAFETY: as above; V8 initialises the memory itself.
    let ptr = unsafe { libc::malloc(len.max(1)) };
    if ptr.is_null() {
        budget.used.fetch_sub(len, Ordering::Relaxed);
    }
    ptr
}

unsafe extern "C" fn buffer_free(budget: &BufferBudget, data: *mut c_void, len: usize) {
    // SAFETY: `data` came from buffer_allocate*.
    unsafe { libc::free(data) };
    crate::panic::guard(|| budget.used.fetch_sub(len, Ordering::Relaxed), |_| 0);
}

unsafe extern "C" fn buffer_drop(budget: *const BufferBudget) {
    // SAFETY: the pointer was leaked from a Box in `capped_allocator`; V8 drops it once.
    let budget = unsafe { Box::from_raw(budget as *mut BufferBudget) };
    crate::panic::guard(|| drop(budget), |_| ());
}

static BUFFER_VTABLE: v8::RustAllocatorVtable<BufferBudget> = v8::RustAllocatorVtable {
    allocate: buffer_allocate,
    allocate_uninitialized: buffer_allocate_uninitialized,
    free: buffer_free,
    drop: buffer_drop,
};

/// An ArrayBuffer allocator that refuses allocations past `cap` bytes in total.
pub fn capped_allocator(cap: usize, refusals: Arc<AtomicUsize>) -> v8::UniqueRef<v8::Allocator> {
    let budget = Box::into_raw(Box::new(BufferBudget { used: AtomicUsize::new(0), cap, refusals }));
    // SAFETY: the budget lives until V8 calls `buffer_drop`.
    unsafe { v8::new_rust_allocator(budget, &BUFFER_VTABLE) }
}
