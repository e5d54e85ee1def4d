//! The seccomp allowlist of a process that runs V8 isolates and nothing else, applied to every
//! thread once start-up is over (V8's platform initialised and its worker threads running, the
//! first isolate created, the channel to the host already open on fd 3).
//!
//! Only the system calls such a process was measured to make after start-up are allowed (see
//! `ALLOWED` for the list and how it was measured); anything else fails with EPERM rather than
//! killing the process, since V8 and the C library probe a few things and cope with a refusal.
//! A few calls are allowed only with some arguments:
//!
//! - `clone` only creates threads: the flags must hold CLONE_THREAD (which the kernel accepts only
//!   with CLONE_SIGHAND and CLONE_VM) and no namespace flag, so never a new process;
//! - `clone3` fails with ENOSYS (its flags are in memory the filter cannot read): the C library
//!   then falls back to `clone`;
//! - `tgkill` only to a thread of this process (`abort()` raises SIGABRT with it); `kill` and
//!   `tkill` are not allowed at all (nothing uses them here, and `kill(0, …)` would reach the
//!   whole process group);
//! - `prctl` only for PR_SET_NAME (threads naming themselves) and PR_SET_VMA_ANON_NAME (V8
//!   naming its memory regions).
//!
//! The process must give V8 an entropy source (`v8::V8::set_entropy_source`) before initialising
//! it: otherwise each isolate seeds its random number generators from /dev/urandom, which the
//! filter refuses, and falls back to the clock (see `ALLOWED`).
//!
//! Not allowed, among others: opening files (`open`/`openat`/`stat`…), `socket`, `connect`,
//! `execve`, `ptrace`, `ioctl`, signals to other processes, `fork` (a `clone` without
//! CLONE_THREAD), new namespaces, further seccomp filters.

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use std::collections::BTreeMap;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// Allowed with any arguments: the system calls measured on x86_64 (glibc 2.36, Linux 6.18,
/// v8 152.2.0), plus `brk` (not seen, see below); `rt_sigaction`, `rt_sigreturn` and `tgkill`
/// were measured on the crash paths (the tests' `abort` and `segv` children).
///
/// By name (`libc::SYS_*`, which resolve per target when it is compiled), so the same list is
/// aarch64's: a name that architecture lacks fails its build. The one x86_64 call aarch64 has no
/// number for, `poll`, is `ppoll` there (`POLL`); the others x86_64 programs make and aarch64
/// lacks (`open`, `stat`, …) are refused anyway, and their aarch64 forms (`openat`, `newfstatat`)
/// are not on the list either. aarch64 was not measured with strace: the release workflow runs
/// the suites (this module's tests' calls, every contained run) on its arm64 runners.
///
/// Measured with `strace -f` on this file's test child with the filter left out
/// (`ALLOWLIST_CHILD=unfiltered`, see the tests): every call any thread made after the point
/// where the filter would be applied, while a fresh isolate on a new thread ran hot loops (all JIT
/// tiers), tens of MiB of arrays, strings and ArrayBuffers (GC; concurrent marking and sweeping on
/// the platform's workers), Intl, Date, Math.random, RegExp, WebAssembly (sync and async compile,
/// a hot wasm call, memory growth), a caught stack overflow, a termination from a watchdog thread
/// reading the isolate thread's CPU clock, then the isolate's disposal, a thread that panics, the
/// channel's calls on a socketpair, and the exit. The post-filter set (calls per run, roughly):
/// mprotect 4500, futex 1900, madvise 700, munmap 430, mmap 380, gettid 32, rt_sigprocmask 21,
/// clock_nanosleep 21, clock_gettime 21, getpid 20, read 14, sigaltstack 10, write 7,
/// set_robust_list 6, rseq 6, mremap 6, clone3 5 (→ clone under the filter), sched_getaffinity 5,
/// prctl 4, getrandom 4, sched_getparam 3, exit 3, sched_getscheduler 2, exit_group, sendmsg,
/// recvmsg, poll; and, refused by the filter (EPERM), all of which V8, ICU and glibc cope with:
///
/// - `openat("/dev/urandom")` (+ `newfstatat`, `ioctl(TCGETS)`, `read`, `close`) by each new
///   isolate's random number generators, *unless the embedder sets an entropy source*
///   (`v8::V8::set_entropy_source`, before V8 is initialised; the test does). Without one they
///   fall back to seeding from the clock: Math.random, hash seeds and heap placement would be
///   predictable. The process this filter is for must set one.
/// - `openat("/etc/localtime")`, `readlink` of its path (+ `newfstatat`, `lseek`): glibc's and
///   ICU's detection of the host time zone on the first Date/Intl use. Refused, the default time
///   zone is UTC (explicit `timeZone` options still work: the zone data is in ICU's data).
/// - `openat("/proc/sys/vm/overcommit_memory")`: glibc malloc creating an arena for a new thread.
/// - `openat("/sys/devices/system/cpu/cpu0/tsc_freq_khz")`: V8 calibrating its clock.
/// - `openat("/proc/self/maps")`, `openat`/`statx` of the binaries, `getcwd`: a panic's
///   backtrace symbolication (RUST_BACKTRACE); the backtrace is printed without symbols.
/// - `prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME)` is allowed (V8 naming its regions; EINVAL on a
///   kernel without CONFIG_ANON_VMA_NAME), see `rules`.
///
/// Not seen and so not allowed, though one might expect them: `membarrier`, `futex_waitv`,
/// `sched_yield`, `nanosleep`, `readv`/`writev`, `ppoll`, `epoll_*`, `getrusage`, `clock_getres`,
/// `sysinfo`, `getppid`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const ALLOWED: &[libc::c_long] = &[
    // Memory: V8's heap and code space (PROT_EXEC: the JIT), ArrayBuffers, WebAssembly memories
    // and their guard regions, malloc's arenas and realloc (mremap), thread stacks. `brk` was not
    // seen but must stay: glibc's brk() takes any error the filter returns for the new break
    // (a huge address) and reports success, so malloc on the main thread would use memory that
    // is not there (checked: sbrk(1 MiB) under an EPERM filter "succeeds", then the write faults).
    libc::SYS_mmap,
    libc::SYS_munmap,
    libc::SYS_mprotect,
    libc::SYS_madvise,
    libc::SYS_mremap,
    libc::SYS_brk,
    // Mutexes and condition variables: the platform's task queues, the isolate's locks.
    libc::SYS_futex,
    // Threads (`clone` itself is in `rules`): a new thread's start-up (robust futex list,
    // restartable sequences, Rust's alternate signal stack; glibc's pthread_getattr_np, which
    // Rust and V8 use to find the stack, reads the affinity; V8's workers read their scheduling
    // policy), ids, and the thread's or the process's exit.
    libc::SYS_set_robust_list,
    libc::SYS_rseq,
    libc::SYS_sigaltstack,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_getparam,
    libc::SYS_sched_getscheduler,
    libc::SYS_gettid,
    libc::SYS_getpid,
    libc::SYS_exit,
    libc::SYS_exit_group,
    // Signals: masks around thread creation and abort(); and, for a crash to end as the signal
    // it is (SIGSEGV, SIGABRT) rather than as a fault in the signal return path, Rust's SIGSEGV
    // handler resetting itself (rt_sigaction) and returning (rt_sigreturn), checked by the
    // tests. `tgkill` is in `rules`.
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigreturn,
    // Time: CPU-time clocks (the compute budget; CLOCK_MONOTONIC and CLOCK_REALTIME go through
    // the vDSO, no system call) and timed waits (std::thread::sleep).
    libc::SYS_clock_gettime,
    libc::SYS_clock_nanosleep,
    // Randomness: V8's entropy source, Rust's hash seeds, ICU.
    libc::SYS_getrandom,
    // The descriptors already open: the channel to the host (fd 3) and stderr. Nothing on this
    // list creates a descriptor, so `close` can only end one of those.
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_recvmsg,
    libc::SYS_sendmsg,
    // Rust's `UnixStream` reads with `recv` and writes with `send(MSG_NOSIGNAL)`, which glibc
    // makes `recvfrom` and `sendto` (the serve loop's channel; no address: it is connected).
    libc::SYS_recvfrom,
    libc::SYS_sendto,
    POLL,
    libc::SYS_close,
];

