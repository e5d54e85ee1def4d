//! The host's side of a Python template: started once, asked for one fork per run over a
//! SOCK_SEQPACKET channel (one frame and its descriptors per message). A forked child's exit is
//! the template's to reap; it writes how the child ended to the child's exit pipe, whose read end
//! comes back with `forked` (readable when the record is there, or at the template's end).

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::socket::{socketpair, AddressFamily, MsgFlags, SockFlag, SockType};

use super::frames::{child_plan, decode_reply, fork_request, ChildPlan, Reply};
use crate::os::fd_passing;
use crate::os::poll::wait_for;
use crate::python::process::limits::LimitPlan;
use crate::sandbox::exit::Exit;
use crate::sandbox::procfs::parent_and_start;
use crate::sandbox::Plan;

/// How long a template may take to import what runs need and say it is ready.
const READY_DEADLINE: Duration = Duration::from_secs(5);
/// More than any build of the template's library maps (0.7 MiB): the host adds what the
/// template says to every forked child's `RLIMIT_AS`, so a template that claims more is not
/// believed (it is refused, and runs spawn their own child).
const MAX_LIBRARY_BYTES: u64 = 16 << 20;
/// How long a fork may take to be answered.
const FORK_DEADLINE: Duration = Duration::from_secs(5);

pub struct PyTemplate {
    /// One request and its answer at a time.
    channel: Mutex<OwnedFd>,
    pid: i32,
    next_id: std::sync::atomic::AtomicU64,
    /// The address space its library's mappings take in the template, and so in every child: not
    /// the program's to use, so added to its `RLIMIT_AS` (the memory cgroup still bounds what it
    /// really uses).
    pub library_bytes: u64,
}

/// A child the template forked for a run.
pub struct Forked {
    /// In the host's PID namespace (the template's): the keeper, which leads its own session.
    pub pid: i32,
    /// Its start time while the host saw it as the template's child, for the pid-reuse guard;
    /// [`GONE`] when the template had already reaped it.
    pub start_time: u64,
    /// The exit record's pipe.
    pub exit: OwnedFd,
}

/// The start time of a child that ended before the host could look at it: no process /proc shows
/// has it, so the pid is never signalled while another process holds it.
pub const GONE: u64 = u64::MAX;

/// How long an honest template takes to write a child's exit record after reaping it.
const EXIT_RECORD_WAIT: Duration = Duration::from_millis(200);

impl PyTemplate {
    /// Starts `<interpreter> -u -I <script> <library>` (crates/python-entry) with its channel on
    /// fd 3 and waits until it is ready to fork.
    pub fn start(interpreter: &Path, script: &Path, library: &Path) -> Result<PyTemplate, String> {
        let (ours, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
            .map_err(|e| e.to_string())?;
        let theirs_raw = theirs.as_raw_fd();
        let mut cmd = Command::new(interpreter);
        cmd.args([OsString::from("-u"), "-I".into(), script.into(), library.into()])
            .env_clear()
            // The suite's panic switch (src/panic/switch.rs), from the host's own environment.
            .envs(std::env::var_os(crate::panic::switch::VARIABLE).map(|v| (crate::panic::switch::VARIABLE, v)))
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // No PDEATHSIG: it fires when the spawning *thread* ends, and a template outlives the
        // thread that started it. The template exits at its channel's end of file instead, which
        // the kernel makes when the host dies however it dies.
        // SAFETY: async-signal-safe calls only, between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // A session of its own: a terminal's Ctrl-C to the host's group (which a host may
                // catch to cancel a turn) never reaches it.
                libc::setsid();
                // The host's stderr, as `Stdio::inherit` means it: Node opens its own with
                // close-on-exec (a pipe's, at least), which the exec would close, leaving the
                // template's messages (a panic's among them) no place but a descriptor it opens later.
                libc::fcntl(2, libc::F_SETFD, 0);
                crate::sandbox::fds::place_fd(theirs_raw, 3)?;
                crate::sandbox::fds::close_from(4, true);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| format!("spawn {}: {e}", interpreter.display()))?;
        drop(theirs);
        let mut template =
            PyTemplate { channel: Mutex::new(ours), pid: child.id() as i32, next_id: 0.into(), library_bytes: 0 };
        let channel = template.channel.lock().unwrap_or_else(|p| p.into_inner());
        let ready = receive(&channel, Instant::now() + READY_DEADLINE);
        drop(channel);
        match ready? {
            (Some(Reply::Ready { library_bytes }), _, _) if library_bytes <= MAX_LIBRARY_BYTES => {
                template.library_bytes = library_bytes;
                Ok(template)
            }
            (_, text, _) => Err(format!("the python template said {text} where it says it is ready")),
        }
    }

