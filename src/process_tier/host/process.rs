//! One sandbox process for contained isolates: started through the helper
//! (`exec … -- code-runtime-native-sandbox isolate <addon> <heapMb>`), killed through its
//! namespace's init and reaped by this host; or forked by such a process, a template
//! (`super::template`), killed through its pidfd and reaped by the template.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::channel::codec::{decode_js_frame, ChildFrame};
use crate::channel::lines::LineSplitter;
use crate::channel::scan::{key_is, scan_js_line, Kind};
use crate::sandbox::cgroup::{run_cgroups, RunCgroup};
use crate::sandbox::exit::{try_reap, Exit};
use crate::sandbox::fds::{kill_init, nonblocking, signal_init};
use crate::sandbox::report::{read_until, ReadEnd, STATUS_FD};
use crate::sandbox::spawn::{launch as launch_child, Launch, LaunchError, Launched};
use crate::sandbox::{Layers, Plan, RlimitKind};

/// System files the dynamic loader reads to start the helper and load the addon.
const SYSTEM_READ_ONLY: &[&str] = &["/usr", "/lib", "/lib64", "/lib32", "/libx32", "/etc/ld.so.cache"];
/// Threads one sandbox process may have (V8's platform, the isolate, strip, channel, watchdog).
const THREAD_CAP: u64 = 64;
/// How long a new process may take to prepare its first isolate.
pub const BOOT_DEADLINE: Duration = Duration::from_secs(10);

/// What every sandbox process of one runtime shares.
#[derive(Clone)]
pub struct ProcessSpec {
    pub helper: PathBuf,
    pub addon: PathBuf,
    pub heap_mb: f64,
    /// The process's resident memory cap (the supervisor polls it; a memory cgroup, where the
    /// host can make one, enforces it a little above between polls).
    pub memory_cap: u64,
    /// The suite's forged-frame scenario: processes of this spec boot as serving ones, then send
    /// the scenario's frames instead of running the program (`isolate-forge`).
    pub forge: Option<String>,
    /// The ids a root host's processes have (`None` for other hosts).
    pub run_as: Option<(u32, u32)>,
    /// Processes a template may have alive at once (its caps hold them all until each child is
    /// moved into cgroups of its own).
    pub children: usize,
}

/// How far above `memory_cap` the cgroup's hard limit sits: the supervisor's own reading
/// normally ends the run first, with the same result.
const CGROUP_SLACK: u64 = 64 << 20;

pub struct SandboxProcess {
    /// The host's child: the helper's keeper (or the program itself without namespaces); for a
    /// forked process, the process itself as the host sees it.
    pub pid: i32,
    pidfd: Option<OwnedFd>,
    init: Option<OwnedFd>,
    /// The template that forked it, and its pid there (`None`: started through the helper).
    template: Option<(Arc<dyn Reaper>, i32)>,
    pub channel: UnixStream,
    pub layers: Option<Layers>,
    /// Runs served so far.
    pub runs: u32,
    /// Bytes read past the last complete frame.
    pub splitter: LineSplitter,
    /// The process that runs the isolates, for its resident memory (`None`: not found).
    program_pid: Option<i32>,
    reaped: Option<Exit>,
    /// The process's own pids cgroup (root hosts, where RLIMIT_NPROC never binds); removed on drop.
    cgroup: Option<RunCgroup>,
    /// Its memory cgroup, where the host can make one.
    memory: Option<RunCgroup>,
    /// It was to move itself into its cgroups (`ForkCgroups`), not yet confirmed.
    unconfirmed: bool,
    /// The seccomp allowlist holds on every thread (its first `boot-ack` says so).
    pub allowlist: bool,
    /// The host's lifeline, open while this process (started through the helper) may live; a
    /// forked process lives in its template's namespace and needs none of its own.
    _lifeline: Option<crate::sandbox::lifeline::Hold>,
}

