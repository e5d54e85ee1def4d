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
    // Memory protection keys, where the CPU has them (x86_64 PKU): V8's protected platform then
    // keeps JIT code writable only to the thread writing it, marking its pages with
    // `pkey_mprotect` (and a key it failed to set makes V8 abort); `pkey_alloc`/`pkey_free` for
    // the keys. Nothing beyond what `mprotect` does to this process's own pages. Not seen with
    // strace on a CPU without PKU, where V8 never calls them.
    libc::SYS_pkey_mprotect,
    libc::SYS_pkey_alloc,
    libc::SYS_pkey_free,
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
mod tests;
