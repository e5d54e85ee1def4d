//! A started child as the host holds it (src/python/process/spawn.rs, forked.rs): its pid, its
//! pipes, how its exit is seen, and the exit record a template writes for a child it reaped.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use crate::sandbox::exit::Exit;
use crate::sandbox::Layers;

/// A spawned child and the host ends of its pipes (all non-blocking and close-on-exec).
pub struct Spawned {
    /// The host's child: the interpreter itself, or the sandbox helper that mirrors its exit.
    pub pid: i32,
    /// `/proc/<pid>/stat` field 22 at spawn, for the pid-reuse guard.
    pub start_time: Option<u64>,
    pub fd3: OwnedFd,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// Readable when the child exits (Linux); otherwise exit is polled.
    pub pidfd: Option<OwnedFd>,
    /// What the sandbox helper reported it applied (`None`: started without the helper).
    pub layers: Option<Layers>,
    /// The namespace's init (when the helper made one): SIGKILL it, and the whole namespace dies
    /// while the helper reaps it and exits, so nothing is left for anyone else to reap.
    pub init: Option<OwnedFd>,
    /// Keeps the host's lifeline open until the child is reaped (dropped with the run).
    pub lifeline: Option<crate::sandbox::lifeline::Hold>,
    /// Forked by the Python template, which reaps it: `pidfd` is then its exit pipe, readable
    /// once the template wrote how it ended (src/python/template/host.rs).
    pub by_template: bool,
    /// Address space the child holds that is not the program's (the template's addon), added to
    /// the `RLIMIT_AS` the bootstrap asserts.
    pub address_space_extra: u64,
}

impl Spawned {
    /// Whether the child is still running (one that has ended is reaped).
    pub fn running(&self) -> bool {
        match self.by_template {
            // SAFETY: signal 0 only checks that the process exists (the template has not reaped it).
            true => (unsafe { libc::kill(self.pid, 0) } == 0) && !readable(self.pidfd.as_ref(), Duration::ZERO),
            false => crate::sandbox::exit::running(self.pid),
        }
    }

    /// Blocks until the child has ended (and is reaped, by the host or the template).
    pub fn wait_exit(&self) {
        match self.by_template {
            true => {
                if let Some(fd) = &self.pidfd {
                    exit_record(fd, None);
                }
            }
            false => {
                crate::sandbox::exit::reap(self.pid);
            }
        }
    }
}

/// Whether `fd` is readable within `wait` (`None`: no descriptor).
fn readable(fd: Option<&OwnedFd>, wait: Duration) -> bool {
    fd.is_some_and(|fd| crate::os::poll::wait_for(fd.as_raw_fd(), libc::POLLIN, Some(wait)))
}

/// The template's exit record on `fd` once readable within `wait` (`None`: forever). A template
/// that died before writing one leaves an end of file: the child ended, how is unknown.
pub fn exit_record(fd: &OwnedFd, wait: Option<Duration>) -> Option<Exit> {
    if let Some(wait) = wait {
        if !readable(Some(fd), wait) {
            return None;
        }
    } else {
        while !readable(Some(fd), Duration::from_secs(3600)) {}
    }
    Some(crate::python::template::host::read_exit(fd).unwrap_or(Exit {
        code: None,
        signal: None,
        cpu_ms: f64::NAN,
        max_rss_bytes: f64::NAN,
    }))
}
