//! `isolate-probe`: the escape test's sandbox process. It hardens itself exactly as a serving
//! process does, then makes natively the calls a program that escaped V8 would make.

use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;

use super::{prepare, send_line, start_up, CHANNEL};
use crate::sandbox::abi;

/// One system call an attacker with code execution in this process would make, and its errno
/// (0: it succeeded — a hole in the sandbox).
fn attempt(name: &str, result: libc::c_long) -> String {
    let errno = if result < 0 { std::io::Error::last_os_error().raw_os_error().unwrap_or(-1) } else { 0 };
    format!("[\"{name}\",{errno}]")
}

/// A Unix stream socket connected to `path`: -1 with errno set by whichever call failed.
///
/// # Safety
/// Plain socket calls; the descriptor is closed either way.
unsafe fn connect_unix(path: &str) -> libc::c_long {
    // SAFETY: the caller's contract.
    unsafe {
        let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
        if fd < 0 {
            return -1;
        }
        let mut addr: libc::sockaddr_un = std::mem::zeroed();
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (dst, src) in addr.sun_path.iter_mut().zip(path.bytes().take(107)) {
            *dst = src as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        let r = libc::connect(fd, (&addr as *const libc::sockaddr_un).cast(), len);
        let errno = std::io::Error::last_os_error();
        libc::close(fd);
        if r < 0 {
            *libc::__errno_location() = errno.raw_os_error().unwrap_or(libc::EIO);
            return -1;
        }
        0
    }
}

// The helper calls this symbol through the type src/sandbox/abi.rs gives it.
const _: abi::ProbeEntry = crn_isolate_probe;

/// `isolate-probe`: hardens itself exactly as a serving process does, then makes the calls a
/// program that escaped V8 would make against `host_pid`, and reports each errno on the channel.
/// Only the test suite starts it. A negative `host_pid` leaves the seccomp allowlist out, to show
/// what the layers beneath it (namespaces, Landlock, the deny-list) hold on their own.
///
/// # Safety
/// As [`crn_isolate_serve`].
#[no_mangle]
pub unsafe extern "C" fn crn_isolate_probe(fd: RawFd, heap_mb: f64, host_pid: i32) -> i32 {
    // SAFETY: as this function's own contract.
    crate::panic::guard(|| unsafe { probe(fd, heap_mb, host_pid) }, |_| abi::EXIT_PANICKED)
}

/// The probe's body (see `crn_isolate_probe`).
///
/// # Safety
/// As [`crn_isolate_serve`].
unsafe fn probe(fd: RawFd, heap_mb: f64, host_pid: i32) -> i32 {
    // SAFETY: the caller hands over the descriptor.
    let channel = unsafe { UnixStream::from_raw_fd(fd) };
    let _ = CHANNEL.set(Mutex::new(channel));
    start_up(heap_mb);
    let Some(_ready) = prepare(heap_mb) else { return abi::EXIT_NO_ISOLATE };
    let (host_pid, with_allowlist) = (host_pid.abs(), host_pid > 0);
    let allowlist = with_allowlist && crate::sandbox::harden::allowlist::apply_all_threads().is_ok();
    let path = |p: String| std::ffi::CString::new(p).unwrap_or_default();
    let environ = path(format!("/proc/{host_pid}/environ"));
    let mem = path(format!("/proc/{host_pid}/mem"));
    let passwd = path("/etc/passwd".into());
    // In `/`: the root of the process's own, read-only (a path the root lacks would fail earlier).
    let created = path("/code-runtime-native-escape".into());
    // A socket the test's host listens on, in the host's /tmp.
    let host_socket = format!("/tmp/code-runtime-native-probe-{host_pid}.sock");
    // Under /usr, which the root binds (a merged-/usr system's /bin is only a link to it).
    let sh = path("/usr/bin/sh".into());
    let mut results = Vec::new();
    // SAFETY: each call is made with valid arguments (or null pointers the kernel rejects); none
    // is expected to succeed, and one that does only proves the hole the report shows.
    unsafe {
        results.push(attempt("open host environ", libc::open(environ.as_ptr(), libc::O_RDONLY) as _));
        results.push(attempt("open host mem", libc::open(mem.as_ptr(), libc::O_RDWR) as _));
        results.push(attempt("open /etc/passwd", libc::open(passwd.as_ptr(), libc::O_RDONLY) as _));
        results
            .push(attempt("create a file", libc::open(created.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o600) as _));
        results.push(attempt("connect a host Unix socket", connect_unix(&host_socket)));
        results.push(attempt("signal the host", libc::kill(host_pid, 0) as _));
        results.push(attempt("signal everyone", libc::kill(-1, 0) as _));
        results.push(attempt("ptrace the host", libc::ptrace(libc::PTRACE_ATTACH, host_pid, 0, 0)));
        let mut byte = 0u8;
        let local = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        let remote = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 1 };
        results.push(attempt("read host memory", libc::process_vm_readv(host_pid, &local, 1, &remote, 1, 0) as _));
        results.push(attempt("open a TCP socket", libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) as _));
        results.push(attempt("open a Unix socket", libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) as _));
        let argv = [sh.as_ptr(), std::ptr::null()];
        results.push(attempt("exec a shell", libc::execve(sh.as_ptr(), argv.as_ptr(), std::ptr::null()) as _));
        let forked = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0);
        if forked == 0 {
            libc::_exit(0);
        }
        results.push(attempt("fork", forked));
        results.push(attempt("unshare", libc::unshare(libc::CLONE_NEWUSER) as _));
        // Locks on every descriptor it holds (stdio and the channel): a lock is on the inode, so
        // one on a host file would hold off the host's own processes.
        for held in [0, 1, 2, fd] {
            let name = if held == fd { "the channel".to_string() } else { format!("fd {held}") };
            results.push(attempt(&format!("flock {name}"), libc::flock(held, libc::LOCK_EX | libc::LOCK_NB) as _));
            let mut lock: libc::flock = std::mem::zeroed();
            lock.l_type = libc::F_RDLCK as _;
            results.push(attempt(&format!("record-lock {name}"), libc::fcntl(held, libc::F_OFD_SETLK, &lock) as _));
        }
    }
    send_line(&format!("{{\"type\":\"probe\",\"allowlist\":{allowlist},\"results\":[{}]}}\n", results.join(",")));
    0
}
