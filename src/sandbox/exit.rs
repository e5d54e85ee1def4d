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
    wait4_nohang(pid).map(|(_, exit)| exit)
}

/// `wait4(-1, WNOHANG)`: one child that has ended, reaped, and its pid (`None`: none has). A
/// parent of many reaps them all by calling this until it returns `None`, one system call per
/// child rather than one per child it holds. The Python template's loop reaps with it (in its
/// library, crates/python-entry, not the addon).
#[allow(dead_code)]
pub fn reap_any() -> Option<(i32, Exit)> {
    wait4_nohang(-1)
}

fn wait4_nohang(pid: i32) -> Option<(i32, Exit)> {
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 with pointers to locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
    if reaped <= 0 {
        return None;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    // Without WUNTRACED or WCONTINUED, wait4 reports only children that ended.
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else {
        (None, Some(libc::WTERMSIG(status)))
    };
    let exit = Exit {
        code,
        signal,
        cpu_ms: ms(usage.ru_utime) + ms(usage.ru_stime),
        max_rss_bytes: usage.ru_maxrss as f64 * if cfg!(target_os = "macos") { 1.0 } else { 1024.0 },
    };
    Some((reaped, exit))
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

#[cfg(test)]
mod tests {
    use super::{reap_any, try_reap};
    use std::time::{Duration, Instant};

    /// Forks a child that runs `body` and exits with what it returns (nothing else of the test
    /// binary runs there), and reaps it.
    fn in_child(body: fn() -> i32) -> Option<super::Exit> {
        // SAFETY: the child calls only `body` (system calls on its own children) and `_exit`.
        let pid = match unsafe { libc::fork() } {
            // SAFETY: `_exit` ends the child without running the test binary's exit handlers.
            0 => unsafe { libc::_exit(body()) },
            pid => pid,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(exit) = try_reap(pid) {
                return Some(exit);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn reap_any_reaps_every_ended_child_once_with_its_own_status() {
        // In a child of its own, so that no other test's children are reaped here. Its exit code
        // says what went wrong: 0 nothing, 1 a status not the child's, 2 a child left.
        // No allocation there: the test binary has other threads, whose malloc lock a fork may copy.
        let exit = in_child(|| {
            let codes = [3, 4, 5, 6];
            let mut pids = [0; 4];
            for (pid, code) in pids.iter_mut().zip(codes) {
                // SAFETY: the grandchild only exits.
                *pid = unsafe { libc::fork() };
                if *pid == 0 {
                    // SAFETY: the grandchild ends at once.
                    unsafe { libc::_exit(code) };
                }
            }
            let mut left = pids.len();
            let deadline = Instant::now() + Duration::from_secs(5);
            while left > 0 && Instant::now() < deadline {
                let Some((pid, exit)) = reap_any() else {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                };
                match pids.iter().position(|&p| p == pid) {
                    Some(i) if (exit.code, exit.signal) == (Some(codes[i]), None) => pids[i] = 0,
                    _ => return 1,
                }
                left -= 1;
            }
            if left == 0 && reap_any().is_none() {
                0
            } else {
                2
            }
        });
        assert_eq!(exit.map(|e| (e.code, e.signal)), Some((Some(0), None)));
    }

    #[test]
    fn a_killed_child_is_reported_by_its_signal() {
        let exit = in_child(|| {
            // SAFETY: the child waits to be killed.
            unsafe { libc::raise(libc::SIGKILL) };
            0
        });
        assert_eq!(exit.map(|e| (e.code, e.signal)), Some((None, Some(libc::SIGKILL))));
    }
}
