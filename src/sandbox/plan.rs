//! What the host asks the sandbox helper to do, as the helper's argument vector. Compiled into
//! both the addon (which writes it) and the helper executable (which reads it); the host is the
//! only writer, so parsing is strict and fails closed.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// Where the helper finds the host's lifeline (`--lifeline`): the read end of a pipe whose write
/// end only the host holds, so it reads end-of-file exactly when the host has died.
pub const LIFELINE_FD: i32 = 5;

/// One resource limit for the program process: `(resource, soft, hard)`.
pub type Rlimit = (RlimitKind, u64, u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RlimitKind {
    Core,
    Fsize,
    Nproc,
    Nofile,
}

impl RlimitKind {
    fn name(self) -> &'static str {
        match self {
            RlimitKind::Core => "core",
            RlimitKind::Fsize => "fsize",
            RlimitKind::Nproc => "nproc",
            RlimitKind::Nofile => "nofile",
        }
    }

    #[allow(dead_code)] // the helper's half (crates/sandbox-helper)
    fn parse(name: &str) -> Option<Self> {
        [RlimitKind::Core, RlimitKind::Fsize, RlimitKind::Nproc, RlimitKind::Nofile]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// The helper's instructions for one child.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Try user, PID, mount, network and IPC namespaces (the run goes on without them if the
    /// kernel refuses, and the report says so).
    pub namespaces: bool,
    /// A size-capped tmpfs mounted here inside the mount namespace (the directory must exist),
    /// with an inode cap that fits its size.
    pub tmpfs: Option<(PathBuf, u64)>,
    /// Build the program's own root: a fresh tmpfs mounted on this (existing, host-chosen)
    /// directory inside the mount namespace, holding bind mounts of exactly the `read_only` and
    /// `read_write` paths at their own paths, then `pivot_root` into it. Nothing else of the
    /// host's tree stays reachable.
    pub root: Option<PathBuf>,
    /// The program's working directory (inside its root); `None`: the helper's own.
    pub cwd: Option<PathBuf>,
    /// Keep the host's network: no network namespace and no Landlock TCP rules (a file policy of
    /// `danger-full-access`).
    pub network: bool,
    /// Refuse the program file locks (`flock`, and `fcntl`'s record locks, open file description
    /// locks and leases) with EPERM: a lock is on the inode, so one taken on a file the run may only
    /// read would still hold off the host's own processes (a `read-only` file policy).
    pub no_locks: bool,
    /// The ids outside the namespaces the program runs as when the host is root (a root host's
    /// own uid is never lent to a run); ignored for other hosts, whose runs have their own uid.
    pub run_as: Option<(u32, u32)>,
    /// The host's lifeline is on `LIFELINE_FD`: when it reads end-of-file the host has died, and
    /// the helper kills the run.
    pub lifeline: bool,
    /// Read-only `/proc` for the program, granted only when the helper mounted a fresh one that
    /// shows nothing but the run's own PID namespace.
    pub private_proc: bool,
    /// Landlock: read and execute beneath these paths.
    pub read_only: Vec<PathBuf>,
    /// Landlock: read, write, create and remove beneath these paths.
    pub read_write: Vec<PathBuf>,
    /// Granted paths that are the host's own files (a file policy's workspace and working
    /// directory): each is opened once with no symbolic link followed anywhere in it
    /// (src/sandbox/exact.rs), that descriptor is what is mounted (and, under a root host,
    /// idmapped, so the run reaches it as its owner and nowhere else), and a path that cannot be
    /// opened so refuses the run (`policy-refused`) rather than binding what a link leads to.
    pub as_host: Vec<PathBuf>,
    /// Limits set on the program process just before it starts.
    pub rlimits: Vec<Rlimit>,
    /// A cgroup directory the helper moves itself into before anything else (process and
    /// memory caps a host with cgroup access set up).
    pub cgroup: Option<PathBuf>,
    /// A memory cgroup the helper joins as well (cgroup v1 keeps memory in its own hierarchy).
    pub memory_cgroup: Option<PathBuf>,
    /// The program's whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// The helper executable a forked interpreter's keeper and init replace themselves with once
    /// they have forked (`Ending::Return`; src/sandbox/harden/enter.rs#slim): their exits, on
    /// every run's way to its result, then tear down a small process, not a copy of the
    /// interpreter. Ignored by the helper itself, whose keeper and init are already that small.
    pub slim: Option<PathBuf>,
    /// With `slim` the helper's static build: init is made without a copy of the interpreter and
    /// execs it at once, and the keeper joins init's namespaces to fork the program
    /// (src/sandbox/harden/joined.rs). Ignored by the helper itself.
    pub join: bool,
    /// With `join`: the keeper keeps its role as the copy of the interpreter it is rather than
    /// exec the helper, for a child booted on its run's own path, where that exec would come
    /// before the run's result, not while a spare waits.
    pub keeper_stays: bool,
    /// The descriptor the helper writes its layer report to (closed before the program starts).
    pub status_fd: i32,
    /// The program and its arguments.
    pub argv: Vec<OsString>,
}

fn path_arg(p: &std::path::Path) -> OsString {
    p.as_os_str().to_os_string()
}

impl Plan {
    /// `exec [options] -- argv…`, the arguments after the helper's own name.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec!["exec".into()];
        let mut push = |parts: &[OsString]| out.extend(parts.iter().cloned());
        if self.namespaces {
            push(&["--ns".into()]);
        }
        if let Some((dir, bytes)) = &self.tmpfs {
            push(&["--tmpfs".into(), path_arg(dir), bytes.to_string().into()]);
        }
        if self.private_proc {
            push(&["--proc".into()]);
        }
        if let Some(dir) = &self.root {
            push(&["--root".into(), path_arg(dir)]);
        }
        if let Some(dir) = &self.cwd {
            push(&["--cwd".into(), path_arg(dir)]);
        }
        if self.network {
            push(&["--net".into()]);
        }
        if self.no_locks {
            push(&["--no-locks".into()]);
        }
        if let Some((uid, gid)) = self.run_as {
            push(&["--as".into(), uid.to_string().into(), gid.to_string().into()]);
        }
        if self.lifeline {
            push(&["--lifeline".into()]);
        }
        for p in &self.read_only {
            push(&["--ro".into(), path_arg(p)]);
        }
        for p in &self.read_write {
            push(&["--rw".into(), path_arg(p)]);
        }
        for p in &self.as_host {
            push(&["--as-host".into(), path_arg(p)]);
        }
        for (kind, soft, hard) in &self.rlimits {
            push(&["--rlimit".into(), kind.name().into(), soft.to_string().into(), hard.to_string().into()]);
        }
        if let Some(dir) = &self.cgroup {
            push(&["--cgroup".into(), path_arg(dir)]);
        }
        if let Some(dir) = &self.memory_cgroup {
            push(&["--memory-cgroup".into(), path_arg(dir)]);
        }
        if let Some(helper) = &self.slim {
            push(&["--slim".into(), path_arg(helper)]);
        }
        if self.join {
            push(&["--join".into()]);
        }
        if self.keeper_stays {
            push(&["--keeper-stays".into()]);
        }
        for (k, v) in &self.env {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(v);
            push(&["--env".into(), kv]);
        }
        push(&["--status".into(), self.status_fd.to_string().into(), "--".into()]);
        out.extend(self.argv.iter().cloned());
        out
    }

    /// The inverse of `to_args`; `None` for anything it would not have written.
    #[allow(dead_code)] // the helper's half
    pub fn from_args(args: &[OsString]) -> Option<Plan> {
        let mut it = args.iter();
        if it.next()?.as_bytes() != b"exec" {
            return None;
        }
        let mut plan = Plan { status_fd: -1, ..Plan::default() };
        let text = |s: &OsString| std::str::from_utf8(s.as_bytes()).ok().map(str::to_string);
        let number = |s: &OsString| text(s)?.parse::<u64>().ok();
        loop {
            let flag = it.next()?;
            match flag.as_bytes() {
                b"--ns" => plan.namespaces = true,
                b"--tmpfs" => plan.tmpfs = Some((PathBuf::from(it.next()?), number(it.next()?)?)),
                b"--proc" => plan.private_proc = true,
                b"--root" => plan.root = Some(PathBuf::from(it.next()?)),
                b"--cwd" => plan.cwd = Some(PathBuf::from(it.next()?)),
                b"--net" => plan.network = true,
                b"--no-locks" => plan.no_locks = true,
                b"--as" => {
                    let uid = u32::try_from(number(it.next()?)?).ok()?;
                    plan.run_as = Some((uid, u32::try_from(number(it.next()?)?).ok()?));
                }
                b"--lifeline" => plan.lifeline = true,
                b"--ro" => plan.read_only.push(PathBuf::from(it.next()?)),
                b"--rw" => plan.read_write.push(PathBuf::from(it.next()?)),
                b"--as-host" => plan.as_host.push(PathBuf::from(it.next()?)),
                b"--rlimit" => {
                    let kind = RlimitKind::parse(&text(it.next()?)?)?;
                    plan.rlimits.push((kind, number(it.next()?)?, number(it.next()?)?));
                }
                b"--cgroup" => plan.cgroup = Some(PathBuf::from(it.next()?)),
                b"--memory-cgroup" => plan.memory_cgroup = Some(PathBuf::from(it.next()?)),
                b"--slim" => plan.slim = Some(PathBuf::from(it.next()?)),
                b"--join" => plan.join = true,
                b"--keeper-stays" => plan.keeper_stays = true,
                b"--env" => {
                    let kv = it.next()?.as_bytes();
                    let eq = kv.iter().position(|b| *b == b'=')?;
                    plan.env.push((OsString::from_vec(kv[..eq].to_vec()), OsString::from_vec(kv[eq + 1..].to_vec())));
                }
                b"--status" => plan.status_fd = text(it.next()?)?.parse().ok()?,
                b"--" => break,
                _ => return None,
            }
        }
        plan.argv = it.cloned().collect();
        (!plan.argv.is_empty()).then_some(plan)
    }
}

