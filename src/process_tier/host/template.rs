//! The host's side of a template (src/process_tier/child/template.rs): the one sandbox process a pool
//! starts through the helper, which never runs a program and forks a fresh sandbox process per
//! request. A fork costs a few milliseconds where a process started through the helper costs
//! tens (namespaces, root, exec, loading the addon, V8, the startup snapshot), so a run can have
//! a process of its own and still start at once.
//!
//! The template's channel carries its replies and, with each `forked`, the child's channel and
//! pidfd (SCM_RIGHTS); children are killed through their pidfds, and reaped by the template,
//! which reports how each ended. Whoever needs the template's word reads its channel, under one
//! lock; its lines are decoded by `child_frames::decode_template_reply` (src/channel/table).

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::socket::MsgFlags;

use super::process::{ProcessSpec, Reaper, SandboxProcess};
use crate::channel::child_frames::{decode_template_reply, TemplateReply};
use crate::channel::host_frames;
use crate::os::fd_passing;
use crate::panic::Lock;
use crate::sandbox::exit::Exit;
use crate::sandbox::Layers;

/// How long a template may take to build its snapshot and say it is ready.
const READY_DEADLINE: Duration = Duration::from_secs(10);
/// How long a fork may take to be answered.
const FORK_DEADLINE: Duration = Duration::from_secs(5);

/// Locks are taken one at a time (never `process` while `control` is held, or the reverse).
pub struct Template {
    /// The template's own process (started through the helper; its namespace holds every child).
    process: Mutex<SandboxProcess>,
    control: Mutex<Control>,
    pub layers: Option<Layers>,
    /// The template's channel and pidfd (owned by `process`, which lives as long as this).
    fd: RawFd,
    pidfd: Option<RawFd>,
}

/// What the template's channel said so far.
#[derive(Default)]
struct Control {
    /// Bytes past the last complete line.
    pending: Vec<u8>,
    /// Descriptors received, in order (two per `forked`).
    fds: VecDeque<OwnedFd>,
    /// Lines other than `exited`, in order.
    replies: VecDeque<TemplateReply>,
    /// How each reaped child ended, by its pid in the template's namespace.
    exits: HashMap<i32, Exit>,
    /// The channel reached its end: the template, and every child of it, is gone.
    dead: bool,
}

impl Template {
    /// Starts a template and waits until it is ready to fork.
    pub fn start(spec: &ProcessSpec) -> Result<Template, String> {
        let mode = match &spec.forge {
            Some(scenario) => vec!["isolate-forge", scenario.as_str()],
            None => vec!["isolate"],
        };
        let process = SandboxProcess::spawn(spec, 1 << 20, &mode)?;
        let template = Template {
            fd: process.channel.as_raw_fd(),
            pidfd: process.pidfd().map(AsRawFd::as_raw_fd),
            layers: process.layers,
            process: Mutex::new(process),
            control: Mutex::new(Control::default()),
        };
        let ready = template.reply(&mut template.control.locked(), Instant::now() + READY_DEADLINE);
        match ready {
            Some(TemplateReply::TemplateReady) => Ok(template),
            _ => {
                let mut process = template.process.locked();
                process.kill();
                let status = process.exit_description();
                Err(format!("failed to start the isolate's sandbox process: its template did not start ({status})"))
            }
        }
    }

    /// A fresh process forked from the template (not yet booted: see `SandboxProcess::await_boot`).
    pub fn fork(self: &std::sync::Arc<Self>, spec: &ProcessSpec, frame_cap: usize) -> Result<SandboxProcess, String> {
        let mut control = self.control.locked();
        let failed = |what: &str| format!("failed to start the isolate's sandbox process: {what}");
        if control.dead {
            return Err(failed("its template is gone"));
        }
        // SAFETY: `fd` is the template's channel, open as long as `self` (the write only borrows it).
        let mut channel = std::mem::ManuallyDrop::new(unsafe { UnixStream::from_raw_fd(self.fd) });
        if channel.write_all(host_frames::fork_frame()).is_err() {
            control.dead = true;
            return Err(failed("its template is gone"));
        }
        let line = self
            .reply(&mut control, Instant::now() + FORK_DEADLINE)
            .ok_or_else(|| failed("its template did not answer"))?;
        let ns_pid = match line {
            TemplateReply::Forked { pid } => pid as i32,
            other => {
                let errno = if let TemplateReply::ForkFailed { errno } = other { errno as i32 } else { 0 };
                let error = std::io::Error::from_raw_os_error(errno);
                return Err(failed(&format!("the template could not fork ({error})")));
            }
        };
        let (Some(channel), Some(pidfd)) = (control.fds.pop_front(), control.fds.pop_front()) else {
            return Err(failed("the template's answer came without its descriptors"));
        };
        drop(control);
        SandboxProcess::forked(spec, frame_cap, self.layers, self.clone(), ns_pid, UnixStream::from(channel), pidfd)
    }

