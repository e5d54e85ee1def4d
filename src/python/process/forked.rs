//! A run's child forked by the Python template (docs/python.md#the-template) instead of spawned
//! through the helper: the same plan, descriptors and report, so the run cannot tell the two
//! apart, and only the interpreter's start-up is skipped.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use nix::fcntl::OFlag;

use crate::python::process::limits::LimitPlan;
use crate::python::process::spawned::{exit_record, Spawned};
use crate::python::process::teardown::signal_group;
use crate::python::template::host::PyTemplate;
use crate::sandbox::fds::{nonblocking, pidfd_open, pipe2};
use crate::sandbox::report::{read_report, Report};
use crate::sandbox::Plan;

/// Why no child was forked.
pub enum ForkError {
    /// The template did not answer (it died, or said something else): start another, and spawn
    /// this run's child instead.
    Unanswered,
    /// The child could not take the run's layers (the message), and has been reaped.
    Failed(String),
    /// The plan's `as_host` path at this index could not be opened without following a link.
    PolicyRefused(usize, std::io::Error),
}

/// Forks the run's child from `template` with the helper's `plan` (which has a lifeline exactly
/// when `lifeline` holds one); the run's pipes are made here.
pub fn spawn_forked(
    template: &PyTemplate,
    plan: &Plan,
    limits: &LimitPlan,
    lifeline: Option<crate::sandbox::lifeline::Hold>,
) -> Result<Spawned, ForkError> {
    let sys = |what: &str, e: std::io::Error| ForkError::Failed(format!("{what}: {e}"));
    let pipe = || pipe2(OFlag::O_CLOEXEC).map_err(|e| sys("pipe", e.into()));
    let (stdin_r, stdin_w) = pipe()?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    drop(stdin_w); // the child reads EOF on fd 0
    let (channel, child_channel) = UnixStream::pair().map_err(|e| sys("socketpair", e))?;
    let (report_r, report_w) = pipe()?;
    let mut fds = vec![
        stdin_r.as_raw_fd(),
        out_w.as_raw_fd(),
        err_w.as_raw_fd(),
        child_channel.as_raw_fd(),
        report_w.as_raw_fd(),
    ];
    if let Some(hold) = &lifeline {
        fds.push(hold.read_end());
    }
    let forked = template.fork(plan, limits, &fds).map_err(|_| ForkError::Unanswered)?;
    drop((stdin_r, out_w, err_w, child_channel, report_w));
    let refused = |error: ForkError| {
        signal_group(forked.pid, Some(forked.start_time), nix::sys::signal::Signal::SIGKILL);
        exit_record(&forked.exit, None);
        Err(error)
    };
    let layers = match read_report(report_r) {
        Report::Started(layers) => layers,
        Report::PolicyRefused(index, errno) => {
            return refused(ForkError::PolicyRefused(index, std::io::Error::from_raw_os_error(errno)))
        }
        Report::ExecFailed(errno) => {
            let why = std::io::Error::from_raw_os_error(errno);
            return refused(ForkError::Failed(format!("the run's process could not take its layers: {why}")));
        }
    };
    let init = layers.filter(|l| l.init_pid > 0).and_then(|l| pidfd_open(l.init_pid));
    let fd3 = OwnedFd::from(channel);
    for fd in [&fd3, &out_r, &err_r] {
        nonblocking(fd);
    }
    Ok(Spawned {
        pid: forked.pid,
        start_time: Some(forked.start_time),
        fd3,
        stdout: out_r,
        stderr: err_r,
        pidfd: Some(forked.exit),
        layers,
        init,
        lifeline,
        by_template: true,
        address_space_extra: template.library_bytes,
    })
}
