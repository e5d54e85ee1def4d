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

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::socket::MsgFlags;

use super::process::{ForkCgroups, ProcessSpec, Reaper, SandboxProcess};
use crate::channel::child_frames::{decode_template_reply, TemplateReply, TEMPLATE_LINE_BYTES};
use crate::channel::host_frames;
use crate::os::fd_passing;
use crate::panic::Lock;
use crate::sandbox::exit::Exit;
use crate::sandbox::Layers;

/// How long a template may take to build its snapshot and say it is ready.
const READY_DEADLINE: Duration = Duration::from_secs(10);
/// How long a fork may take to be answered (a fork takes milliseconds; the template forks one at
/// a time, never running a program).
const FORK_DEADLINE: Duration = Duration::from_secs(2);

/// Locks are taken one at a time (never `process` while `control` is held, or the reverse).
pub struct Template {
    /// The template's own process (started through the helper; its namespace holds every child).
    process: Mutex<SandboxProcess>,
    control: Mutex<Control>,
    pub layers: Option<Layers>,
    /// The template's channel and pidfd, and what to SIGKILL to end it and every child: its
    /// namespace's init, or the template itself (owned by `process`, which lives as long as this).
    fd: RawFd,
    pidfd: Option<RawFd>,
    killer: Option<RawFd>,
}

/// What the template's channel said so far, held to its rules: one answer per question asked, in
/// lines of at most `TEMPLATE_LINE_BYTES`, descriptors only with a `forked`, exits only of children
/// it forked. A template that breaks one is killed (`Control::broken`), as a sandbox process is:
/// the host's memory and descriptor table never hold more than one answer's worth.
#[derive(Default)]
struct Control {
    /// Bytes past the last complete line (fewer than `TEMPLATE_LINE_BYTES`).
    pending: Vec<u8>,
    /// What the host is waiting for (`None`: nothing; any answer then breaks the rules).
    asked: Option<Asked>,
    /// The answer to it, once read, and the descriptors that came with it (at most two).
    answer: Option<TemplateReply>,
    fds: Vec<OwnedFd>,
    /// The last fork's id.
    last_id: u64,
    /// Children forked and not yet reported reaped, by pid in the template's namespace.
    living: HashSet<i32>,
    /// How each reaped child ended (until its process asks).
    exits: HashMap<i32, Exit>,
    /// The channel reached its end, or the template was killed: it, and every child, is gone.
    dead: bool,
    /// Which rule the template broke, when it was killed for it.
    broken: Option<&'static str>,
}