    /// How child `ns_pid` ended, once the template reaped it (`None` while it may live). A gone
    /// template took every child with it.
    pub fn exit_of(&self, ns_pid: i32, wait: Duration) -> Option<Exit> {
        let deadline = Instant::now() + wait;
        let mut control = self.control.locked();
        loop {
            if let Some(exit) = control.exits.remove(&ns_pid) {
                return Some(exit);
            }
            if control.dead {
                return Some(Exit { code: None, signal: Some(libc::SIGKILL), cpu_ms: 0.0, max_rss_bytes: 0.0 });
            }
            if !self.read(&mut control, deadline) {
                return None;
            }
        }
    }

    /// Whether the template can still fork: its channel has not ended and its process (its
    /// keeper, as the host sees it) has not exited. Unread reports on the channel are no sign of
    /// death.
    pub fn alive(&self) -> bool {
        if self.control.locked().dead {
            return false;
        }
        let Some(pidfd) = self.pidfd else { return true };
        !crate::os::poll::wait_for(pidfd, libc::POLLIN, Some(Duration::ZERO))
    }

    /// Kills the template's namespace (every child with it) and reaps it.
    pub fn kill(&self) {
        {
            let mut process = self.process.locked();
            process.kill();
            process.reap_blocking();
        }
        self.control.locked().dead = true;
    }

    /// The next line that is not an `exited` report, reading until `deadline`.
    fn reply(&self, control: &mut Control, deadline: Instant) -> Option<TemplateReply> {
        loop {
            if let Some(line) = control.replies.pop_front() {
                return Some(line);
            }
            if control.dead || !self.read(control, deadline) {
                return None;
            }
        }
    }

    /// Reads what the channel holds (waiting for it until `deadline`); false when nothing came.
    fn read(&self, control: &mut Control, deadline: Instant) -> bool {
        let wait = deadline.saturating_duration_since(Instant::now());
        if !crate::os::poll::wait_for(self.fd, libc::POLLIN, Some(wait.min(Duration::from_secs(1)))) {
            return false;
        }
        let mut buf = [0u8; 4096];
        // Received descriptors are close-on-exec, and owned: what no reply claims is closed.
        let (n, fds) = match fd_passing::receive(self.fd, &mut buf, MsgFlags::MSG_DONTWAIT) {
            Ok(received) => received,
            Err(nix::errno::Errno::EAGAIN) => return false,
            // ECONNRESET: the template died with our request unread. Gone either way.
            Err(_) => (0, Vec::new()),
        };
        control.fds.extend(fds);
        if n == 0 {
            control.dead = true;
            return true;
        }
        control.pending.extend_from_slice(&buf[..n]);
        while let Some(end) = control.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = control.pending.drain(..=end).collect();
            let Some(reply) = decode_template_reply(&line[..line.len() - 1]) else { continue };
            match reply {
                TemplateReply::Exited { pid, code, signal } => {
                    let exit = Exit { code, signal, cpu_ms: 0.0, max_rss_bytes: 0.0 };
                    control.exits.insert(pid as i32, exit);
                }
                other => control.replies.push_back(other),
            }
        }
        true
    }
}

impl Drop for Template {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Reaper for Template {
    fn exit_of(&self, ns_pid: i32, wait: Duration) -> Option<Exit> {
        Template::exit_of(self, ns_pid, wait)
    }
}
