//! A child's exit status and resource usage, reaped with `wait4`.

use nix::sys::signal::Signal;

/// How the child ended, and what it used (its own and its reaped children's).
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub cpu_ms: f64,
    pub max_rss_bytes: f64,
}

/// Blocks until child `pid` has ended and reaps it; how it ended (`None`: it was reaped before,
/// which is no error for a caller that killed it).
pub fn reap(pid: i32) -> Option<nix::sys::wait::WaitStatus> {
    let pid = nix::unistd::Pid::from_raw(pid);
    loop {
        match nix::sys::wait::waitpid(pid, None) {
            Err(nix::errno::Errno::EINTR) => {}
            status => return status.ok(),
        }
    }
}

/// `reap` on a thread of its own, for a caller that must not wait (Node's main thread).
pub fn reap_in_background(pid: i32) {
    std::thread::spawn(move || {
        reap(pid);
    });
}

/// Whether child `pid` is still running; one that has ended is reaped here.
pub fn running(pid: i32) -> bool {
    let flags = Some(nix::sys::wait::WaitPidFlag::WNOHANG);
    matches!(
        nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), flags),
        Ok(nix::sys::wait::WaitStatus::StillAlive)
    )
}

/// `wait4(pid, WNOHANG)`.
pub fn try_reap(pid: i32) -> Option<Exit> {
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 with pointers to locals.
    let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
    if r != pid {
        return None;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        return None;
    };
    Some(Exit {
        code,
        signal,
        cpu_ms: ms(usage.ru_utime) + ms(usage.ru_stime),
        max_rss_bytes: usage.ru_maxrss as f64 * if cfg!(target_os = "macos") { 1.0 } else { 1024.0 },
    })
}

impl Exit {
    /// `code=<code>, signal=<signal>`, `null` for the one that is absent, signals by name.
    pub fn describe(&self) -> String {
        let code = self.code.map_or("null".to_string(), |c| c.to_string());
        let signal = self.signal.map_or("null".to_string(), signal_name);
        format!("code={code}, signal={signal}")
    }
}

pub fn signal_name(sig: i32) -> String {
    Signal::try_from(sig).map(|s| s.as_str().to_string()).unwrap_or_else(|_| sig.to_string())
}