/// Rust's and the channel's `poll(2)`: its own system call on x86_64; aarch64 has none, and the
/// C library's `poll()` makes `ppoll` there (with a null signal mask, so the same wait).
#[cfg(target_arch = "x86_64")]
const POLL: libc::c_long = libc::SYS_poll;
#[cfg(target_arch = "aarch64")]
const POLL: libc::c_long = libc::SYS_ppoll;

/// This target's audit architecture (`EM_X86_64` or `EM_AARCH64`, `| __AUDIT_ARCH_64BIT |
/// __AUDIT_ARCH_LE`), and seccompiler's name for it.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "x86_64")]
const TARGET_ARCH: seccompiler::TargetArch = seccompiler::TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "aarch64")]
const TARGET_ARCH: seccompiler::TargetArch = seccompiler::TargetArch::aarch64;

/// The clone() flags the filter looks at, and the value they must have: a thread (CLONE_THREAD,
/// which the kernel accepts only with CLONE_SIGHAND and CLONE_VM) and no new namespace.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const CLONE_MASK: libc::c_int = libc::CLONE_THREAD
    | libc::CLONE_SIGHAND
    | libc::CLONE_VM
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const CLONE_THREAD_FLAGS: libc::c_int = libc::CLONE_THREAD | libc::CLONE_SIGHAND | libc::CLONE_VM;

