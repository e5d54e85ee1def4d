//! A run's child forked by the Python template (docs/python.md#the-template) instead of spawned
//! through the helper: the same plan, descriptors and report, so the run cannot tell the two
//! apart, and only the interpreter's start-up is skipped.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use nix::fcntl::OFlag;

use crate::python::process::limits::LimitPlan;
use crate::python::process::spawn::{SpawnError, Spawned};
use crate::python::template::host::PyTemplate;
use crate::sandbox::fds::{nonblocking, pidfd_open, pipe2};
use crate::sandbox::procfs::start_time;
use crate::sandbox::report::{read_report, Report};

/// Forks the run's child from `template` with the helper's `args`; `stdin`, `stdout` and
/// `stderr` are the child's ends (the host keeps the others).
pub fn spawn_forked(
    template: &PyTemplate,
    args: &[OsString],
    limits: &LimitPlan,
    stdio: (OwnedFd, OwnedFd, OwnedFd),
    (out_r, err_r): (OwnedFd, OwnedFd),
    lifeline: Option<crate::sandbox::lifeline::Hold>,
) -> Result<Spawned, SpawnError> {
    let sys = |what: &str, e: std::io::Error| SpawnError::Failed(format!("{what}: {e}"));
    let (channel, child_channel) = UnixStream::pair().map_err(|e| sys("socketpair", e))?;
    let (report_r, report_w) = pipe2(OFlag::O_CLOEXEC).map_err(|e| sys("pipe", e.into()))?;
    let mut fds = vec![
        stdio.0.as_raw_fd(),
        stdio.1.as_raw_fd(),
        stdio.2.as_raw_fd(),
        child_channel.as_raw_fd(),
        report_w.as_raw_fd(),
    ];
    if let Some(hold) = &lifeline {
        fds.push(hold.read_end());
    }
    let forked = template.fork(args, limits, &fds).map_err(SpawnError::Failed)?;
    drop((stdio, child_channel, report_w));
    let layers = match read_report(report_r) {
        Report::Started(layers) => layers,
        Report::ExecFailed(errno) | Report::PolicyRefused(_, errno) => {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(forked.pid), nix::sys::signal::Signal::SIGKILL);
            crate::python::process::spawn::exit_record(&forked.exit, None);
            return Err(SpawnError::Failed(format!("the run's layers failed (errno {errno})")));
        }
    };
    let init = layers.filter(|l| l.init_pid > 0).and_then(|l| pidfd_open(l.init_pid));
    let fd3 = OwnedFd::from(channel);
    for fd in [&fd3, &out_r, &err_r] {
        nonblocking(fd);
    }
    Ok(Spawned {
        pid: forked.pid,
        start_time: start_time(forked.pid),
        fd3,
        stdout: out_r,
        stderr: err_r,
        pidfd: Some(forked.exit),
        layers,
        init,
        lifeline,
        by_template: true,
    })
}