/// `mode` is `isolate` (serve runs) or `isolate-probe` with the host's pid (the escape probe).
/// `processes`: how many processes (each with its threads) it may hold.
fn plan(
    spec: &ProcessSpec,
    mode: &[&str],
    (cgroup, memory): (Option<&Path>, Option<&Path>),
    processes: u64,
    lifeline: bool,
) -> Plan {
    let mut read_only: Vec<PathBuf> = SYSTEM_READ_ONLY.iter().map(PathBuf::from).collect();
    read_only.push(spec.helper.clone());
    read_only.push(spec.addon.clone());
    Plan {
        namespaces: true,
        tmpfs: None,
        private_proc: false,
        root: spec.helper.parent().map(Path::to_path_buf),
        cwd: Some(PathBuf::from("/")),
        network: false,
        // It reaches no file once the allowlist holds, which refuses locks too; beneath it (a
        // kernel without seccomp's TSYNC, an architecture without the allowlist) the deny-list
        // refuses them, so no descriptor it holds can lock a host file.
        no_locks: true,
        run_as: spec.run_as,
        lifeline,
        read_only,
        read_write: Vec::new(),
        as_host: Vec::new(),
        rlimits: vec![
            (RlimitKind::Core, 0, 0),
            (RlimitKind::Fsize, 0, 0),
            (RlimitKind::Nproc, THREAD_CAP * processes, THREAD_CAP * processes),
        ],
        cgroup: cgroup.map(Path::to_path_buf),
        memory_cgroup: memory.map(Path::to_path_buf),
        // The helper's own keeper and init are already small.
        slim: None,
        join: false,
        keeper_stays: false,
        env: Vec::new(),
        status_fd: STATUS_FD,
        argv: [spec.helper.clone().into_os_string(), mode[0].into(), spec.addon.clone().into_os_string()]
            .into_iter()
            .chain(std::iter::once(crate::ledger::byte_meter::number_to_string(spec.heap_mb).into()))
            .chain(mode[1..].iter().map(|a| a.into()))
            .collect(),
    }
}

fn io(what: &str, e: impl std::fmt::Display) -> String {
    format!("failed to start the isolate's sandbox process: {what}: {e}")
}

/// What forked a process (its template), which reaps it and says how it ended.
pub trait Reaper: Send + Sync {
    /// How the child `ns_pid` (its pid in the template's namespace) ended, once reaped, waiting
    /// at most `wait`.
    fn exit_of(&self, ns_pid: i32, wait: Duration) -> Option<Exit>;
}

impl SandboxProcess {
    /// A process `template` just forked (its channel and pidfd from the template), in `cgroups`:
    /// moved there by the host now, or, when it was sent their `tasks` (`self_moved`), by itself,
    /// which `await_boot` confirms.
    #[allow(clippy::too_many_arguments)]
    pub fn forked(
        frame_cap: usize,
        layers: Option<Layers>,
        template: Arc<dyn Reaper>,
        ns_pid: i32,
        channel: UnixStream,
        pidfd: OwnedFd,
        cgroups: ForkCgroups,
        self_moved: bool,
    ) -> Result<SandboxProcess, String> {
        let pid = pid_of(&pidfd).ok_or("failed to start the isolate's sandbox process: its pid is unknown")?;
        let ForkCgroups { pids: cgroup, memory } = cgroups;
        let (cgroup, memory) = if self_moved { (cgroup, memory) } else { adopt(pid, cgroup, memory) };
        let fd = OwnedFd::from(channel.try_clone().map_err(|e| io("dup", e))?);
        nonblocking(&fd);
        drop(fd);
        Ok(SandboxProcess {
            pid,
            pidfd: Some(pidfd),
            init: None,
            layers,
            template: Some((template, ns_pid)),
            channel,
            runs: 0,
            splitter: LineSplitter::new(frame_cap),
            program_pid: Some(pid),
            reaped: None,
            cgroup,
            memory,
            unconfirmed: self_moved,
            allowlist: false,
            _lifeline: None,
        })
    }

    /// Starts the escape probe against `host_pid` and returns its report line.
    pub fn probe(spec: &ProcessSpec, host_pid: i32) -> Result<String, String> {
        let pid = host_pid.to_string();
        let mut process = Self::spawn(spec, 1 << 20, &["isolate-probe", &pid])?;
        let mut text = Vec::new();
        read_until(process.channel.as_raw_fd(), Instant::now() + BOOT_DEADLINE, |bytes| {
            text.extend_from_slice(bytes);
            text.contains(&b'\n')
        });
        process.kill();
        process.reap_blocking();
        let line = String::from_utf8_lossy(&text).lines().next().unwrap_or_default().to_string();
        if line.is_empty() {
            return Err(format!("the probe reported nothing ({})", process.exit_description()));
        }
        Ok(line)
    }

