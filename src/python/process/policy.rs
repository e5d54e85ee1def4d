//! A run's file policy (the `ctx.ptcRuntime` seam's sandbox policy, planned in
//! lib/ptc/file-plan.mjs): what of the host's tree the child's root holds beyond its own
//! directories, where it starts, and whether it has the network. The kernel enforces it: the
//! grants become bind mounts of the child's root and Landlock rules (src/sandbox/harden/).

use std::path::PathBuf;

/// One run's file policy, checked at the boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePolicy {
    /// The child's working directory (granted by `read_only` or `read_write`).
    pub cwd: PathBuf,
    /// Trees the child may read.
    pub read_only: Vec<PathBuf>,
    /// Trees the child may read and write (`/` lifts the file rules).
    pub read_write: Vec<PathBuf>,
    /// The child keeps the host's network (no network namespace, no Landlock TCP rules).
    pub network: bool,
    /// The child may take file locks (a `read-only` policy refuses them: a lock on a file it may
    /// only read would still hold off the host's processes).
    pub locks: bool,
}

impl FilePolicy {
    /// Every path absolute, without NUL bytes or `..` (a grant is exactly the tree it names).
    pub fn new(
        cwd: String,
        read_only: Vec<String>,
        read_write: Vec<String>,
        network: bool,
        locks: bool,
    ) -> Result<Self, String> {
        let check = |field: &str, path: String| -> Result<PathBuf, String> {
            let p = PathBuf::from(&path);
            let dotdot = p.components().any(|c| matches!(c, std::path::Component::ParentDir));
            if !p.is_absolute() || path.contains('\0') || dotdot {
                return Err(format!(
                    "filePolicy.{field} must hold absolute paths without '..' or NUL bytes, got {path:?}"
                ));
            }
            Ok(p)
        };
        let cwd = check("cwd", cwd)?;
        let read_only = read_only.into_iter().map(|p| check("readOnly", p)).collect::<Result<_, _>>()?;
        let read_write = read_write.into_iter().map(|p| check("readWrite", p)).collect::<Result<_, _>>()?;
        Ok(FilePolicy { cwd, read_only, read_write, network, locks })
    }

    /// The granted paths that are the host's own files, which the helper opens with no link
    /// followed (`Plan::as_host`): the workspace is the host's; devices are not, and `/` (no file
    /// rules) is no grant.
    pub fn host_paths(&self) -> Vec<PathBuf> {
        (self.read_only.iter().chain(&self.read_write))
            .filter(|p| !p.starts_with("/dev") && p.as_path() != std::path::Path::new("/"))
            .cloned()
            .collect()
    }

    /// What each of `host_paths` is now, opened as the helper opens it (`None` if one cannot be
    /// opened so): a spare booted for this policy serves a run only while this is unchanged.
    #[cfg(target_os = "linux")]
    pub fn host_objects(&self) -> Option<Vec<(u64, u64)>> {
        use crate::sandbox::exact;
        self.host_paths().iter().map(|p| exact::open(p).and_then(|fd| exact::identity(&fd)).ok()).collect()
    }

    /// No helper opens them on this platform (and no spare is booted under a policy).
    #[cfg(not(target_os = "linux"))]
    pub fn host_objects(&self) -> Option<Vec<(u64, u64)>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_absolute_and_exact() {
        let ok = FilePolicy::new("/w".into(), vec!["/w".into()], vec!["/dev/null".into()], false, false).unwrap();
        assert_eq!(ok.read_only, vec![PathBuf::from("/w")]);
        for bad in ["w", "/w/../etc", "/w\0x"] {
            let e = FilePolicy::new("/w".into(), vec![bad.into()], vec![], false, true).unwrap_err();
            assert!(e.starts_with("filePolicy.readOnly must hold absolute paths"), "{e}");
        }
        assert!(FilePolicy::new("rel".into(), vec![], vec![], false, true).unwrap_err().starts_with("filePolicy.cwd"));
    }
}
