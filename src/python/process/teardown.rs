//! Signalling the child's process group (docs/python.md#teardown): the pid-reuse guard and the test
//! for a group that is gone.

use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use crate::sandbox::procfs::start_time;
#[cfg(target_os = "linux")]
use crate::sandbox::procfs::stat_fields;

/// Signals the group led by `pid`, unless `/proc` shows that pid now names a different process.
/// An absent entry (the leader was reaped) still signals: the group id stays reserved while any
/// member lives. `ESRCH` is swallowed.
pub fn signal_group(pid: i32, spawned_at: Option<u64>, sig: Signal) {
    if let (Some(then), Some(now)) = (spawned_at, start_time(pid)) {
        if then != now {
            return;
        }
    }
    let _ = killpg(Pid::from_raw(pid), sig);
}

/// Whether any live process remains in the group. Members that are only zombies count as gone:
/// orphans re-parented to a PID 1 that never reaps would otherwise keep the group "alive" forever.
pub fn group_alive(pgid: i32) -> bool {
    match kill(Pid::from_raw(-pgid), None) {
        Err(Errno::ESRCH) => false,
        Err(_) => true,
        Ok(()) => live_member(pgid),
    }
}

#[cfg(target_os = "linux")]
fn live_member(pgid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    let want = pgid.to_string();
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Some(f) = stat_fields(pid) else { continue };
        if f.get(2).map(String::as_str) == Some(want.as_str())
            && !matches!(f.first().map(String::as_str), Some("Z" | "X"))
        {
            return true;
        }
    }
    false
}

#[cfg(not(target_os = "linux"))]
fn live_member(_pgid: i32) -> bool {
    true
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn pid_reuse_guard() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        let pid = child.id() as i32;
        let started = start_time(pid).expect("start time");
        // A different start time means the pid names another process now: nothing is sent.
        signal_group(pid, Some(started + 1), Signal::SIGKILL);
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(child.try_wait().unwrap().is_none(), "guarded signal was not sent");
        assert!(group_alive(pid));
        signal_group(pid, Some(started), Signal::SIGKILL);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        // Reaped and gone: ESRCH is swallowed.
        assert!(!group_alive(pid));
        signal_group(pid, Some(started), Signal::SIGKILL);
    }

    #[test]
    fn zombie_only_groups_count_as_gone() {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new("true").process_group(0).spawn().expect("true");
        let pid = child.id() as i32;
        std::thread::sleep(std::time::Duration::from_millis(200));
        // Exited but not reaped: a zombie is still a group member for kill(-pgid, 0).
        assert!(kill(Pid::from_raw(-pid), None).is_ok());
        assert!(!group_alive(pid));
        let mut child = child;
        child.wait().unwrap();
    }

    #[test]
    fn empty_groups() {
        assert!(!group_alive(i32::MAX - 1));
        let me = nix::unistd::getpgrp().as_raw();
        assert!(group_alive(me), "the test runner's own group is alive");
    }
}