/// The line the helper writes when the program could not be started: the errno's number.
#[allow(dead_code)] // the helper's half
pub fn exec_error_line(errno: i32) -> String {
    format!("exec-error {errno}\n")
}

/// The errno of an `exec-error` line.
pub fn parse_exec_error(line: &str) -> Option<i32> {
    line.strip_prefix("exec-error ")?.trim_end().parse().ok()
}

/// The line the helper writes when the plan's `as_host` path at `index` could not be opened
/// without following a symbolic link (or is not there): the run is refused, nothing started.
#[allow(dead_code)] // the helper's half
pub fn policy_refused_line(index: usize, errno: i32) -> String {
    format!("policy-refused {index} {errno}\n")
}

/// The `as_host` index and errno of a `policy-refused` line.
pub fn parse_policy_refused(line: &str) -> Option<(usize, i32)> {
    let (index, errno) = line.strip_prefix("policy-refused ")?.trim_end().split_once(' ')?;
    Some((index.parse().ok()?, errno.parse().ok()?))
}

/// The helper's one-line layer report: what it could apply, and the pid (in the host's PID
/// namespace) of the process that is the sandbox's init, when it made one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layers {
    pub namespaces: bool,
    /// The Landlock ABI the kernel enforced for the program (0: none).
    pub landlock: u32,
    pub seccomp: bool,
    /// The process cap came from a cgroup (`pids.max`) or from `RLIMIT_NPROC` in a user namespace.
    pub process_cap: bool,
    /// The program runs in a root of its own (a tmpfs with bind mounts, after `pivot_root`).
    pub root: bool,
    /// The program's uid as the host's kernel sees it (outside every namespace).
    pub uid: u32,
    pub init_pid: i32,
}

