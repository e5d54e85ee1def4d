//! A run's own directory (docs/python.md#spawn): its scratch (the child's `TMPDIR`), for a
//! spawned child its private copy of the bootstrap and precompiled modules; what a child's root
//! holds of the host's system files; and the sweep of directories a dead host left behind.

use std::path::{Path, PathBuf};

use crate::python::process::errors;
use crate::sandbox::procfs::start_time;

/// A compiled module to stage: its path relative to the staging directory and its bytes.
pub type CachedFile = (String, Vec<u8>);

/// The child's scripts (the entry first), compiled into the addon: each run's copy comes from
/// here, never from the package directory, so nothing a run writes reaches the next one.
pub const BOOTSTRAP_FILES: [(&str, &str); 3] = [
    ("bootstrap.py", include_str!("../../../py/bootstrap.py")),
    ("protocol.py", include_str!("../../../py/protocol.py")),
    ("runner.py", include_str!("../../../py/runner.py")),
];

/// The run's scratch directory inside its staging directory: the child's `TMPDIR`, the only place
/// it may write (a size-capped tmpfs of its own when namespaces are available).
const SCRATCH: &str = "tmp";
/// Size cap of the scratch tmpfs, and `RLIMIT_FSIZE` of the child.
pub const SCRATCH_BYTES: u64 = 64 << 20;

/// A run's own directory: its scratch directory, and for a child the helper spawns its private
/// copy of the bootstrap; removed at settlement.
pub struct Staging {
    pub dir: PathBuf,
    /// Everything staging made inside `dir`, in order.
    created: Vec<PathBuf>,
    /// Whether `dir` is on the host's disk (`create`), or only a name the run's own root holds
    /// (`in_root_only`).
    pub on_host: bool,
}

impl Staging {
    /// `mkdtemp(<tmpdir>/code-runtime-native-python-<owner>-)` and the scratch directory, which is
    /// the run's ids'. That is all a child forked from the template needs (it imported the
    /// bootstrap before it forked); a spawned one needs `stage_bootstrap` too.
    pub fn create(tmpdir: &str, run_as: Option<(u32, u32)>) -> Result<Staging, String> {
        let template = format!("{}/{STAGING_PREFIX}{}-XXXXXX", tmpdir.trim_end_matches('/'), owner_tag());
        let dir = mkdtemp(&template).map_err(|e| errors::fs("mkdtemp", &template, &e))?;
        let mut staging = Staging { created: Vec::new(), dir, on_host: true };
        let result = staging.make_scratch(run_as);
        if result.is_err() {
            staging.remove();
        }
        result.map(|()| staging)
    }

    /// A directory of the same form that is never made on the host: for a child forked from the
    /// template into a root of its own, whose init makes the scratch directory inside that root
    /// and mounts the run's tmpfs on it (src/sandbox/harden/root.rs). The host's disk is then
    /// not touched per run: on `/tmp` each `mkdir` and `rmdir` waits on the directory's lock, and
    /// on a file system mounted with `discard` each removed directory waits for the disk.
    pub fn in_root_only(tmpdir: &str) -> Staging {
        let name = format!("{}/{STAGING_PREFIX}{}-{}", tmpdir.trim_end_matches('/'), owner_tag(), random_suffix());
        Staging { created: Vec::new(), dir: PathBuf::from(name), on_host: false }
    }

    /// Makes the directory on the host after all (under a new name), for a child that is spawned
    /// instead of forked.
    pub fn make_on_host(&mut self, run_as: Option<(u32, u32)>) -> Result<(), String> {
        if !self.on_host {
            let tmpdir = self.dir.parent().unwrap_or(Path::new("/")).to_string_lossy().into_owned();
            *self = Staging::create(&tmpdir, run_as)?;
        }
        Ok(())
    }