#[derive(Clone, Copy, PartialEq)]
enum Asked {
    Ready,
    Fork(u64),
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
            killer: process.init().or(process.pidfd()).map(AsRawFd::as_raw_fd),
            layers: process.layers,
            process: Mutex::new(process),
            control: Mutex::new(Control::default()),
        };
        let ready = template.ask(&mut template.control.locked(), Asked::Ready, READY_DEADLINE);
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
        // Its cgroups first: under cgroup v1 the child moves itself into them (`ForkCgroups`).
        let cgroups = ForkCgroups::new(spec);
        let tasks = cgroups.tasks();
        let mut control = self.control.locked();
        let failed = |what: &str| format!("failed to start the isolate's sandbox process: {what}");
        let gone = |control: &Control| match control.broken {
            Some(rule) => failed(&format!("its template broke the channel's rules ({rule}); it was killed")),
            None => failed("its template is gone"),
        };
        if control.dead {
            return Err(gone(&control));
        }
        control.last_id += 1;
        let id = control.last_id;
        if !self.send(&host_frames::fork_frame(id), &tasks) {
            control.dead = true;
            return Err(gone(&control));
        }
        // The template holds its own copies now.
        let self_moved = !tasks.is_empty();
        drop(tasks);
        let answer = self.ask(&mut control, Asked::Fork(id), FORK_DEADLINE);
        let fds = std::mem::take(&mut control.fds);
        let (ns_pid, [channel, pidfd]) = match (answer, <[OwnedFd; 2]>::try_from(fds)) {
            (Some(TemplateReply::Forked { pid, .. }), Ok(fds)) => (pid as i32, fds),
            (Some(TemplateReply::ForkFailed { errno, .. }), Err(fds)) if fds.is_empty() => {
                let error = std::io::Error::from_raw_os_error(errno as i32);
                return Err(failed(&format!("the template could not fork ({error})")));
            }
            (Some(_), _) => {
                self.break_off(&mut control, "its answer did not come with its descriptors");
                return Err(gone(&control));
            }
            (None, _) if control.dead => return Err(gone(&control)),
            (None, _) => {
                self.break_off(&mut control, "it did not answer a fork within 2 s");
                return Err(gone(&control));
            }
        };
        drop(control);
        SandboxProcess::forked(
            frame_cap,
            self.layers,
            self.clone(),
            ns_pid,
            UnixStream::from(channel),
            pidfd,
            cgroups,
            self_moved,
        )
    }

    /// Writes `bytes` to the template with `fds` attached to their first byte; false when the
    /// channel is gone.
    fn send(&self, bytes: &[u8], fds: &[OwnedFd]) -> bool {
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        let sent = match fd_passing::send(self.fd, bytes, &raw) {
            Ok(n) => n,
            Err(_) => return false,
        };
        // SAFETY: `fd` is the template's channel, open as long as `self` (the write only borrows it).
        let mut channel = std::mem::ManuallyDrop::new(unsafe { UnixStream::from_raw_fd(self.fd) });
        channel.write_all(&bytes[sent..]).is_ok()
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

    /// Asks for `asked` (the request is written) and reads until its answer, `deadline` from now.
    fn ask(&self, control: &mut Control, asked: Asked, deadline: Duration) -> Option<TemplateReply> {
        let deadline = Instant::now() + deadline;
        control.asked = Some(asked);
        // `read` waits a second at most: the deadline is this loop's.
        while control.answer.is_none() && !control.dead && Instant::now() < deadline {
            self.read(control, deadline);
        }
        control.asked = None;
        control.answer.take()
    }

    /// Reads what the channel holds (waiting for it until `deadline`); false when nothing came.
    fn read(&self, control: &mut Control, deadline: Instant) -> bool {
        let wait = deadline.saturating_duration_since(Instant::now());
        if !crate::os::poll::wait_for(self.fd, libc::POLLIN, Some(wait.min(Duration::from_secs(1)))) {
            return false;
        }
        let mut buf = [0u8; 4096];
        // Received descriptors are close-on-exec, and owned: what no answer claims is closed.
        let (n, fds) = match fd_passing::receive(self.fd, &mut buf, MsgFlags::MSG_DONTWAIT) {
            Ok(received) => received,
            Err(nix::errno::Errno::EAGAIN) => return false,
            // ECONNRESET: the template died with our request unread. Gone either way.
            Err(_) => (0, Vec::new()),
        };
        // A `forked`'s two come with its first byte, while its fork is asked.
        let forking = matches!(control.asked, Some(Asked::Fork(_))) && control.answer.is_none();
        if !fds.is_empty() && (!forking || control.fds.len() + fds.len() > 2) {
            self.break_off(control, "it attached descriptors no answer claims");
            return true;
        }
        control.fds.extend(fds);
        if n == 0 {
            control.dead = true;
            return true;
        }
        control.pending.extend_from_slice(&buf[..n]);
        while let Some(end) = control.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = control.pending.drain(..=end).collect();
            if let Err(rule) = take_line(control, &line[..line.len() - 1]) {
                self.break_off(control, rule);
                return true;
            }
        }
        if control.pending.len() >= TEMPLATE_LINE_BYTES {
            self.break_off(control, "a line exceeded its size cap");
        }
        true
    }

    /// Kills the template for breaking `rule`: its namespace goes, and every child with it (reaped
    /// when the template is dropped). The process lock is not needed: its init's pidfd lives as
    /// long as `self`.
    fn break_off(&self, control: &mut Control, rule: &'static str) {
        if let Some(killer) = self.killer {
            crate::sandbox::fds::kill_init(&killer);
        }
        control.broken.get_or_insert(rule);
        control.dead = true;
        control.fds.clear();
    }
}