    /// Starts a process through the helper (a template, or the probe: `mode`), not yet booted.
    pub fn spawn(spec: &ProcessSpec, frame_cap: usize, mode: &[&str]) -> Result<SandboxProcess, String> {
        // A template's caps hold itself and each child until the child is moved out.
        let processes = if mode[0] == "isolate-probe" { 1 } else { spec.children as u64 + 1 };
        let (cgroup, memory) = run_cgroups(
            THREAD_CAP * processes,
            spec.memory_cap.saturating_add(CGROUP_SLACK).saturating_mul(processes),
            false,
        );
        let lifeline = crate::sandbox::lifeline::hold();
        let launch = Launch {
            executable: &spec.helper,
            args: plan(
                spec,
                mode,
                (cgroup.as_ref().map(RunCgroup::path), memory.as_ref().map(RunCgroup::path)),
                processes,
                lifeline.is_some(),
            )
            .to_args(),
            env: Vec::new(),
            cwd: Some(PathBuf::from("/")),
            reports: true,
            stdin: Stdio::null(),
            stdout: Stdio::null(),
            stderr: Stdio::null(),
            lifeline,
        };
        let Launched { pid, pidfd, channel, layers, init, lifeline } =
            launch_child(launch, || Ok(())).map_err(|e| match e {
                LaunchError::Setup(what, e) => io(what, e),
                LaunchError::Spawn(e) => io(&format!("spawn {}", spec.helper.display()), e),
                LaunchError::Exec(e) => io("exec", e),
                // A sandbox process's plan grants no policy path: never reported.
                LaunchError::PolicyRefused(_, e) => io("policy", e),
            })?;
        super::trace!("start: spawned {pid}, report {layers:?}");
        let fd = OwnedFd::from(channel.try_clone().map_err(|e| io("dup", e))?);
        nonblocking(&fd);
        drop(fd);
        let program_pid = match layers.filter(|l| l.init_pid > 0) {
            Some(l) => first_child(l.init_pid),
            None => Some(pid),
        };
        Ok(SandboxProcess {
            pid,
            pidfd,
            init,
            template: None,
            channel,
            layers,
            runs: 0,
            splitter: LineSplitter::new(frame_cap),
            program_pid,
            reaped: None,
            cgroup,
            memory,
            unconfirmed: false,
            allowlist: false,
            _lifeline: lifeline,
        })
    }

    /// Waits for the `boot-ack` that says an unused isolate is ready.
    pub fn await_boot(&mut self, deadline: Instant) -> Result<(), String> {
        // Exactly one frame may come before the run: boot-ack (with the allowlist's state).
        let mut outcome: Option<Result<(), String>> = None;
        let (splitter, allowlist) = (&mut self.splitter, &mut self.allowlist);
        let end = read_until(self.channel.as_raw_fd(), deadline, |bytes| {
            let (mut acked, mut other) = (false, false);
            let pushed = splitter.push(bytes, |line| match decode_js_frame(line, 0) {
                Some(ChildFrame::BootAck) => {
                    acked = true;
                    *allowlist |= scan_js_line(line, 0).is_some_and(|members| {
                        members.iter().any(|m| key_is(&m.key, "seccompAllowlist") && m.kind == Kind::Bool(true))
                    });
                }
                _ => other = true,
            });
            outcome = match (pushed, other, acked) {
                (Err(_), _, _) => Some(Err("its first frame was too large".into())),
                (_, true, _) => Some(Err("it sent a frame before it was ready".into())),
                (_, _, true) => Some(Ok(())),
                _ => None,
            };
            outcome.is_some()
        });
        if self.unconfirmed && matches!(end, ReadEnd::Enough) {
            self.confirm_cgroups();
        }
        match end {
            ReadEnd::Enough => outcome.unwrap_or(Ok(())),
            ReadEnd::Eof => Err(self.exit_description()),
            ReadEnd::TimedOut => Err("no isolate was ready in time".into()),
            ReadEnd::Failed(errno) => Err(std::io::Error::from_raw_os_error(errno).to_string()),
        }
    }

    /// Checks that a process that was to move itself into its cgroups (before its first frame,
    /// which has come) is in each; the host moves it into any it is not in, and drops any the
    /// kernel refuses it, so no run starts outside a cap the host could give it.
    fn confirm_cgroups(&mut self) {
        self.unconfirmed = false;
        let Some(pid) = self.program_pid else { return };
        let confirm = |c: RunCgroup| (c.holds(pid) || c.adopt(pid)).then_some(c);
        self.memory = self.memory.take().and_then(confirm);
        self.cgroup = self.cgroup.take().and_then(confirm);
    }