    fn make_scratch(&mut self, run_as: Option<(u32, u32)>) -> Result<(), String> {
        set_mode(&self.dir, 0o755)?;
        let scratch = self.scratch();
        self.created.push(scratch.clone());
        std::fs::create_dir(&scratch).map_err(|e| errors::fs("mkdir", &scratch.to_string_lossy(), &e))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(&scratch, Some(uid), Some(gid))
                .map_err(|e| errors::fs("chown", &scratch.to_string_lossy(), &e))?;
        }
        Ok(())
    }

    /// The scripts written from the addon and the modules precompiled at load when there are
    /// any, readable by the run's ids (a root host's runs are `nobody`). The caller removes the
    /// directory when this fails.
    pub fn stage_bootstrap(&mut self, cache: &[CachedFile]) -> Result<(), String> {
        for (name, text) in BOOTSTRAP_FILES {
            let dst = self.dir.join(name);
            self.created.push(dst.clone());
            std::fs::write(&dst, text).map_err(|e| errors::fs("write", &dst.to_string_lossy(), &e))?;
            set_mode(&dst, 0o644)?;
        }
        if !cache.is_empty() {
            let pycache = self.dir.join("__pycache__");
            self.created.push(pycache.clone());
            std::fs::create_dir(&pycache).map_err(|e| errors::fs("mkdir", &pycache.to_string_lossy(), &e))?;
            set_mode(&pycache, 0o755)?;
            for (rel, bytes) in cache {
                let dst = self.dir.join(rel);
                self.created.push(dst.clone());
                std::fs::write(&dst, bytes).map_err(|e| errors::fs("open", &dst.to_string_lossy(), &e))?;
                set_mode(&dst, 0o644)?;
            }
        }
        Ok(())
    }

    pub fn bootstrap(&self) -> PathBuf {
        self.dir.join(BOOTSTRAP_FILES[0].0)
    }

    pub fn scratch(&self) -> PathBuf {
        self.dir.join(SCRATCH)
    }

    /// Errors are ignored: the directory is best-effort garbage once the run settles. What
    /// staging made is removed by name, newest first (a forked run's is its empty scratch
    /// directory, a run's tmpfs mounted over it only in its own mount namespace): on a busy
    /// directory such as `/tmp` each extra lookup waits on its lock (bursts of runs spent
    /// milliseconds in the walk's `openat` alone). Only when that leaves the directory (a
    /// program without namespaces wrote into its scratch) is the tree walked.
    pub fn remove(&self) {
        if !self.on_host {
            return;
        }
        for path in self.created.iter().rev() {
            let _ = std::fs::remove_dir(path).or_else(|_| std::fs::remove_file(path));
        }
        if std::fs::remove_dir(&self.dir).is_ok() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| errors::fs("chmod", &path.to_string_lossy(), &e))
}

/// Staging directories are named `<prefix><pid>-<start time>-XXXXXX` after the host process that
/// made them, so a later host can tell which ones a dead host left.
const STAGING_PREFIX: &str = "code-runtime-native-python-";

/// What a run's own root holds of the host's beside a policy's trees: the system's trees, and the
/// prefix of the staging directories (with the scratch inside) this host makes in `tmpdir`.
pub fn root_holds(tmpdir: &str) -> (Vec<String>, String) {
    let system = SYSTEM_READ_ONLY.iter().map(|p| p.to_string()).collect();
    (system, format!("{}/{STAGING_PREFIX}{}-", tmpdir.trim_end_matches('/'), owner_tag()))
}

fn owner_tag() -> String {
    let pid = std::process::id() as i32;
    format!("{pid}-{}", start_time(pid).unwrap_or(0))
}

/// Removes the staging directories in `tmpdir` whose host process has died (a pid that is gone,
/// or reused by a process that started at another time). Best effort.
pub fn sweep(tmpdir: &str) {
    let Ok(entries) = std::fs::read_dir(tmpdir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(STAGING_PREFIX)) else { continue };
        let mut parts = rest.splitn(3, '-');
        let (Some(Ok(pid)), Some(Ok(start))) =
            (parts.next().map(str::parse::<i32>), parts.next().map(str::parse::<u64>))
        else {
            continue;
        };
        let dead = match start_time(pid) {
            Some(now) => now != start,
            // No /proc to read: only a pid that is certainly gone counts.
            // SAFETY: signal 0 only checks whether the process exists.
            None => (unsafe { libc::kill(pid, 0) }) != 0 && nix::errno::Errno::last() == nix::errno::Errno::ESRCH,
        };
        if dead {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Six characters of the kernel's randomness, as `mkdtemp` would choose them: the names of
/// runs of one host differ (each run's `ps` label and `TMPDIR`).
fn random_suffix() -> String {
    const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 6];
    // A failure leaves zeros: still a valid name, and the directory exists only in the run's root.
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| LETTERS[*b as usize % LETTERS.len()] as char).collect()
}

