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

/// Memory protection keys as V8's protected platform uses them (where the CPU has them): a page's
/// key set with `pkey_mprotect` (key -1 is plain `mprotect`, on any CPU), a key allocated and
/// freed (or refused as the CPU refuses it, never by the filter).
fn protection_keys() -> Result<(), String> {
    // SAFETY: a fresh anonymous page of this process, changed and unmapped here alone.
    unsafe {
        let page = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if page == libc::MAP_FAILED {
            return Err("mmap".into());
        }
        let keyed = libc::syscall(libc::SYS_pkey_mprotect, page, 4096usize, libc::PROT_READ, -1i32);
        let keyed =
            if keyed == 0 { Ok(()) } else { Err(format!("pkey_mprotect: {}", std::io::Error::last_os_error())) };
        libc::munmap(page, 4096);
        keyed?;
        let key = libc::syscall(libc::SYS_pkey_alloc, 0u32, 0u32);
        if key < 0 && errno() == libc::EPERM {
            return Err("pkey_alloc refused".into());
        }
        if key >= 0 && libc::syscall(libc::SYS_pkey_free, key as i32) != 0 {
            return Err(format!("pkey_free: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// The child's whole life: start-up, the filter, isolates on new threads, the refusals.
fn child_main(mode: &str) -> Result<(), String> {
    let filtered = mode != "unfiltered";
    let mut pair = [0; 2];
    // SAFETY: `pair` has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) } != 0 {
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
    protection_keys()?;
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
