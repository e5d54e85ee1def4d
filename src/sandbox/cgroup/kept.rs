//! Emptied run cgroups kept for the next run made with the same caps (`super`'s module doc).
//!
//! A kept cgroup carries nothing of its last run into the next: it is kept only once no process
//! is in it, the memory still charged to it (kernel objects freed late, pages of files its run
//! read, segments of an IPC namespace not yet torn down) is at most [`LEFTOVER`], and its caps
//! read back as the host wrote them; its counters that outlive processes (OOM kills, CPU time)
//! become the next run's baseline. Otherwise it is removed, as every cgroup was before.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::RunCgroup;
use crate::panic::Lock;

/// What a cgroup was made for: the caps the host wrote into it (under `base()`, `memory_base()`,
/// or both where they are one hierarchy). Only a run made for the same takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Caps {
    Pids(u64),
    Memory(u64),
    Both { pids: u64, memory: u64 },
}

/// A cgroup's counters that outlive its processes: a run's own are counted from these.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counters {
    pub oom_kills: u64,
    pub cpu_usec: u64,
}

/// A cgroup that may be kept: what it was made for, and its counters when its run took it.
#[derive(Clone, Debug)]
pub struct Reuse {
    pub caps: Caps,
    pub baseline: Counters,
}

impl Reuse {
    /// A cgroup just made for `caps`: kept once emptied when `kept`.
    pub(super) fn fresh(kept: bool, caps: Caps) -> Option<Box<Reuse>> {
        kept.then(|| Box::new(Reuse { caps, baseline: Counters::default() }))
    }
}

/// At most this many are kept: about as many as runs at once in a burst.
const KEEP_AT_MOST: usize = 16;

/// Memory still charged to an emptied cgroup past which it is removed, not kept: the next run
/// would start with it counted against its cap.
const LEFTOVER: u64 = 1 << 20;

struct Kept {
    dir: PathBuf,
    caps: Caps,
    baseline: Counters,
}

static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// A kept cgroup made for `caps`, if one waits.
pub(super) fn take(caps: Caps) -> Option<RunCgroup> {
    let mut kept = KEPT.locked();
    let i = kept.iter().position(|k| k.caps == caps)?;
    let Kept { dir, caps, baseline } = kept.swap_remove(i);
    Some(RunCgroup { dir, owns: true, reuse: Some(Box::new(Reuse { caps, baseline })) })
}

/// Keeps `dir` (made for `caps`) for a later run when it is fit to be (module doc); false when
/// it is not, or enough are kept, and the caller removes it. `wait_empty` waits (bounded) for
/// processes that have just died to leave it.
pub(super) fn keep(dir: &Path, caps: Caps, wait_empty: impl FnOnce()) -> bool {
    if !is_empty(dir) {
        wait_empty();
        if !is_empty(dir) {
            return false;
        }
    }
    if charged(dir).is_some_and(|bytes| bytes > LEFTOVER) || !caps_hold(dir, caps) {
        return false;
    }
    let baseline = Counters { oom_kills: oom_kills(dir), cpu_usec: cpu_usec(dir).unwrap_or(0) };
    let mut kept = KEPT.locked();
    if kept.len() >= KEEP_AT_MOST {
        return false;
    }
    kept.push(Kept { dir: dir.to_path_buf(), caps, baseline });
    true
}

/// Removes every kept cgroup (a runtime's dispose: no directory of this host outlives its
/// runtimes).
pub fn remove_kept() {
    let kept = std::mem::take(&mut *KEPT.locked());
    for Kept { dir, .. } in kept {
        let _ = std::fs::remove_dir(dir);
    }
}

fn read(dir: &Path, file: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(file)).ok()
}

/// No process in it: cgroup v2's `populated 0` (which counts processes that died but are not
/// yet released), v1's empty process list.
fn is_empty(dir: &Path) -> bool {
    match read(dir, "cgroup.events") {
        Some(events) => events.lines().any(|l| l == "populated 0"),
        None => read(dir, "cgroup.procs").is_some_and(|procs| procs.trim().is_empty()),
    }
}

