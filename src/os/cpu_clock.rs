//! A thread's CPU time, readable from another thread: the compute budget's clock
//! (docs/budgets-and-ledger.md#compute-budget). The isolate thread takes its own clock; the
//! watchdog reads it while the thread is alive (see `budget::Watched`).
//!
//! - Linux and other POSIX systems: the thread's POSIX CPU clock (`pthread_getcpuclockid`),
//!   nanosecond resolution.
//! - macOS, which lacks `pthread_getcpuclockid`: the thread's Mach port and `thread_info`
//!   (`THREAD_BASIC_INFO`, user + system time), microsecond resolution.
//! - Windows: the thread id and `GetThreadTimes` (kernel + user time). Windows charges CPU time
//!   per scheduler tick, so the clock advances in steps of about 15.6 ms.

/// A handle on one thread's CPU clock. Plain data: valid only while that thread is alive.
#[cfg(not(any(target_vendor = "apple", windows)))]
pub type ThreadClock = libc::clockid_t;
#[cfg(target_vendor = "apple")]
pub type ThreadClock = libc::mach_port_t;
#[cfg(windows)]
pub type ThreadClock = u32;

/// The calling thread's CPU clock.
#[cfg(not(any(target_vendor = "apple", windows)))]
pub fn current_thread_clock() -> ThreadClock {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self is always a valid thread handle for the caller.
    unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
    clock
}

/// CPU time of the thread `clock` belongs to, in nanoseconds.
#[cfg(not(any(target_vendor = "apple", windows)))]
pub fn thread_cpu_ns(clock: ThreadClock) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock` comes from pthread_getcpuclockid of a live thread.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread's CPU clock.
#[cfg(target_vendor = "apple")]
pub fn current_thread_clock() -> ThreadClock {
    // SAFETY: pthread_self is always a valid thread handle for the caller; the port it maps to
    // lives as long as the thread.
    unsafe { libc::pthread_mach_thread_np(libc::pthread_self()) }
}

/// CPU time of the thread `clock` belongs to, in nanoseconds (0 if the kernel refuses).
#[cfg(target_vendor = "apple")]
#[allow(deprecated)] // libc points Mach users at the mach2 crate; these items are still exact.
pub fn thread_cpu_ns(clock: ThreadClock) -> u64 {
    // SAFETY: all-zero is a valid thread_basic_info (plain integers).
    let mut info: libc::thread_basic_info = unsafe { std::mem::zeroed() };
    let mut count = libc::THREAD_BASIC_INFO_COUNT;
    // SAFETY: `info` has room for THREAD_BASIC_INFO_COUNT integers; `clock` is a live thread's port.
    let status = unsafe {
        libc::thread_info(
            clock,
            libc::THREAD_BASIC_INFO as libc::thread_flavor_t,
            (&mut info as *mut libc::thread_basic_info).cast(),
            &mut count,
        )
    };
    if status != libc::KERN_SUCCESS {
        return 0;
    }
    let us = |t: libc::time_value_t| t.seconds as u64 * 1_000_000 + t.microseconds as u64;
    (us(info.user_time) + us(info.system_time)) * 1000
}

/// The calling thread's CPU clock.
#[cfg(windows)]
pub fn current_thread_clock() -> ThreadClock {
    // SAFETY: no preconditions.
    unsafe { windows_sys::Win32::System::Threading::GetCurrentThreadId() }
}

/// CPU time of the thread `clock` belongs to, in nanoseconds (0 if the thread cannot be opened).
#[cfg(windows)]
pub fn thread_cpu_ns(clock: ThreadClock) -> u64 {
    use windows_sys::Win32::Foundation::{CloseHandle, FILETIME};
    use windows_sys::Win32::System::Threading::{GetThreadTimes, OpenThread, THREAD_QUERY_LIMITED_INFORMATION};
    // SAFETY: OpenThread takes plain values; a null handle is checked before use.
    let handle = unsafe { OpenThread(THREAD_QUERY_LIMITED_INFORMATION, 0, clock) };
    if handle.is_null() {
        return 0;
    }
    let zero = FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: `handle` is open with query rights; the four out-pointers are valid FILETIMEs.
    let ok = unsafe { GetThreadTimes(handle, &mut created, &mut exited, &mut kernel, &mut user) };
    // SAFETY: `handle` was opened above and is closed once.
    unsafe { CloseHandle(handle) };
    if ok == 0 {
        return 0;
    }
    // FILETIME durations count 100 ns units.
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    (ticks(kernel) + ticks(user)) * 100
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_counts_this_threads_work_and_not_its_sleep() {
        let clock = current_thread_clock();
        let before = thread_cpu_ns(clock);
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < std::time::Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let busy = thread_cpu_ns(clock) - before;
        assert!(busy >= 20_000_000, "60 ms of spinning counted only {busy} ns");
        std::thread::sleep(std::time::Duration::from_millis(60));
        let slept = thread_cpu_ns(clock) - before - busy;
        assert!(slept < 20_000_000, "60 ms of sleep counted {slept} ns");
    }

    #[test]
    fn another_thread_reads_the_clock() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            let clock = current_thread_clock();
            let started = std::time::Instant::now();
            let mut x = 0u64;
            while started.elapsed() < std::time::Duration::from_millis(60) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            tx.send(clock).unwrap();
            done_rx.recv().unwrap();
        });
        let clock = rx.recv().unwrap();
        let read = thread_cpu_ns(clock);
        done_tx.send(()).unwrap();
        worker.join().unwrap();
        assert!(read >= 20_000_000, "the worker's 60 ms of spinning read as {read} ns from outside");
    }
}
