//! How the helper's processes end and report (src/sandbox/harden/enter.rs, program.rs): `_exit`
//! only, since in a forked interpreter `exit` would run the interpreter's handlers.

use std::os::fd::OwnedFd;

use super::abi;

/// Ends this process as the raw wait status `raw` says the program ended.
pub(super) fn mirror_raw(raw: i32) -> ! {
    if libc::WIFEXITED(raw) {
        exit_now(libc::WEXITSTATUS(raw));
    }
    if libc::WIFSIGNALED(raw) {
        die_by(libc::WTERMSIG(raw));
    }
    exit_now(abi::EXIT_USAGE)
}

/// Ends this process by `sig`, as the program was ended.
pub(super) fn die_by(sig: i32) -> ! {
    // SAFETY: default disposition, unblocked, then raised; RLIMIT_CORE 0 means no core file.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
    exit_now(128 + sig)
}

pub(super) fn write_all(fd: &OwnedFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        match nix::unistd::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}

pub(super) fn pipe() -> (OwnedFd, OwnedFd) {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap_or_else(|e| fail("pipe", e))
}

pub(super) fn fail(what: &str, err: nix::errno::Errno) -> ! {
    eprintln!("code-runtime-native-sandbox: {what}: {}", err.desc());
    exit_now(abi::EXIT_SETUP);
}

/// `_exit`: nothing of the caller's runs on the way out (a forked interpreter's handlers).
pub(super) fn exit_now(code: i32) -> ! {
    // SAFETY: ends this process at once.
    unsafe { libc::_exit(code) }
}