/// Takes one line (without its newline) into `control`, or names the rule it breaks.
fn take_line(control: &mut Control, line: &[u8]) -> Result<(), &'static str> {
    if line.len() >= TEMPLATE_LINE_BYTES {
        return Err("a line exceeded its size cap");
    }
    let reply = decode_template_reply(line).ok_or("a line did not parse")?;
    let answers = match &reply {
        TemplateReply::Exited { pid, code, signal } => {
            if !control.living.remove(&(*pid as i32)) {
                return Err("it reported the exit of a process it did not fork");
            }
            control.exits.insert(*pid as i32, Exit { code: *code, signal: *signal, cpu_ms: 0.0, max_rss_bytes: 0.0 });
            return Ok(());
        }
        TemplateReply::TemplateReady => Asked::Ready,
        TemplateReply::Forked { id, .. } | TemplateReply::ForkFailed { id, .. } => Asked::Fork(*id),
    };
    if control.asked != Some(answers) || control.answer.is_some() {
        return Err("it answered a question the host did not ask");
    }
    if let TemplateReply::Forked { pid, .. } = reply {
        if !control.living.insert(pid as i32) {
            return Err("it named a process that was already living");
        }
    }
    control.answer = Some(reply);
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::{take_line, Asked, Control};

    fn asked(asked: Option<Asked>) -> Control {
        Control { asked, ..Control::default() }
    }

    #[test]
    fn the_answer_to_the_fork_asked_is_taken_and_its_child_is_known() {
        let mut control = asked(Some(Asked::Fork(7)));
        assert_eq!(take_line(&mut control, br#"{"type":"forked","id":7,"pid":12}"#), Ok(()));
        assert!(control.answer.is_some());
        assert!(control.living.contains(&12));
        assert_eq!(take_line(&mut control, br#"{"type":"exited","pid":12,"code":0,"signal":null}"#), Ok(()));
        assert_eq!(control.exits.get(&12).map(|e| e.code), Some(Some(0)));
        assert!(control.living.is_empty());
    }

    #[test]
    fn an_answer_not_asked_for_is_a_broken_rule() {
        let not_asked = Err("it answered a question the host did not ask");
        // Nothing asked; another fork's id; a second answer; readiness during a fork.
        assert_eq!(take_line(&mut asked(None), br#"{"type":"forked","id":7,"pid":12}"#), not_asked);
        assert_eq!(take_line(&mut asked(Some(Asked::Fork(8))), br#"{"type":"forked","id":7,"pid":12}"#), not_asked);
        assert_eq!(
            take_line(&mut asked(Some(Asked::Fork(8))), br#"{"type":"fork-failed","id":7,"errno":11}"#),
            not_asked
        );
        let mut twice = asked(Some(Asked::Fork(7)));
        assert_eq!(take_line(&mut twice, br#"{"type":"fork-failed","id":7,"errno":11}"#), Ok(()));
        assert_eq!(take_line(&mut twice, br#"{"type":"forked","id":7,"pid":12}"#), not_asked);
        assert_eq!(take_line(&mut asked(Some(Asked::Fork(7))), br#"{"type":"template-ready"}"#), not_asked);
    }

    #[test]
    fn exits_only_of_living_children_and_lines_that_parse_within_the_cap() {
        let mut control = asked(None);
        let phantom = br#"{"type":"exited","pid":12,"code":0,"signal":null}"#;
        assert_eq!(take_line(&mut control, phantom), Err("it reported the exit of a process it did not fork"));
        assert!(control.exits.is_empty());
        let mut reused = asked(Some(Asked::Fork(1)));
        reused.living.insert(12);
        let again = br#"{"type":"forked","id":1,"pid":12}"#;
        assert_eq!(take_line(&mut reused, again), Err("it named a process that was already living"));
        assert_eq!(take_line(&mut asked(None), b"not a frame"), Err("a line did not parse"));
        let long = format!(r#"{{"type":"template-ready","pad":"{}"}}"#, "x".repeat(2000));
        assert_eq!(take_line(&mut asked(Some(Asked::Ready)), long.as_bytes()), Err("a line exceeded its size cap"));
    }
}