fn mkdtemp(template: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut buf = std::ffi::CString::new(template)
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?
        .into_bytes_with_nul();
    // SAFETY: a writable NUL-terminated template, modified in place.
    let p = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
    if p.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    buf.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

/// System files every dynamically linked interpreter reads, read-only, and `/bin` (where
/// `os.system` and `subprocess(shell=True)` find `/bin/sh`; a link to `/usr/bin` on merged-/usr
/// systems). The run's root holds these and nothing else of the host's
/// (docs/sandbox.md#the-filesystem-a-child-sees).
pub const SYSTEM_READ_ONLY: &[&str] =
    &["/usr", "/bin", "/lib", "/lib64", "/lib32", "/libx32", "/etc/ld.so.cache", "/etc/localtime", "/dev/urandom"];

#[cfg(test)]
mod tests {
    use super::Staging;
    use std::os::unix::fs::symlink;

    /// A directory of the host's beside the staging directories, with a file in it.
    fn host_dir(base: &std::path::Path) -> std::path::PathBuf {
        let dir = base.join("host-files");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("keep"), b"the host's").unwrap();
        dir
    }

    #[test]
    fn what_a_run_without_namespaces_left_in_its_scratch_goes_and_no_link_is_followed() {
        let base = tempfile_dir();
        let host = host_dir(&base);
        let staging = Staging::create(base.to_str().unwrap(), None).unwrap();
        let scratch = staging.scratch();
        std::fs::create_dir_all(scratch.join("a/b")).unwrap();
        std::fs::write(scratch.join("a/b/f"), b"x").unwrap();
        symlink(&host, scratch.join("to-host")).unwrap();
        symlink(host.join("keep"), scratch.join("a/to-file")).unwrap();
        staging.remove();
        assert!(!staging.dir.exists());
        assert_eq!(std::fs::read(host.join("keep")).unwrap(), b"the host's");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_scratch_replaced_by_a_link_is_unlinked_not_followed() {
        let base = tempfile_dir();
        let host = host_dir(&base);
        let staging = Staging::create(base.to_str().unwrap(), None).unwrap();
        std::fs::remove_dir(staging.scratch()).unwrap();
        symlink(&host, staging.scratch()).unwrap();
        staging.remove();
        assert!(!staging.dir.exists());
        assert_eq!(std::fs::read(host.join("keep")).unwrap(), b"the host's");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_name_only_in_the_runs_root_touches_nothing_of_the_hosts() {
        let base = tempfile_dir();
        let tmpdir = base.to_str().unwrap();
        let staging = Staging::in_root_only(tmpdir);
        let name = staging.dir.file_name().unwrap().to_str().unwrap().to_string();
        assert!(!staging.on_host);
        assert!(name.starts_with(&format!("code-runtime-native-python-{}-", std::process::id())), "{name}");
        assert_eq!(name.rsplit('-').next().unwrap().len(), 6);
        assert_ne!(Staging::in_root_only(tmpdir).dir, staging.dir);
        assert!(!staging.dir.exists());
        // Whatever the host has at that name (planted there) is not the run's: left alone.
        std::fs::create_dir_all(staging.scratch()).unwrap();
        staging.remove();
        assert!(staging.scratch().is_dir());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_name_is_made_on_the_host_afresh_for_a_child_spawned_instead() {
        let base = tempfile_dir();
        let mut staging = Staging::in_root_only(base.to_str().unwrap());
        let named = staging.dir.clone();
        staging.make_on_host(None).unwrap();
        assert!(staging.on_host);
        assert_ne!(staging.dir, named);
        assert_eq!(staging.dir.parent(), Some(base.as_path()));
        assert!(staging.scratch().is_dir());
        staging.remove();
        assert!(!staging.dir.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let base = std::env::temp_dir().join(format!(
            "crn-staging-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir(&base).unwrap();
        base
    }
}