/// A rule comparing one argument.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn rule(arg: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> Result<SeccompRule, String> {
    SeccompCondition::new(arg, len, op, value)
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(|e| format!("seccomp rule: {e}"))
}

/// The allowlist, as seccompiler rules: `ALLOWED` unconditionally, and the calls allowed only with
/// some arguments. `pid` is this process's (thread group's) id.
// Syscall numbers are `c_long`, which is `i64` only on 64-bit targets.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[allow(clippy::unnecessary_cast)]
fn rules(pid: libc::pid_t) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    use SeccompCmpArgLen::{Dword, Qword};
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = ALLOWED.iter().map(|n| (*n as i64, Vec::new())).collect();
    // New threads only (clone's first argument is the flags).
    let clone = rule(0, Qword, SeccompCmpOp::MaskedEq(CLONE_MASK as u64), CLONE_THREAD_FLAGS as u64)?;
    rules.insert(libc::SYS_clone as i64, vec![clone]);
    // Signals to this process's own threads only: tgkill(tgid, tid, sig) with tgid == pid.
    let tgkill = rule(0, Dword, SeccompCmpOp::Eq, pid as u32 as u64)?;
    rules.insert(libc::SYS_tgkill as i64, vec![tgkill]);
    // A thread naming itself (Rust's and V8's threads), V8 naming its memory regions.
    let set_name = rule(0, Dword, SeccompCmpOp::Eq, libc::PR_SET_NAME as u64)?;
    let set_vma_name = SeccompRule::new(
        vec![
            SeccompCondition::new(0, Dword, SeccompCmpOp::Eq, libc::PR_SET_VMA as u64),
            SeccompCondition::new(1, Qword, SeccompCmpOp::Eq, libc::PR_SET_VMA_ANON_NAME as u64),
        ]
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("seccomp rule: {e}"))?,
    )
    .map_err(|e| format!("seccomp rule: {e}"))?;
    rules.insert(libc::SYS_prctl as i64, vec![set_name, set_vma_name]);
    Ok(rules)
}