    /// Asks for one child: `plan` the helper's (its layers, environment and bootstrap), `limits`
    /// the run's, `fds` the run's descriptors in the order the child places them (0, 1, 2, 3,
    /// the report, the lifeline).
    pub fn fork(&self, plan: &Plan, limits: &LimitPlan, fds: &[RawFd]) -> Result<Forked, String> {
        let utf8 = |a: &std::ffi::OsStr| a.to_str().map(str::to_string).ok_or("a plan argument is not UTF-8");
        let args: Vec<String> = plan.to_args().iter().map(|a| utf8(a)).collect::<Result<_, _>>()?;
        let env: Vec<[String; 2]> =
            plan.env.iter().map(|(k, v)| Ok([utf8(k)?, utf8(v)?])).collect::<Result<_, &str>>()?;
        let bootstrap = plan.argv.last().map(|a| utf8(a)).transpose()?.unwrap_or_default();
        let more = |v: u64| if v == u64::MAX { v } else { v.saturating_add(self.library_bytes) };
        let address_space = limits.address_space.map_or((u64::MAX, u64::MAX), |(soft, hard)| (more(soft), more(hard)));
        let text = child_plan(&ChildPlan {
            args: &args,
            env: &env,
            bootstrap: &bootstrap,
            limits: [
                limits.cpu.0,
                limits.cpu.1,
                address_space.0,
                address_space.1,
                limits.file_size.0,
                limits.file_size.1,
            ],
        });
        let plan_pipe = plan_pipe(text.as_bytes())?;
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut all = vec![plan_pipe.as_raw_fd()];
        all.extend_from_slice(fds);
        let request = fork_request(id, all.len());
        let channel = self.channel.lock().unwrap_or_else(|p| p.into_inner());
        fd_passing::send(channel.as_raw_fd(), request.as_bytes(), &all)
            .map_err(|e| format!("the python template's channel: {e}"))?;
        drop(plan_pipe);
        let (reply, text, mut received) = receive(&channel, Instant::now() + FORK_DEADLINE)?;
        match reply {
            Some(Reply::Forked { id: answered, pid }) if answered == id && received.len() == 1 => {
                // The host signals this pid's group later: it must be the template's own child
                // (alive or a zombie), or one the template reaped already (a child that died at
                // once), whose exit record says so; that one is signalled only while no process
                // has its pid.
                let exit = received.remove(0);
                let lied = || format!("the python template named a process it did not fork: {text}");
                let pid = i32::try_from(pid).ok().filter(|&p| p > 1).ok_or_else(lied)?;
                let ended = || wait_for(exit.as_raw_fd(), libc::POLLIN, Some(EXIT_RECORD_WAIT));
                match parent_and_start(pid) {
                    Some((parent, start_time)) if parent == self.pid => Ok(Forked { pid, start_time, exit }),
                    _ if ended() => Ok(Forked { pid, start_time: GONE, exit }),
                    _ => Err(lied()),
                }
            }
            Some(Reply::ForkFailed { id: answered, message }) if answered == id => {
                Err(format!("the python template could not fork: {message}"))
            }
            _ => Err(format!("the python template answered {text}")),
        }
    }
}

impl PyTemplate {
    fn kill(&self) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid), nix::sys::signal::Signal::SIGKILL);
    }
}

impl Drop for PyTemplate {
    fn drop(&mut self) {
        // Its channel closes with this and it would exit; SIGKILL in case it is stuck, and reap
        // it here, so a runtime's dispose returns with its template gone (it dies at once).
        self.kill();
        crate::sandbox::exit::reap(self.pid);
    }
}

/// A pipe holding `plan` whole, closed for writing: its read end, which only the forked child
/// reads (so the template never holds a run's paths, which the next run's copy of it would).
fn plan_pipe(plan: &[u8]) -> Result<OwnedFd, String> {
    let failed = |e: nix::Error| format!("the plan pipe: {e}");
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(failed)?;
    if plan.len() > 65536 {
        // Room for all of it, so writing never waits for the child (at most /proc/sys/fs/pipe-max-size).
        nix::fcntl::fcntl(&write, nix::fcntl::FcntlArg::F_SETPIPE_SZ(plan.len() as i32)).map_err(failed)?;
    }
    let mut written = 0;
    while written < plan.len() {
        written += nix::unistd::write(&write, &plan[written..]).map_err(failed)?;
    }
    Ok(read)
}

