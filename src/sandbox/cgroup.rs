//! A cgroup per run with a process cap, where the host may create one (as root, or inside a
//! delegated cgroup): `pids.max` binds every process of the run, the host's root included, which
//! `RLIMIT_NPROC` never does. Found once per process; absent on hosts without access.
//!
//! Making a cgroup and removing it are the dearest of a run's cgroup work (the kernel creates and
//! removes each controller's files: measured, ~6% of the machine's time in bursts of `return 1`
//! sandbox processes), so an emptied one is kept for the next run made with the same caps
//! (`kept`), its counters read as the baseline that run's are measured from.

mod kept;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

pub use kept::remove_kept;
use kept::{Caps, Reuse};

/// The directory under which run cgroups can be made, with a working `pids` controller.
fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| find_base("pids", &[("pids.max", "1")])).as_deref()
}

/// The same for the `memory` controller (its own hierarchy under cgroup v1).
fn memory_base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| find_base("memory", &[("memory.limit_in_bytes", "16777216"), ("memory.max", "16777216")]))
        .as_deref()
}

fn candidates(controller: &str) -> Vec<PathBuf> {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else { return Vec::new() };
    let mut out = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == controller) {
            out.push(Path::new("/sys/fs/cgroup").join(controller).join(rel));
        } else if controllers.is_empty() {
            // cgroup v2: usable only where the parent hands the pids controller to its children.
            for mount in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(mount).join(rel);
                let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == controller));
                if delegated {
                    out.push(dir);
                }
            }
        }
    }
    out
}

/// The first candidate where a child cgroup can be made and one of `writes` (file, value) works.
fn find_base(controller: &str, writes: &[(&str, &str)]) -> Option<PathBuf> {
    let base = candidates(controller).into_iter().find(|dir| {
        let probe = dir.join(format!("code-runtime-native-probe-{}", std::process::id()));
        let usable = std::fs::create_dir(&probe).is_ok()
            && writes.iter().any(|(file, value)| std::fs::write(probe.join(file), value).is_ok());
        let _ = std::fs::remove_dir(&probe);
        usable
    })?;
    sweep(&base);
    Some(base)
}