/// One BPF program: clone3 → ENOSYS, then the allowlist (anything else → EPERM).
///
/// Two filters could not do it: the kernel runs every installed filter and, between two ERRNO
/// answers, the newest filter's wins, so the ENOSYS filter would have to be installed after the
/// allowlist, which would then have to allow `seccomp` itself. Instead a short prefix answers
/// clone3 and falls through to seccompiler's program, whose jumps are all relative and so are
/// unaffected by the instructions in front of them. A foreign architecture (or the x32 ABI's
/// numbers, which are not on the list) reaches seccompiler's program unchanged, which kills the
/// process or answers EPERM.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn program() -> Result<BpfProgram, String> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let allowlist =
        SeccompFilter::new(rules(pid)?, SeccompAction::Errno(libc::EPERM as u32), SeccompAction::Allow, TARGET_ARCH)
            .map_err(|e| format!("seccomp filter: {e}"))?;
    let allowlist: BpfProgram = allowlist.try_into().map_err(|e| format!("seccomp program: {e}"))?;
    let (ld, jeq, ret) = (
        (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        (libc::BPF_RET | libc::BPF_K) as u16,
    );
    let insn = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    // struct seccomp_data: `nr` at offset 0, `arch` at offset 4.
    let mut program = vec![
        insn(ld, 0, 0, 4),
        // Another architecture: straight to seccompiler's program (instruction 5).
        insn(jeq, 0, 3, AUDIT_ARCH),
        insn(ld, 0, 0, 0),
        insn(jeq, 0, 1, libc::SYS_clone3 as u32),
        insn(ret, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
    ];
    program.extend(allowlist);
    Ok(program)
}

/// Builds the allowlist and applies it to every thread of the process (seccomp's TSYNC).
///
/// The kernel accepts a filter only from a thread with no_new_privs (or CAP_SYS_ADMIN): if the
/// calling thread does not have it yet, it is set here (`prctl(PR_SET_NO_NEW_PRIVS)`), and TSYNC
/// then sets it on every other thread as it installs the filter there. Fails if a thread cannot
/// be synchronised (one with a different filter of its own) or on an architecture the list is
/// not built for (anything but x86_64 and aarch64).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn apply_all_threads() -> Result<(), String> {
    let program = program()?;
    // SAFETY: prctl with these options reads and sets a flag of the calling thread.
    unsafe {
        if libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1
            && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        {
            return Err(format!("no_new_privs: {}", std::io::Error::last_os_error()));
        }
    }
    seccompiler::apply_filter_all_threads(&program).map_err(|e| format!("seccomp: {e}"))
}

