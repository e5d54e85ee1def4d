//! Starting a sandboxed child, once for both backends: the channel socket on fd 3, the helper's
//! layer report on `STATUS_FD`, a session of its own, nothing else inherited, the report read
//! before the caller sees the child. The helper is the executable (with the plan as its
//! arguments) or, where none is shipped, the program itself.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::fcntl::OFlag;

use super::fds::{close_from, high_fd, pidfd_open, pipe2, place_fd};
use super::report::{read_report, Report, STATUS_FD};
use super::{Layers, LIFELINE_FD};

/// How to start one child.
pub struct Launch<'a> {
    /// The executable: the sandbox helper, or the program when there is no helper.
    pub executable: &'a Path,
    pub args: Vec<OsString>,
    /// The child's whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// `None`: the host's own.
    pub cwd: Option<PathBuf>,
    /// The executable is the helper, which writes its layer report to `STATUS_FD` and watches
    /// the host's lifeline on `LIFELINE_FD`.
    pub reports: bool,
    pub stdin: Stdio,
    pub stdout: Stdio,
    pub stderr: Stdio,
    /// The host's lifeline, placed on `LIFELINE_FD` for the helper (its plan says `--lifeline`
    /// exactly when this is present); handed back in [`Launched`].
    pub lifeline: Option<super::lifeline::Hold>,
}

/// A started child. Its pid is its process group's (it leads a session).
pub struct Launched {
    pub pid: i32,
    /// Readable when the child exits.
    pub pidfd: Option<OwnedFd>,
    /// The host's end of fd 3 (blocking; the caller chooses).
    pub channel: UnixStream,
    /// What the helper reported it applied (`None`: no helper, or it could not tell).
    pub layers: Option<Layers>,
    /// The namespace's init, opened while it is certainly alive (only the helper reaps it).
    pub init: Option<OwnedFd>,
    /// Keeps the lifeline open: its owner drops it once the child is reaped.
    pub lifeline: Option<super::lifeline::Hold>,
}

/// Why a child did not start.
pub enum LaunchError {
    /// A descriptor for the child could not be made (`what` names the call).
    Setup(&'static str, std::io::Error),
    /// The executable could not be started.
    Spawn(std::io::Error),
    /// The helper could not start the program (its errno); the helper is killed and reaped.
    Exec(std::io::Error),
    /// The helper refused the run: the plan's `as_host` path at this index could not be opened
    /// with no symbolic link followed (the errno). The helper is reaped; nothing started.
    PolicyRefused(usize, std::io::Error),
}

/// Starts the child. `before_exec` runs in it after `setsid` and before the descriptors are
/// placed; it must only make async-signal-safe calls.
pub fn launch(
    launch: Launch,
    mut before_exec: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) -> Result<Launched, LaunchError> {
    // The child's ends are moved above the slots they go to (so neither move clobbers the other);
    // the originals close at once, or the host would hold them and never see EOF (of the report
    // at exec, of the channel at exit).
    let (channel, child_low) = UnixStream::pair().map_err(|e| LaunchError::Setup("socketpair", e))?;
    let child_end = high_fd(&child_low).map_err(|e| LaunchError::Setup("dup", e))?;
    drop(child_low);
    let report = match launch.reports {
        true => {
            let (r, w) = pipe2(OFlag::O_CLOEXEC).map_err(|e| LaunchError::Setup("pipe", e.into()))?;
            Some((r, high_fd(&w).map_err(|e| LaunchError::Setup("dup", e))?))
        }
        false => None,
    };
    let channel_raw = child_end.as_raw_fd();
    let report_raw = report.as_ref().map_or(-1, |(_, w)| w.as_raw_fd());
    let lifeline_raw = match (&launch.lifeline, launch.reports) {
        (Some(hold), true) => hold.read_end(),
        _ => -1,
    };
    let lifeline = launch.lifeline;
    let mut cmd = Command::new(launch.executable);
    cmd.args(&launch.args).env_clear().envs(launch.env.iter().map(|(k, v)| (k, v)));
    if let Some(cwd) = &launch.cwd {
        cmd.current_dir(cwd);
    }
    cmd.stdin(launch.stdin).stdout(launch.stdout).stderr(launch.stderr);
    // SAFETY: only async-signal-safe calls between fork and exec (`before_exec` promises as much).
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid()?;
            before_exec()?;
            place_fd(channel_raw, 3)?;
            if report_raw >= 0 {
                place_fd(report_raw, STATUS_FD)?;
            }
            if lifeline_raw >= 0 {
                place_fd(lifeline_raw, LIFELINE_FD)?;
            }
            close_from(if report_raw >= 0 { LIFELINE_FD + 1 } else { 4 }, true);
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(LaunchError::Spawn)?;
    drop(cmd); // closes the child's stdio ends held by the command
    drop(child_end);
    let pid = child.id() as i32;
    let pidfd = pidfd_open(pid);
    let layers = match report.map(|(r, w)| {
        drop(w);
        read_report(r)
    }) {
        None => None,
        Some(Report::Started(layers)) => layers,
        Some(Report::ExecFailed(errno)) => {
            // Not reaped yet, so the pid (and its group) cannot have been reused.
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            crate::sandbox::exit::reap(pid);
            return Err(LaunchError::Exec(std::io::Error::from_raw_os_error(errno)));
        }
        Some(Report::PolicyRefused(index, errno)) => {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            crate::sandbox::exit::reap(pid);
            return Err(LaunchError::PolicyRefused(index, std::io::Error::from_raw_os_error(errno)));
        }
    };
    let init = layers.filter(|l| l.init_pid > 0).and_then(|l| pidfd_open(l.init_pid));
    Ok(Launched { pid, pidfd, channel, layers, init, lifeline })
}