/// Memory charged to it (v2 `memory.current`, v1 `memory.usage_in_bytes`); `None` for a cgroup
/// without the memory controller.
fn charged(dir: &Path) -> Option<u64> {
    ["memory.current", "memory.usage_in_bytes"].iter().find_map(|file| read(dir, file)?.trim().parse().ok())
}

/// Its caps read back as written: nothing changed them since (a sandboxed run cannot reach them;
/// this holds even were one to).
fn caps_hold(dir: &Path, caps: Caps) -> bool {
    let is = |file: &str, value: u64| read(dir, file).is_some_and(|text| text.trim() == value.to_string());
    // cgroup v1 reads its memory limit back rounded down to whole pages.
    let memory_is = |bytes: u64| is("memory.max", bytes) || is("memory.limit_in_bytes", bytes & !4095);
    match caps {
        Caps::Pids(pids) => is("pids.max", pids),
        Caps::Memory(bytes) => memory_is(bytes),
        Caps::Both { pids, memory } => is("pids.max", pids) && memory_is(memory),
    }
}

/// How many times the kernel's OOM killer has acted in it (v1 `memory.oom_control`, v2
/// `memory.events`: `oom_kill N`); 0 without the memory controller.
pub(super) fn oom_kills(dir: &Path) -> u64 {
    ["memory.oom_control", "memory.events"]
        .iter()
        .filter_map(|file| read(dir, file))
        .flat_map(|text| {
            text.lines().filter_map(|l| l.strip_prefix("oom_kill ")?.trim().parse::<u64>().ok()).collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0)
}

/// CPU time of everything that ever ran in it (cgroup v2's `cpu.stat`), in µs; `None` on v1.
pub(super) fn cpu_usec(dir: &Path) -> Option<u64> {
    let text = read(dir, "cpu.stat")?;
    text.lines().find_map(|l| l.strip_prefix("usage_usec ")).and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain directory standing in for a cgroup v2 one, with the files `keep` reads.
    fn fake(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cgroup-kept-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        dir
    }

    const FIT: &[(&str, &str)] = &[
        ("cgroup.events", "populated 0\nfrozen 0\n"),
        ("memory.current", "4096\n"),
        ("pids.max", "61\n"),
        ("memory.max", "1060864\n"),
        ("memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"),
        ("cpu.stat", "usage_usec 1500\nuser_usec 1000\n"),
    ];
    // Caps no other test makes, since kept cgroups are shared by the whole process.
    const CAPS: Caps = Caps::Both { pids: 61, memory: 1060864 };

    #[test]
    fn an_emptied_cgroup_is_kept_with_its_counters_as_the_next_runs_baseline() {
        let dir = fake("fit", FIT);
        assert!(keep(&dir, CAPS, || {}));
        // Another run's caps never take it.
        assert!(take(Caps::Both { pids: 61, memory: 2 << 20 }).is_none());
        let taken = take(CAPS).expect("kept");
        assert_eq!(taken.path(), dir);
        // The earlier run's OOM kill and CPU time are not this run's.
        assert!(!taken.oom_killed());
        assert_eq!(taken.cpu_usec(), Some(0));
        std::fs::write(dir.join("memory.events"), "oom_kill 2\n").unwrap();
        std::fs::write(dir.join("cpu.stat"), "usage_usec 1800\n").unwrap();
        assert!(taken.oom_killed());
        assert_eq!(taken.cpu_usec(), Some(300));
        std::mem::forget(taken);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_cgroup_unfit_for_another_run_is_not_kept() {
        let cases: [(&str, &str, &str); 4] = [
            ("populated", "cgroup.events", "populated 1\n"),
            ("charged", "memory.current", "2097152\n"),
            ("raised-pids", "pids.max", "max\n"),
            ("raised-memory", "memory.max", "max\n"),
        ];
        for (name, file, text) in cases {
            let dir = fake(name, FIT);
            std::fs::write(dir.join(file), text).unwrap();
            let mut waited = false;
            assert!(!keep(&dir, CAPS, || waited = true), "{name}");
            assert_eq!(waited, name == "populated", "{name}");
            std::fs::remove_dir_all(dir).unwrap();
        }
    }
}