/// One message from the template by `deadline`: what it is (`None`: no frame of the table), its
/// text (cut short, for messages) and its descriptors.
fn receive(channel: &OwnedFd, deadline: Instant) -> Result<(Option<Reply>, String, Vec<OwnedFd>), String> {
    let mut fds = [libc::pollfd { fd: channel.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
    let left = deadline.saturating_duration_since(Instant::now());
    if crate::os::poll::poll(&mut fds, Some(left)) <= 0 {
        return Err("the python template did not answer in time".into());
    }
    let mut buf = vec![0u8; 4096];
    let (n, received) = fd_passing::receive(channel.as_raw_fd(), &mut buf, MsgFlags::empty())
        .map_err(|e| format!("the python template's channel: {e}"))?;
    if n == 0 {
        return Err("the python template exited".into());
    }
    let text: String = String::from_utf8_lossy(&buf[..n]).chars().take(200).collect();
    Ok((decode_reply(&buf[..n]), text, received))
}

/// How a forked child ended, from its exit pipe (`None`: not yet, or the template is gone).
pub fn read_exit(exit: &OwnedFd) -> Option<Exit> {
    let mut buf = [0u8; 512];
    let n = nix::unistd::read(exit, &mut buf).ok()?;
    let record: serde_json::Value = serde_json::from_slice(&buf[..n]).ok()?;
    let number = |k: &str| record.get(k).and_then(|v| v.as_f64());
    Some(Exit {
        code: number("code").map(|c| c as i32),
        signal: number("signal").map(|s| s as i32),
        cpu_ms: number("cpuMs").unwrap_or(f64::NAN),
        max_rss_bytes: number("maxRssBytes").unwrap_or(f64::NAN),
    })
}

/// The template's script, compiled into the addon.
const TEMPLATE_SCRIPT: &str = include_str!("../../../py/template.py");

/// A runtime's template (docs/python.md#the-template): started at load, started again at the
/// next run after it died, killed at dispose. A run that cannot fork from it is spawned instead.
pub struct RuntimeTemplate {
    interpreter: PathBuf,
    tmpdir: String,
    run_as: Option<(u32, u32)>,
    /// Runs get a root of their own (the load's probe said so): a forked child's staging
    /// directory is then only a name in that root (`Staging::in_root_only`).
    own_root: bool,
    current: Mutex<Option<Arc<PyTemplate>>>,
    disposed: AtomicBool,
}

impl RuntimeTemplate {
    /// Starts the runtime's template, or says why it cannot.
    pub fn start(
        interpreter: &Path,
        tmpdir: &str,
        run_as: Option<(u32, u32)>,
        own_root: bool,
    ) -> Result<RuntimeTemplate, String> {
        let first = start_staged(interpreter, tmpdir, run_as)?;
        Ok(RuntimeTemplate {
            interpreter: interpreter.to_path_buf(),
            tmpdir: tmpdir.to_string(),
            run_as,
            own_root,
            current: Mutex::new(Some(Arc::new(first))),
            disposed: AtomicBool::new(false),
        })
    }

    /// The live template, started again if the last one was lost (`None`: disposed, or it does
    /// not start).
    pub fn get(&self) -> Option<Arc<PyTemplate>> {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if self.disposed.load(Ordering::Acquire) {
            return None;
        }
        if current.is_none() {
            *current = start_staged(&self.interpreter, &self.tmpdir, self.run_as).ok().map(Arc::new);
        }
        current.clone()
    }

    /// `template` failed to answer: it is killed, and the next run starts another.
    pub fn lost(&self, template: &Arc<PyTemplate>) {
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if current.as_ref().is_some_and(|t| Arc::ptr_eq(t, template)) {
            *current = None;
        }
    }

    /// Whether the children it forks get a root of their own.
    pub fn own_root(&self) -> bool {
        self.own_root
    }

    /// The template's pid, while one runs.
    pub fn pid(&self) -> Option<i32> {
        self.current.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|t| t.pid)
    }

    /// Kills the template (runs forked from it are the runs' own to end) and starts no other.
    pub fn dispose(&self) {
        self.disposed.store(true, Ordering::Release);
        let last = self.current.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(template) = last {
            // Killed now even while a run's fork request still holds it; reaped by whoever
            // drops it last (here, unless a request is in flight).
            template.kill();
        }
    }
}

/// Starts a template from a staging directory of its own, removed once it has imported what it
/// needs (it never reads the directory again).
fn start_staged(interpreter: &Path, tmpdir: &str, run_as: Option<(u32, u32)>) -> Result<PyTemplate, String> {
    let mut staging = crate::python::process::staging::Staging::create(tmpdir, run_as)?;
    let started = (|| {
        staging.stage_bootstrap(&[])?;
        let script = staging.dir.join("template.py");
        std::fs::write(&script, TEMPLATE_SCRIPT).map_err(|e| e.to_string())?;
        let library = crate::sandbox::helper::python_library().ok_or(format!(
            "the Python template's library ({}) is not beside the sandbox helper: reinstall the platform package",
            crate::sandbox::helper::PYTHON_LIBRARY_NAME
        ))?;
        PyTemplate::start(interpreter, &script, &library)
    })();
    staging.remove();
    started
}