    /// An idle process has nothing to say: bytes or a hang-up on its channel, or an exit on its
    /// pidfd, mean it is dying (killed from outside) or broke the protocol.
    pub fn idle_and_alive(&self) -> bool {
        let mut fds =
            vec![libc::pollfd { fd: self.channel.as_raw_fd(), events: libc::POLLIN | libc::POLLRDHUP, revents: 0 }];
        if let Some(pidfd) = &self.pidfd {
            fds.push(libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 });
        }
        // A zero timeout only samples them.
        crate::os::poll::poll(&mut fds, Some(Duration::ZERO)) == 0
    }

    /// The pidfd, readable once the process has exited.
    pub fn pidfd(&self) -> Option<&OwnedFd> {
        self.pidfd.as_ref()
    }

    /// Its namespace's init (started through the helper, with a PID namespace).
    pub fn init(&self) -> Option<&OwnedFd> {
        self.init.as_ref()
    }

    /// Resident memory of the isolate process in bytes (0 when it cannot be read).
    pub fn rss_bytes(&self) -> u64 {
        let Some(pid) = self.program_pid else { return 0 };
        let Ok(statm) = std::fs::read_to_string(format!("/proc/{pid}/statm")) else { return 0 };
        let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        // SAFETY: sysconf is always safe.
        pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64
    }

    /// Whether a memory cgroup caps it (besides the supervisor's own reading).
    pub fn memory_cgroup(&self) -> bool {
        self.memory.is_some()
    }

    /// Whether the kernel's OOM killer ended it at its memory cgroup's limit.
    pub fn oom_killed(&self) -> bool {
        self.memory.as_ref().is_some_and(RunCgroup::oom_killed)
    }

    /// CPU time of the isolate process so far (all its threads), in ms; 0 when it cannot be read.
    /// From its cgroup where it has one (the kernel keeps that count after the process died, so a
    /// process V8's fatal path ended still reports what it computed), else from /proc.
    pub fn cpu_ms(&self) -> f64 {
        let cgroup =
            [self.memory.as_ref(), self.cgroup.as_ref()].into_iter().flatten().filter_map(RunCgroup::cpu_usec).max();
        match cgroup {
            Some(usec) => usec as f64 / 1000.0,
            None => self.program_pid.and_then(crate::sandbox::procfs::cpu_ms).unwrap_or(0.0),
        }
    }

    /// Rings the process's doorbell (SIGTERM, forwarded by its init, or through a forked
    /// process's pidfd): it reads the channel now, even while its isolate computes and reads
    /// nothing (an abort frame waits there).
    pub fn ring(&self) {
        match (&self.init, &self.template, &self.pidfd) {
            (Some(init), _, _) => signal_init(init, libc::SIGTERM),
            (None, Some(_), Some(pidfd)) => signal_init(pidfd, libc::SIGTERM),
            _ if self.reaped.is_none() => {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), nix::sys::signal::Signal::SIGTERM);
            }
            _ => {}
        }
    }

    /// SIGKILL: the whole namespace through its init, a forked process through its pidfd, or
    /// the process itself.
    pub fn kill(&self) {
        match (&self.init, &self.template, &self.pidfd) {
            (Some(init), _, _) => kill_init(init),
            (None, Some(_), Some(pidfd)) => kill_init(pidfd),
            _ => {
                if self.reaped.is_none() {
                    let _ =
                        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), nix::sys::signal::Signal::SIGKILL);
                }
            }
        }
    }

    /// Reaps the process if it has exited (a forked one: once its template reports it reaped).
    pub fn try_reap(&mut self) -> Option<&Exit> {
        if self.reaped.is_none() {
            self.reaped = match &self.template {
                Some((template, ns_pid)) => template.exit_of(*ns_pid, Duration::ZERO),
                None => try_reap(self.pid),
            };
        }
        self.reaped.as_ref()
    }

    /// Kills and waits until the process is reaped (milliseconds after SIGKILL).
    pub fn reap_blocking(&mut self) -> Option<&Exit> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.try_reap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.reaped.as_ref()
    }

    /// `code=<code>, signal=<signal>` of the process once it is reaped, and what a code the
    /// helper or a sandbox process ends with when it cannot do its job means.
    pub fn exit_description(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_millis(200);
        while self.try_reap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let Some(exit) = self.reaped.as_ref() else { return "code=null, signal=null".into() };
        match exit.code.and_then(crate::sandbox::abi::meaning) {
            Some(meaning) => format!("{}: {meaning}", exit.describe()),
            None => exit.describe(),
        }
    }
}

impl Drop for SandboxProcess {
    fn drop(&mut self) {
        // A forked process is killed through its own pidfd whatever its template said of it: a
        // template that lied about its exit, or died without a namespace to take it along, would
        // leave it running (a pidfd names this process alone, never a recycled pid).
        let unreaped = self.reaped.is_none();
        if unreaped || self.template.is_some() {
            self.kill();
        }
        if unreaped {
            self.reap_blocking();
        }
        // Only once its processes are gone can the cgroups go.
        drop(self.cgroup.take());
        drop(self.memory.take());
    }
}