/// The list is built for x86_64 and aarch64 only.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn apply_all_threads() -> Result<(), String> {
    Err(format!("the V8 seccomp allowlist is not built for {}", std::env::consts::ARCH))
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    //! The filter is applied in a child process: the test binary itself, re-run with
    //! `ALLOWLIST_CHILD` set, on its `child` test only (that test does nothing otherwise).
    //! `ALLOWLIST_CHILD=filtered` applies the filter and then also checks what it refuses;
    //! `ALLOWLIST_CHILD=unfiltered` skips both and writes `ALLOWLIST-MARK` to stderr where the
    //! filter would go, for measuring with strace:
    //!
    //! ```text
    //! ALLOWLIST_CHILD=unfiltered strace -f -o trace.txt <the lib's test binary> --exact \
    //!     sandbox::harden::allowlist::tests::child --nocapture --test-threads=1
    //! ```

    use std::process::Command;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    const CHILD: &str = "ALLOWLIST_CHILD";

    /// This module's `child` test as the harness names it (the module is compiled in the library
    /// and in the sandbox binary, at different paths).
    fn child_test() -> String {
        let path = module_path!();
        format!("{}::child", path.split_once("::").map_or(path, |(_, rest)| rest))
    }

    /// The calling thread's CPU clock, and a clock's time in nanoseconds.
    fn thread_clock() -> libc::clockid_t {
        let mut clock = 0;
        // SAFETY: pthread_self is a valid thread handle for the caller.
        unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
        clock
    }
    fn cpu_ns(clock: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `clock` belongs to a live thread; `ts` is writable.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// Runs `source` as a script; its result as a string, or the exception's text.
    fn run(scope: &mut v8::PinScope, source: &str) -> Result<String, String> {
        v8::tc_scope!(let tc, scope);
        let code = v8::String::new(tc, source).ok_or("source string")?;
        let value = v8::Script::compile(tc, code, None).and_then(|script| script.run(tc));
        match value {
            Some(value) => Ok(value.to_rust_string_lossy(tc)),
            None if tc.has_terminated() => Err("terminated".into()),
            None => Err(tc.exception().map(|e| e.to_rust_string_lossy(tc)).unwrap_or_else(|| "no exception".into())),
        }
    }

    const WORKLOAD: &str = r#"(() => {
      const out = [];
      // JIT: a hot function reaches Sparkplug, Maglev and TurboFan.
      function hot(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * i) % 1000003; return s; }
      let h = 0;
      for (let k = 0; k < 300; k++) h = hot(100000 + k);
      out.push(h);
      // GC: short-lived objects, long strings, ArrayBuffers of tens of MiB.
      const keep = [];
      for (let r = 0; r < 12; r++) {
        const objects = new Array(200000).fill(0).map((_, i) => ({ i, s: 'x' + i }));
        keep.push(objects[r].s);
        const buffer = new ArrayBuffer((16 + 2 * r) * 1024 * 1024);
        new Uint8Array(buffer).fill(r);
        keep.push(new Uint8Array(buffer)[12345]);
        keep.push(('y'.repeat(1 << 20) + r).length);
        keep.push(JSON.parse(JSON.stringify(objects.slice(0, 20000))).length);
      }
      const shared = new SharedArrayBuffer(1 << 20);
      Atomics.add(new Int32Array(shared), 0, 1);
      out.push(keep.length);
      // Intl, Date, Math.random, RegExp.
      out.push((1234567.891).toLocaleString('en-US'));
      out.push((1234567.891).toLocaleString('de-DE'));
      out.push(new Intl.DateTimeFormat('de-DE', { timeZone: 'UTC', dateStyle: 'full' }).format(new Date(0)));
      out.push(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeStyle: 'long' }).format(new Date(0)));
      out.push(new Intl.DateTimeFormat().resolvedOptions().timeZone);
      out.push(new Intl.Collator('sv').compare('ä', 'z'), new Intl.PluralRules('ar').select(3));
      out.push(new Intl.Segmenter('ja', { granularity: 'word' }).segment('今日は良い天気').containing(0).segment);
      out.push('İ'.toLocaleLowerCase('tr'), 'straße'.normalize('NFD').length);
      out.push(new Date(2020, 5, 1).toString(), new Date().getTimezoneOffset(), Date.now() > 0);
      out.push(new Date(0).toLocaleString());
      out.push(Math.random() < 1, typeof crypto);
      out.push(/(\d+)-(\d+)/u.exec('12-34')[2]);
      let matches = 0;
      for (let i = 0; i < 100000; i++) if (/a(b+)c\d/.test('xxabbbc' + i)) matches++;
      out.push(matches, 'a,b;c'.split(/[,;]/).length);
      // WebAssembly: (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
      const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1,
        0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11]);
      const add = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.add;
      let sum = 0;
      for (let i = 0; i < 2000000; i++) sum = add(sum, 1) | 0;
      out.push(sum);
      const memory = new WebAssembly.Memory({ initial: 1, maximum: 100 });
      memory.grow(50);
      out.push(memory.buffer.byteLength);
      WebAssembly.compile(bytes).then(m => { globalThis.asyncDone = new WebAssembly.Instance(m).exports.add(40, 2); });
      // A stack overflow, caught.
      function down(n) { return down(n + 1) + 1; }
      try { down(0); out.push('no overflow'); } catch (e) { out.push(e instanceof RangeError); }
      return JSON.stringify(out);
    })()"#;

    /// The isolate thread: a fresh isolate runs `WORKLOAD`, then a loop a watchdog terminates.
    fn isolate_thread(platform: &v8::SharedRef<v8::Platform>) -> Result<(), String> {
        let mut isolate = v8::Isolate::new(v8::CreateParams::default().heap_limits(0, 512 * 1024 * 1024));
        {
            v8::scope!(let scope, &mut isolate);
            let context = v8::Context::new(scope, Default::default());
            let scope = &mut v8::ContextScope::new(scope, context);
            let out = run(scope, WORKLOAD)?;
            eprintln!("allowlist child: {out}");
            if !out.ends_with("true]") {
                return Err(format!("stack overflow not caught: {out}"));
            }
            // The async compile finishes on the platform's workers; its tasks come back here.
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                scope.perform_microtask_checkpoint();
                while v8::Platform::pump_message_loop(platform, scope, false) {}
                let state = run(scope, "String(globalThis.asyncDone)")?;
                if state == "42" {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("async WebAssembly compile did not finish: {state}"));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }

        // Termination from another thread, once the isolate thread has used 200 ms of CPU.
        let handle = isolate.thread_safe_handle();
        let clock = thread_clock();
        let start = cpu_ns(clock);
        let done = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let done = done.clone();
            std::thread::Builder::new()
                .name("allowlist-watchdog".into())
                .spawn(move || {
                    while !done.load(Ordering::Acquire) {
                        if cpu_ns(clock) - start > 200_000_000 {
                            handle.terminate_execution();
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                })
                .map_err(|e| format!("spawn the watchdog: {e}"))?
        };
        let terminated = {
            v8::scope!(let scope, &mut isolate);
            let context = v8::Context::new(scope, Default::default());
            let scope = &mut v8::ContextScope::new(scope, context);
            run(scope, "let i = 0; for (;;) { i = (i + 1) | 0; }")
        };
        done.store(true, Ordering::Release);
        watchdog.join().map_err(|_| "the watchdog panicked")?;
        if terminated != Err("terminated".into()) {
            return Err(format!("the endless loop ended with {terminated:?}"));
        }
        isolate.cancel_terminate_execution();
        {
            v8::scope!(let scope, &mut isolate);
            let context = v8::Context::new(scope, Default::default());
            let scope = &mut v8::ContextScope::new(scope, context);
            if run(scope, "6 * 7")? != "42" {
                return Err("the isolate is unusable after termination".into());
            }
        }
        drop(isolate);
        Ok(())
    }

    fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    /// What the filter refuses, and the few things it allows only with some arguments.
    fn refusals(ppid: libc::pid_t) -> Result<(), String> {
        let mut failures = Vec::new();
        let mut expect = |what: &str, rc: i64, want_errno: i32| {
            let got = errno();
            if rc != -1 || got != want_errno {
                failures.push(format!("{what}: returned {rc}, errno {got} (expected -1, errno {want_errno})"));
            }
        };
        // SAFETY: (all calls below) plain system calls with valid or null pointers; none of them
        // may succeed, and those that would have side effects fail or are harmless probes.
        unsafe {
            let path = c"/etc/passwd";
            expect("open", libc::open(path.as_ptr(), libc::O_RDONLY) as i64, libc::EPERM);
            expect("openat", libc::openat(libc::AT_FDCWD, path.as_ptr(), libc::O_RDONLY) as i64, libc::EPERM);
            let mut st: libc::stat = std::mem::zeroed();
            expect("stat", libc::stat(path.as_ptr(), &mut st) as i64, libc::EPERM);
            expect("socket", libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) as i64, libc::EPERM);
            expect("socket unix", libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) as i64, libc::EPERM);
            let addr: libc::sockaddr_un = std::mem::zeroed();
            let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
            expect("connect", libc::connect(3, (&addr as *const libc::sockaddr_un).cast(), len) as i64, libc::EPERM);
            expect("kill(1, 0)", libc::kill(1, 0) as i64, libc::EPERM);
            expect("kill(parent, SIGTERM)", libc::kill(ppid, libc::SIGTERM) as i64, libc::EPERM);
            expect("kill(self, 0)", libc::kill(libc::getpid(), 0) as i64, libc::EPERM);
            expect("kill(0, 0)", libc::kill(0, 0) as i64, libc::EPERM);
            expect("getppid", libc::getppid() as i64, libc::EPERM);
            expect(
                "tgkill(parent)",
                libc::syscall(libc::SYS_tgkill, ppid as libc::c_long, ppid as libc::c_long, 0),
                libc::EPERM,
            );
            expect("tkill(parent)", libc::syscall(libc::SYS_tkill, ppid as libc::c_long, 0), libc::EPERM);
            let null = std::ptr::null_mut::<libc::c_void>();
            expect("ptrace attach", libc::ptrace(libc::PTRACE_ATTACH, ppid, null, null), libc::EPERM);
            expect("ptrace traceme", libc::ptrace(libc::PTRACE_TRACEME, 0, null, null), libc::EPERM);
            expect("ioctl", libc::ioctl(2, libc::FIONREAD, &mut 0 as *mut libc::c_int) as i64, libc::EPERM);
            expect("prctl(PR_SET_DUMPABLE)", libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) as i64, libc::EPERM);
            expect("unshare", libc::unshare(libc::CLONE_NEWUSER) as i64, libc::EPERM);
            expect("seccomp", libc::syscall(libc::SYS_seccomp, libc::SECCOMP_GET_ACTION_AVAIL, 0, null), libc::EPERM);
            expect("clone3", libc::syscall(libc::SYS_clone3, null, 0), libc::ENOSYS);
            let argv = [c"/bin/true".as_ptr(), std::ptr::null()];
            expect("execve", libc::execve(argv[0], argv.as_ptr(), std::ptr::null()) as i64, libc::EPERM);
            match libc::fork() {
                0 => libc::_exit(0),
                pid => expect("fork", pid as i64, libc::EPERM),
            }
            // No lock on anything it holds (a lock is on the inode, whoever else has the file).
            expect("flock", libc::flock(2, libc::LOCK_EX | libc::LOCK_NB) as i64, libc::EPERM);
            let mut lock: libc::flock = std::mem::zeroed();
            lock.l_type = libc::F_RDLCK as _;
            expect("fcntl(F_SETLK)", libc::fcntl(2, libc::F_SETLK, &lock) as i64, libc::EPERM);
            expect("fcntl(F_OFD_SETLK)", libc::fcntl(2, libc::F_OFD_SETLK, &lock) as i64, libc::EPERM);
            let mut fds = [0; 2];
            expect("pipe2", libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) as i64, libc::EPERM);

            // Allowed: a thread naming itself, signals to this process's own threads.
            if libc::prctl(libc::PR_SET_NAME, c"allowlisted".as_ptr(), 0, 0, 0) != 0 {
                failures.push(format!("prctl(PR_SET_NAME): errno {}", errno()));
            }
            let (pid, tid) = (libc::getpid() as libc::c_long, libc::gettid() as libc::c_long);
            if libc::syscall(libc::SYS_tgkill, pid, tid, 0) != 0 {
                failures.push(format!("tgkill(self, 0): errno {}", errno()));
            }
        }
        if let Err(e) = std::fs::File::open("/etc/passwd") {
            if e.raw_os_error() != Some(libc::EPERM) {
                failures.push(format!("File::open: {e}"));
            }
        } else {
            failures.push("File::open(/etc/passwd) succeeded".into());
        }
        if let Ok(mut child) = Command::new("/bin/true").spawn() {
            let _ = child.wait();
            failures.push("spawning /bin/true succeeded".into());
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("\n"))
        }
    }

    /// V8's entropy source: without one, every isolate's random number generators (Math.random,
    /// hash seeds, heap placement) seed themselves from /dev/urandom, which the filter refuses,
    /// and fall back to the time.
    fn entropy(buf: &mut [u8]) -> bool {
        getrandom::fill(buf).is_ok()
    }

    /// The host channel's calls on an already-open socket (a socketpair standing in for fd 3).
    fn channel(fd: libc::c_int, peer: libc::c_int) -> Result<(), String> {
        let mut buf = [0u8; 64];
        // SAFETY: both descriptors are open sockets; every buffer outlives its call.
        unsafe {
            let ok = libc::write(fd, b"ping".as_ptr().cast(), 4) == 4
                && libc::read(peer, buf.as_mut_ptr().cast(), buf.len()) == 4;
            let mut iov = libc::iovec { iov_base: b"pong".as_ptr() as *mut _, iov_len: 4 };
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            let sent = libc::sendmsg(peer, &msg, libc::MSG_NOSIGNAL) == 4;
            let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            let polled = libc::poll(&mut pfd, 1, 1000) == 1;
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
            msg.msg_iov = &mut iov;
            let received = libc::recvmsg(fd, &mut msg, 0) == 4;
            if !(ok && sent && polled && received) {
                return Err(format!("channel: {}", std::io::Error::last_os_error()));
            }
        }
        Ok(())
    }

    /// The child's whole life: start-up, the filter, isolates on new threads, the refusals.
    fn child_main(mode: &str) -> Result<(), String> {
        let filtered = mode != "unfiltered";
        let mut pair = [0; 2];
        // SAFETY: `pair` has room for two descriptors.
        if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) } != 0
        {
            return Err("socketpair".into());
        }
        // Start-up, as crate::isolate::platform does it, with an entropy source.
        v8::V8::set_entropy_source(entropy);
        v8::icu::set_common_data_78(deno_core_icudata::ICU_DATA).map_err(|_| "ICU data")?;
        let platform = v8::new_unprotected_default_platform(2, false).make_shared();
        v8::V8::initialize_platform(platform.clone());
        v8::V8::initialize();
        let mut first = v8::Isolate::new(Default::default());
        {
            v8::scope!(let scope, &mut first);
            let context = v8::Context::new(scope, Default::default());
            let scope = &mut v8::ContextScope::new(scope, context);
            run(scope, "[1, 2, 3].map(x => x * 2).join()")?;
        }

        // A thread from before the filter (like V8's workers): TSYNC filters it too.
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let earlier = std::thread::spawn(move || {
            let _ = wait.recv();
            std::fs::File::open("/etc/passwd").map(drop).map_err(|e| e.raw_os_error())
        });
        // Taken before the filter, which refuses getppid (-1 would make kill() reach everything).
        // SAFETY: getppid has no preconditions.
        let ppid = unsafe { libc::getppid() };
        if ppid <= 1 {
            return Err(format!("parent pid {ppid}"));
        }
        if filtered {
            super::apply_all_threads()?;
        } else {
            eprintln!("ALLOWLIST-MARK");
        }
        match mode {
            // What a V8 fatal error ends with: SIGABRT, raised with tgkill.
            "abort" => std::process::abort(),
            // A crash: Rust's SIGSEGV handler sees no guard page, resets itself and returns.
            // SAFETY: none; the point is the fault (a volatile read the compiler keeps).
            "segv" => unsafe {
                std::ptr::read_volatile(std::ptr::null::<u8>().wrapping_add(8));
            },
            _ => {}
        }
        channel(pair[0], pair[1])?;
        // A panicking thread: the message on stderr, unwinding, the join reporting it.
        let panicked = std::thread::Builder::new()
            .name("allowlist-panic".into())
            .spawn(|| panic!("a panic under the allowlist"))
            .map_err(|e| format!("spawn the panicking thread: {e}"))?
            .join();
        if panicked.is_ok() {
            return Err("the panicking thread did not panic".into());
        }

        let isolate = std::thread::Builder::new()
            .name("allowlist-isolate".into())
            .stack_size(8 << 20)
            .spawn(move || isolate_thread(&platform))
            .map_err(|e| format!("spawn the isolate thread: {e}"))?;
        isolate.join().map_err(|_| "the isolate thread panicked")??;
        let _ = go.send(());
        let earlier = earlier.join().map_err(|_| "the earlier thread panicked")?;
        if filtered {
            if earlier != Err(Some(libc::EPERM)) {
                return Err(format!("a thread from before the filter opened a file: {earlier:?}"));
            }
            refusals(ppid)?;
        }
        drop(first);
        Ok(())
    }

    /// The child's entry point; does nothing unless `ALLOWLIST_CHILD` is set.
    #[test]
    fn child() {
        let Ok(mode) = std::env::var(CHILD) else { return };
        let code = match child_main(&mode) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("allowlist child failed: {e}");
                1
            }
        };
        std::process::exit(code);
    }

    #[test]
    fn v8_runs_under_the_allowlist() {
        let exe = std::env::current_exe().unwrap();
        let output = Command::new(exe)
            .args(["--exact", &child_test(), "--nocapture", "--test-threads=1"])
            .env(CHILD, "filtered")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprintln!("filtered child: {:?}\n{stderr}", output.status);
        assert!(output.status.success(), "child: {:?}\n{stderr}", output.status);
        assert!(stderr.contains("allowlist child: ["), "{stderr}");
    }

    /// A filtered child that dies of a signal; the signal.
    fn crash(mode: &str) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        let exe = std::env::current_exe().unwrap();
        let output = Command::new(exe)
            .args(["--exact", &child_test(), "--nocapture", "--test-threads=1"])
            .env(CHILD, mode)
            .output()
            .unwrap();
        eprintln!("{mode} child: {:?}\n{}", output.status, String::from_utf8_lossy(&output.stderr));
        output.status.signal()
    }

    #[test]
    fn abort_is_sigabrt_under_the_allowlist() {
        assert_eq!(crash("abort"), Some(libc::SIGABRT));
    }

    #[test]
    fn a_crash_is_sigsegv_under_the_allowlist() {
        assert_eq!(crash("segv"), Some(libc::SIGSEGV));
    }

    #[test]
    fn the_program_starts_with_the_clone3_prefix() {
        let program = super::program().unwrap();
        assert_eq!(program[3].k, libc::SYS_clone3 as u32);
        assert_eq!(program[4].k, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
        assert!(program.len() < 4096);
    }
}
