//! `resolve()`'s check of a sandbox policy's paths (lib/ptc/resolve.mjs): what the kernel finds at
//! a path when no symbolic link is followed anywhere in it (src/sandbox/exact.rs), so a link an
//! earlier run planted in a workspace fails the request that names it instead of widening the run.

use napi_derive::napi;

/// What is at a policy path, opened without following links.
#[napi(object)]
pub struct PolicyPath {
    /// The errno's name when it cannot be opened so (`ELOOP`: a symbolic link is on the way or at
    /// its end; `ENOENT`, `ENOTDIR`, `EACCES`…); absent when it was opened.
    pub error: Option<String>,
    /// It is a directory.
    pub directory: bool,
    /// It is the host's root directory itself (`/`, or any other path to that object).
    pub host_root: bool,
}

/// Opens `path` (absolute) with no symbolic link followed and says what is there.
#[napi(catch_unwind)]
pub fn policy_path(path: String) -> PolicyPath {
    let failed = |error: String| PolicyPath { error: Some(error), directory: false, host_root: false };
    #[cfg(target_os = "linux")]
    {
        use crate::sandbox::exact;
        match exact::open(std::path::Path::new(&path)) {
            Ok(fd) => PolicyPath { error: None, directory: exact::is_dir(&fd), host_root: exact::is_root(&fd) },
            Err(e) => failed(format!("{e:?}")),
        }
    }
    // Elsewhere no run has a file policy to widen: the same answer from each component's lstat.
    #[cfg(not(target_os = "linux"))]
    {
        let mut walked = std::path::PathBuf::new();
        for part in std::path::Path::new(&path).components() {
            walked.push(part);
            match std::fs::symlink_metadata(&walked) {
                Ok(m) if m.file_type().is_symlink() => return failed("ELOOP".into()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return failed("ENOENT".into()),
                Err(_) => return failed("EACCES".into()),
            }
        }
        let directory = walked.is_dir();
        let host_root = std::fs::canonicalize(&walked).is_ok_and(|p| p.parent().is_none());
        PolicyPath { error: None, directory, host_root }
    }
}
