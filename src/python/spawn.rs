//! Per-run staging and spawn (python-runtime.md §7).

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::fcntl::OFlag;
#[cfg(not(target_vendor = "apple"))]
use nix::unistd::pipe2;
use nix::unistd::setsid;

use super::errors;
use super::interp::CachedFile;
use super::limits::LimitPlan;
use super::teardown::start_time;

/// The files copied into each run's directory (the entry first).
pub const BOOTSTRAP_FILES: [&str; 3] = ["bootstrap.py", "protocol.py", "runner.py"];

/// A run's private copy of the bootstrap, removed at settlement.
pub struct Staging {
    pub dir: PathBuf,
}

impl Staging {
    /// `mkdtemp(<tmpdir>/code-runtime-native-python-)`, a synchronous copy of the scripts, and the
    /// precompiled modules when the load produced them.
    pub fn create(tmpdir: &str, py_dir: &Path, cache: &[CachedFile]) -> Result<Staging, String> {
        let template = format!("{}/code-runtime-native-python-XXXXXX", tmpdir.trim_end_matches('/'));
        let dir = mkdtemp(&template).map_err(|e| errors::fs("mkdtemp", &template, &e))?;
        let staging = Staging { dir };
        for name in BOOTSTRAP_FILES {
            let (src, dst) = (py_dir.join(name), staging.dir.join(name));
            if let Err(e) = std::fs::copy(&src, &dst) {
                staging.remove();
                return Err(errors::fs2("copyfile", &src.to_string_lossy(), &dst.to_string_lossy(), &e));
            }
        }
        if !cache.is_empty() {
            let pycache = staging.dir.join("__pycache__");
            if let Err(e) = std::fs::create_dir(&pycache) {
                staging.remove();
                return Err(errors::fs("mkdir", &pycache.to_string_lossy(), &e));
            }
            for (rel, bytes) in cache {
                let dst = staging.dir.join(rel);
                if let Err(e) = std::fs::write(&dst, bytes) {
                    staging.remove();
                    return Err(errors::fs("open", &dst.to_string_lossy(), &e));
                }
            }
        }
        Ok(staging)
    }

    pub fn bootstrap(&self) -> PathBuf {
        self.dir.join(BOOTSTRAP_FILES[0])
    }

    /// Errors are ignored: the directory is best-effort garbage once the run settles.
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// macOS has no `pipe2`: a pipe, then close-on-exec on both ends. A fork on another thread in
/// between can inherit the two fds; our own children close every fd above 3 at exec anyway.
#[cfg(target_vendor = "apple")]
fn pipe2(flags: OFlag) -> nix::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe()?;
    if flags.contains(OFlag::O_CLOEXEC) {
        for fd in [&r, &w] {
            // SAFETY: `fd` is an open descriptor owned above.
            if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } < 0 {
                return Err(nix::Error::last());
            }
        }
    }
    Ok((r, w))
}

fn mkdtemp(template: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut buf = std::ffi::CString::new(template)
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?
        .into_bytes_with_nul();
    // SAFETY: a writable NUL-terminated template, modified in place.
    let p = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    buf.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

/// A spawned child and the host ends of its pipes (all non-blocking and close-on-exec).
pub struct Spawned {
    pub pid: i32,
    /// `/proc/<pid>/stat` field 22 at spawn, for the pid-reuse guard.
    pub start_time: Option<u64>,
    pub fd3: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// Readable when the child exits (Linux); otherwise exit is polled.
    pub pidfd: Option<OwnedFd>,
}

fn nonblocking(fd: &OwnedFd) {
    // SAFETY: plain fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

#[cfg(target_os = "linux")]
fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(fd as RawFd) })
}

#[cfg(not(target_os = "linux"))]
fn pidfd_open(_pid: i32) -> Option<OwnedFd> {
    None
}

/// Marks every descriptor from 4 up close-on-exec, in the child before exec. Marking rather than
/// closing keeps the standard library's exec-error pipe working.
fn cloexec_from_4() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: close_range only changes descriptor flags.
        let r = unsafe { libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) };
        if r == 0 {
            return Ok(());
        }
    }
    // Older kernels: walk the table (bounded, since the host may have raised RLIMIT_NOFILE a lot).
    // SAFETY: sysconf and fcntl are async-signal-safe.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(4, 65536) as RawFd;
    for fd in 4..max {
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// `<interpreter> -u -I <bootstrap>` with `{ TMPDIR }`, in a new session, fds 0–3 as pipes (fd 3 a
/// socket pair, since the protocol goes both ways), nothing else inherited, limits applied pre-exec.
pub fn spawn(interpreter: &Path, bootstrap: &Path, tmpdir: &str, plan: LimitPlan) -> Result<Spawned, String> {
    let sys = |e: nix::Error| errors::syscall("spawn", &e.into());
    let (stdin_r, stdin_w) = pipe2(OFlag::O_CLOEXEC).map_err(sys)?;
    let (out_r, out_w) = pipe2(OFlag::O_CLOEXEC).map_err(sys)?;
    let (err_r, err_w) = pipe2(OFlag::O_CLOEXEC).map_err(sys)?;
    let (host3, child3) = UnixStream::pair().map_err(|e| errors::syscall("spawn", &e))?;
    let child3_raw = child3.as_raw_fd();
    let mut cmd = Command::new(interpreter);
    cmd.arg("-u")
        .arg("-I")
        .arg(bootstrap)
        .env_clear()
        .env("TMPDIR", tmpdir)
        .stdin(Stdio::from(stdin_r))
        .stdout(Stdio::from(out_w))
        .stderr(Stdio::from(err_w));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            setsid()?;
            plan.apply()?;
            // SIGXCPU must kill (it is the CPU timeout); an inherited ignore or block would defeat it.
            libc::signal(libc::SIGXCPU, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGXCPU);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            // fd 3 is the protocol socket; dup2 clears close-on-exec, or clear it when already 3.
            if child3_raw == 3 {
                if libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(child3_raw, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            cloexec_from_4()
        });
    }
    let child = cmd.spawn().map_err(|e| errors::syscall(&format!("spawn {}", interpreter.display()), &e))?;
    drop(cmd);
    drop(stdin_w); // the child reads EOF on fd 0
    drop(child3);
    let pid = child.id() as i32;
    let start_time = start_time(pid);
    let pidfd = pidfd_open(pid);
    let fd3 = OwnedFd::from(host3);
    for fd in [&fd3, &out_r, &err_r] {
        nonblocking(fd);
    }
    Ok(Spawned { pid, start_time, fd3, stdout: out_r, stderr: err_r, pidfd })
}