/// Removes the empty run cgroups of host processes that have exited without removing them
/// (killed, or exiting while a run was live).
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("code-runtime-native-")) else { continue };
        let Some(owner) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        // SAFETY: signal 0 only checks whether the process exists.
        let gone =
            unsafe { libc::kill(owner, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// One run's cgroup; removed when dropped (after every process in it has gone) by the value
/// that owns it.
pub struct RunCgroup {
    dir: PathBuf,
    owns: bool,
    /// What it was made for and its counters when this run took it, when it may serve a later
    /// run made for the same once emptied (boxed: most runs' values hold two of these).
    reuse: Option<Box<Reuse>>,
}

/// A run's process cap and memory cap (`bytes`), each `None` where the host has no access.
/// Where both controllers share one hierarchy (cgroup v2) a process is in one cgroup of it only,
/// so joining a second would move it out of the first: both caps are then one directory, which
/// the memory value owns. `kept`: each may be one an earlier run emptied, and is kept for a later
/// one once emptied (its owner then calls [`remove_kept`] when its last run is gone).
pub fn run_cgroups(max_pids: u64, bytes: u64, kept: bool) -> (Option<RunCgroup>, Option<RunCgroup>) {
    match (base(), memory_base()) {
        (Some(pids), Some(memory)) if pids == memory => one_for_both(pids, max_pids, bytes, kept),
        _ => (RunCgroup::create(max_pids, kept), RunCgroup::with_memory_limit(bytes, kept)),
    }
}

fn one_for_both(base: &Path, max_pids: u64, bytes: u64, kept: bool) -> (Option<RunCgroup>, Option<RunCgroup>) {
    let caps = Caps::Both { pids: max_pids, memory: bytes };
    let twin = |cgroup: &RunCgroup| RunCgroup { dir: cgroup.dir.clone(), owns: false, reuse: cgroup.reuse.clone() };
    if let Some(cgroup) = kept.then(|| kept::take(caps)).flatten() {
        return (Some(twin(&cgroup)), Some(cgroup));
    }
    let Some(mut cgroup) = RunCgroup::make(base) else { return (None, None) };
    let pids = std::fs::write(cgroup.dir.join("pids.max"), max_pids.to_string()).is_ok();
    let memory = std::fs::write(cgroup.dir.join("memory.max"), bytes.to_string()).is_ok();
    match (pids, memory) {
        (true, true) => {
            cgroup.reuse = Reuse::fresh(kept, caps);
            (Some(twin(&cgroup)), Some(cgroup))
        }
        (true, false) => (Some(cgroup), None),
        (false, true) => (None, Some(cgroup)),
        (false, false) => (None, None),
    }
}

impl RunCgroup {
    /// A fresh cgroup capped at `max_pids` processes, or `None` where the host has no access.
    fn create(max_pids: u64, kept: bool) -> Option<RunCgroup> {
        RunCgroup::capped(base()?, Caps::Pids(max_pids), kept, |dir| {
            std::fs::write(dir.join("pids.max"), max_pids.to_string()).is_ok()
        })
    }

    /// A fresh cgroup whose memory (resident and swap, what the kernel charges) is capped at
    /// `bytes`: past it the kernel's OOM killer ends what is inside. `None` without access.
    fn with_memory_limit(bytes: u64, kept: bool) -> Option<RunCgroup> {
        RunCgroup::capped(memory_base()?, Caps::Memory(bytes), kept, |dir| {
            ["memory.limit_in_bytes", "memory.max"]
                .iter()
                .any(|file| std::fs::write(dir.join(file), bytes.to_string()).is_ok())
        })
    }

    /// A cgroup under `base` with `caps`: one kept for them (when `kept`), or one made now and
    /// capped by `cap` (`None`, and removed, when that fails).
    fn capped(base: &Path, caps: Caps, kept: bool, cap: impl FnOnce(&Path) -> bool) -> Option<RunCgroup> {
        if let Some(cgroup) = kept.then(|| kept::take(caps)).flatten() {
            return Some(cgroup);
        }
        let mut cgroup = RunCgroup::make(base)?;
        if !cap(&cgroup.dir) {
            return None;
        }
        cgroup.reuse = Reuse::fresh(kept, caps);
        Some(cgroup)
    }

    fn make(base: &Path) -> Option<RunCgroup> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("code-runtime-native-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        Some(RunCgroup { dir, owns: true, reuse: None })
    }

    /// Whether the kernel's OOM killer ended something in this (memory) cgroup since this run
    /// took it.
    pub fn oom_killed(&self) -> bool {
        kept::oom_kills(&self.dir) > self.reuse.as_ref().map_or(0, |r| r.baseline.oom_kills)
    }

    /// CPU time of everything that ran in this cgroup since this run took it (cgroup v2's
    /// `cpu.stat`), in µs; it survives the processes. `None` where the file is missing (v1).
    pub fn cpu_usec(&self) -> Option<u64> {
        let baseline = self.reuse.as_ref().map_or(0, |r| r.baseline.cpu_usec);
        kept::cpu_usec(&self.dir).map(|usec| usec.saturating_sub(baseline))
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether process `pid` (as the host sees it) is in this cgroup.
    pub fn holds(&self, pid: i32) -> bool {
        let pid = pid.to_string();
        std::fs::read_to_string(self.dir.join("cgroup.procs")).is_ok_and(|procs| procs.lines().any(|l| l.trim() == pid))
    }

    /// Its `tasks` file (cgroup v1), open for writing: a thread that writes `0` there moves itself
    /// (`None` under cgroup v2, which has no such file).
    pub fn open_tasks(&self) -> Option<std::os::fd::OwnedFd> {
        std::fs::OpenOptions::new().write(true).open(self.dir.join("tasks")).ok().map(Into::into)
    }

    /// Moves process `pid` (as the host sees it) into this cgroup: a process a sandboxed template
    /// forked starts in the template's. False when the kernel refuses.
    pub fn adopt(&self, pid: i32) -> bool {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).is_ok()
    }
}

impl RunCgroup {
    /// Waits (up to `deadline`) until the kernel says no process is in the cgroup any more: a
    /// process that has just died is counted until it is released. `cgroup.events` raises
    /// POLLPRI when `populated` changes (cgroup v2); without it, a short sleep stands in.
    fn wait_empty(&self, deadline: std::time::Instant) {
        use std::io::{Read, Seek};
        use std::os::fd::AsRawFd;
        let Ok(mut events) = std::fs::File::open(self.dir.join("cgroup.events")) else {
            std::thread::sleep(std::time::Duration::from_millis(5));
            return;
        };
        let mut text = String::new();
        loop {
            text.clear();
            if events.rewind().is_err() || events.read_to_string(&mut text).is_err() {
                return;
            }
            if text.lines().any(|l| l == "populated 0") {
                return;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let mut fds = [libc::pollfd { fd: events.as_raw_fd(), events: libc::POLLPRI, revents: 0 }];
            if crate::os::poll::poll(&mut fds, Some(left)) <= 0 {
                return;
            }
        }
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        if !self.owns {
            return;
        }
        // A process that has just died is counted until it is released: wait for the kernel to
        // say the cgroup is empty, then keep it for the next run or remove it (retrying briefly
        // on EBUSY all the same).
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
        if let Some(caps) = self.reuse.as_ref().map(|r| r.caps) {
            if kept::keep(&self.dir, caps, || self.wait_empty(deadline)) {
                return;
            }
        }
        loop {
            match std::fs::remove_dir(&self.dir) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && std::time::Instant::now() < deadline => {
                    self.wait_empty(deadline)
                }
                _ => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_found_outside_its_cgroup_is_moved_there() {
        let dir = std::env::temp_dir().join(format!("cgroup-holds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cgroup.procs"), "12\n345\n").unwrap();
        let cgroup = RunCgroup { dir: dir.clone(), owns: false, reuse: None };
        assert!(cgroup.holds(345));
        assert!(!cgroup.holds(34));
        // Not there: the host's own move (here, the file written as the kernel would be).
        assert!(!cgroup.holds(678) && cgroup.adopt(678) && cgroup.holds(678));
        // No `tasks` (cgroup v2, or this plain directory): the child cannot move itself.
        assert!(cgroup.open_tasks().is_none());
        std::fs::write(dir.join("tasks"), "").unwrap();
        assert!(cgroup.open_tasks().is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn one_hierarchy_puts_both_caps_in_one_directory_removed_once() {
        let base = std::env::temp_dir().join(format!("cgroup-unit-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let (pids, memory) = one_for_both(&base, 64, 1 << 20, true);
        let (pids, memory) = (pids.unwrap(), memory.unwrap());
        assert_eq!(pids.path(), memory.path());
        assert_eq!(std::fs::read_to_string(pids.path().join("pids.max")).unwrap(), "64");
        assert_eq!(std::fs::read_to_string(memory.path().join("memory.max")).unwrap(), "1048576");
        let dir = memory.path().to_path_buf();
        // Only the memory value removes it (a plain directory holds its files, so clear them first).
        std::fs::remove_file(dir.join("pids.max")).unwrap();
        std::fs::remove_file(dir.join("memory.max")).unwrap();
        drop(pids);
        assert!(dir.exists());
        drop(memory);
        assert!(!dir.exists());
        std::fs::remove_dir(&base).unwrap();
    }
}