impl Layers {
    #[allow(dead_code)] // the helper's half
    pub fn line(&self) -> String {
        format!(
            "layers namespaces={} landlock={} seccomp={} process_cap={} root={} uid={} init={}\n",
            self.namespaces as u8,
            self.landlock,
            self.seccomp as u8,
            self.process_cap as u8,
            self.root as u8,
            self.uid,
            self.init_pid
        )
    }

    pub fn parse(line: &str) -> Option<Layers> {
        let mut parts = line.trim_end_matches('\n').split(' ');
        if parts.next()? != "layers" {
            return None;
        }
        let mut layers = Layers::default();
        for part in parts {
            let (key, value) = part.split_once('=')?;
            let n: i64 = value.parse().ok()?;
            match key {
                "namespaces" => layers.namespaces = n == 1,
                "landlock" => layers.landlock = u32::try_from(n).ok()?,
                "seccomp" => layers.seccomp = n == 1,
                "process_cap" => layers.process_cap = n == 1,
                "root" => layers.root = n == 1,
                "uid" => layers.uid = u32::try_from(n).ok()?,
                "init" => layers.init_pid = i32::try_from(n).ok()?,
                _ => return None,
            }
        }
        Some(layers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let plan = Plan {
            namespaces: true,
            tmpfs: Some(("/tmp/x/tmp".into(), 1 << 26)),
            private_proc: true,
            root: Some("/tmp".into()),
            cwd: Some("/tmp/x/tmp".into()),
            network: true,
            no_locks: true,
            run_as: Some((65534, 65534)),
            lifeline: true,
            read_only: vec!["/usr".into(), "/tmp/x".into()],
            read_write: vec!["/tmp/x/tmp".into()],
            as_host: vec!["/w".into()],
            rlimits: vec![(RlimitKind::Nproc, 1, 2), (RlimitKind::Fsize, 5, 5), (RlimitKind::Nofile, 64, 64)],
            cgroup: Some("/sys/fs/cgroup/pids/crn-1".into()),
            memory_cgroup: Some("/sys/fs/cgroup/memory/crn-1".into()),
            slim: Some("/opt/crn/code-runtime-native-sandbox".into()),
            join: true,
            keeper_stays: true,
            env: vec![("TMPDIR".into(), "/tmp/x/tmp".into())],
            status_fd: 4,
            argv: vec!["/usr/bin/python3".into(), "-u".into(), "--".into()],
        };
        assert_eq!(Plan::from_args(&plan.to_args()), Some(plan));
        assert_eq!(Plan::from_args(&["exec".into(), "--bogus".into()]), None);
        assert_eq!(Plan::from_args(&["exec".into(), "--status".into(), "4".into(), "--".into()]), None);
    }

    #[test]
    fn layer_lines() {
        let layers = Layers {
            namespaces: true,
            landlock: 7,
            seccomp: true,
            process_cap: false,
            root: true,
            uid: 65534,
            init_pid: 42,
        };
        assert_eq!(Layers::parse(&layers.line()), Some(layers));
        assert_eq!(Layers::parse("layers bogus=1"), None);
        assert_eq!(parse_policy_refused(&policy_refused_line(2, libc::ELOOP)), Some((2, libc::ELOOP)));
        assert_eq!(parse_policy_refused("policy-refused x"), None);
    }
}