/// A forked process's cgroups, made (or taken, src/sandbox/cgroup/kept.rs) before its template
/// forks it, so that under cgroup v1 its one thread moves itself into them before it makes
/// another: it writes `0` to each `tasks` the host opened and sent with the `fork` frame. A move
/// that names another process takes the kernel's `cgroup_threadgroup_rwsem` for writing, which
/// waits for an RCU grace period once none was taken for a while: measured, ~9 ms on the path of
/// the second of two runs after a pause (16 ms against 5). Cgroup v2 has no `tasks`: the host
/// moves the process there, as before.
pub struct ForkCgroups {
    pids: Option<RunCgroup>,
    memory: Option<RunCgroup>,
}

impl ForkCgroups {
    pub fn new(spec: &ProcessSpec) -> ForkCgroups {
        let (pids, memory) = run_cgroups(THREAD_CAP, spec.memory_cap.saturating_add(CGROUP_SLACK), true);
        ForkCgroups { pids, memory }
    }

    /// Each directory's `tasks`, open for writing, when every one has it (cgroup v1); else none.
    pub fn tasks(&self) -> Vec<OwnedFd> {
        let all: Option<Vec<OwnedFd>> =
            [&self.pids, &self.memory].into_iter().flatten().map(RunCgroup::open_tasks).collect();
        all.unwrap_or_default()
    }
}

/// Moves `pid` into its cgroups, once into each directory (under cgroup v2 both caps are one):
/// those the kernel refused are dropped.
fn adopt(pid: i32, cgroup: Option<RunCgroup>, memory: Option<RunCgroup>) -> (Option<RunCgroup>, Option<RunCgroup>) {
    let memory = memory.filter(|m| m.adopt(pid));
    let in_memory = |c: &RunCgroup| memory.as_ref().is_some_and(|m| m.path() == c.path());
    (cgroup.filter(|c| in_memory(c) || c.adopt(pid)), memory)
}

/// The pid a pidfd refers to, as this host sees it (its fdinfo's `Pid:`).
fn pid_of(pidfd: &OwnedFd) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd())).ok()?;
    info.lines().find_map(|l| l.strip_prefix("Pid:")).and_then(|p| p.trim().parse().ok()).filter(|p: &i32| *p > 0)
}

/// The first child of `pid` as the host's `/proc` shows it (init's only child is the program).
fn first_child(pid: i32) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        if let Some(child) = children.split_whitespace().next().and_then(|c| c.parse().ok()) {
            return Some(child);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The addon file and the helper beside it: both are needed to contain isolates.
pub fn locate() -> Option<(PathBuf, PathBuf)> {
    let helper = crate::sandbox::helper::path()?.to_path_buf();
    let addon = crate::sandbox::helper::own_file()?;
    is_addon(&addon).then_some((helper, addon))
}

fn is_addon(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "node")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::{ProcessSpec, Reaper, SandboxProcess};
    use crate::sandbox::exit::{try_reap, Exit};

    /// A template that says every child of it has ended.
    struct Liar;

    impl Reaper for Liar {
        fn exit_of(&self, _ns_pid: i32, _wait: Duration) -> Option<Exit> {
            Some(Exit { code: Some(0), signal: None, cpu_ms: 0.0, max_rss_bytes: 0.0 })
        }
    }

    #[test]
    fn a_forked_process_its_template_calls_ended_is_still_killed_when_dropped() {
        // SAFETY: the child only waits for signals.
        let pid = match unsafe { libc::fork() } {
            0 => loop {
                // SAFETY: pause only waits.
                unsafe { libc::pause() };
            },
            pid => pid,
        };
        let pidfd = crate::sandbox::fds::pidfd_open(pid).expect("a pidfd for the child");
        let (ours, _theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
        let spec = ProcessSpec {
            helper: "/nonexistent/helper".into(),
            addon: "/nonexistent/addon.node".into(),
            heap_mb: 64.0,
            memory_cap: 64 << 20,
            forge: None,
            run_as: None,
            children: 1,
        };
        let mut process = SandboxProcess::forked(
            1 << 20,
            None,
            Arc::new(Liar),
            7,
            ours,
            pidfd,
            super::ForkCgroups::new(&spec),
            false,
        )
        .expect("the process");
        assert!(process.try_reap().is_some(), "the template's word is taken");
        drop(process);
        let deadline = Instant::now() + Duration::from_secs(5);
        let exit = loop {
            if let Some(exit) = try_reap(pid) {
                break Some(exit);
            }
            if Instant::now() > deadline {
                // SAFETY: our own child, not yet reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                try_reap(pid);
                break None;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert_eq!(exit.map(|e| e.signal), Some(Some(libc::SIGKILL)), "the child outlived its process");
    }
}
