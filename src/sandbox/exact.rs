//! A file policy's own paths (the workspace, the working directory), taken literally: each is
//! opened with no symbolic link followed anywhere in it, and the descriptor that was checked is the
//! one that is then mounted. A link an earlier run planted in a workspace it could write therefore
//! never redirects a later run's grant to another tree (issue 26). Compiled into the addon
//! (`resolve()`'s check) and into the sandbox helper (the mounts).

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{fstat, Mode, SFlag};

/// The object behind a descriptor: `(st_dev, st_ino)`.
pub type Identity = (u64, u64);

/// Opens `path` (absolute) as an `O_PATH` descriptor without following any symbolic link, the
/// last component included (`ELOOP` when one is met), and without crossing a magic link of
/// `/proc`. `openat2(RESOLVE_NO_SYMLINKS)`; before Linux 5.6, the same walk one component at a
/// time, each opened beneath the descriptor of the one before with `O_NOFOLLOW`.
pub fn open(path: &Path) -> Result<OwnedFd, Errno> {
    // Literal means no `..` either: a policy path is normalised before it gets here, and both
    // walks below must mean the same object (the fallback could not follow `..` as openat2 does).
    let up = path.components().any(|part| part == std::path::Component::ParentDir);
    if !path.is_absolute() || up {
        return Err(Errno::EINVAL);
    }
    let flags = OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let how = nix::fcntl::OpenHow::new()
        .flags(flags)
        .resolve(nix::fcntl::ResolveFlag::RESOLVE_NO_SYMLINKS | nix::fcntl::ResolveFlag::RESOLVE_NO_MAGICLINKS);
    let fd = match nix::fcntl::openat2(nix::fcntl::AT_FDCWD, path, how) {
        Err(Errno::ENOSYS) => walk(path)?,
        other => other?,
    };
    // `O_PATH | O_NOFOLLOW` opens a link itself rather than failing: it is refused here.
    if kind(&fd)? == SFlag::S_IFLNK {
        return Err(Errno::ELOOP);
    }
    Ok(fd)
}

/// `open` without `openat2`: `/`, then each component beneath the previous descriptor.
fn walk(path: &Path) -> Result<OwnedFd, Errno> {
    let flags = OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let mut at = nix::fcntl::open("/", flags | OFlag::O_DIRECTORY, Mode::empty())?;
    for part in path.components() {
        // `/` and `.`; `..` was refused by `open`.
        let std::path::Component::Normal(name) = part else { continue };
        if kind(&at)? == SFlag::S_IFLNK {
            return Err(Errno::ELOOP);
        }
        at = nix::fcntl::openat(at.as_fd(), name, flags, Mode::empty())?;
    }
    Ok(at)
}

fn kind(fd: &OwnedFd) -> Result<SFlag, Errno> {
    let st = fstat(fd)?;
    Ok(SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()))
}

/// The object `fd` refers to.
pub fn identity(fd: &impl AsFd) -> Result<Identity, Errno> {
    let st = fstat(fd.as_fd())?;
    Ok((st.st_dev, st.st_ino))
}

/// Whether `fd` is a directory.
pub fn is_dir(fd: &OwnedFd) -> bool {
    kind(fd).is_ok_and(|k| k == SFlag::S_IFDIR)
}

/// Whether `fd` is this process's root directory (`/`, or another path to the same object, such
/// as a bind mount of it).
pub fn is_root(fd: &OwnedFd) -> bool {
    let root = nix::sys::stat::stat("/").map(|st| (st.st_dev, st.st_ino));
    root.is_ok_and(|root| identity(fd) == Ok(root))
}

/// Whether the object of `inner` is the object of `outer` or lies beneath it, decided on the
/// objects: `..` is walked up from `inner` (each step opened beneath the one before) until
/// `outer`'s object or the root is met.
#[allow(dead_code)] // the helper's (src/sandbox/harden/root.rs)
pub fn beneath(inner: &OwnedFd, outer: &OwnedFd) -> bool {
    let Ok(target) = identity(outer) else { return false };
    let Ok(mut at) = nix::fcntl::openat(inner.as_fd(), ".", OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()) else {
        return false;
    };
    // Deeper than any path the kernel would resolve (PATH_MAX / 2 components).
    for _ in 0..2048 {
        let Ok(here) = identity(&at) else { return false };
        if here == target {
            return true;
        }
        let flags = OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_DIRECTORY;
        let Ok(up) = nix::fcntl::openat(at.as_fd(), "..", flags, Mode::empty()) else { return false };
        if identity(&up) == Ok(here) {
            return false; // the root: its `..` is itself
        }
        at = up;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_refused_anywhere_in_the_path() {
        let dir = std::env::temp_dir().join(format!("crn-exact-{}", std::process::id()));
        let real = dir.join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        std::os::unix::fs::symlink(&real, dir.join("link")).unwrap();
        std::os::unix::fs::symlink("/", dir.join("to-root")).unwrap();
        assert!(open(&real.join("sub")).is_ok());
        assert_eq!(open(&dir.join("link")).err(), Some(Errno::ELOOP));
        assert_eq!(open(&dir.join("link/sub")).err(), Some(Errno::ELOOP));
        assert_eq!(open(&dir.join("to-root")).err(), Some(Errno::ELOOP));
        assert_eq!(walk(&dir.join("link/sub")).err(), Some(Errno::ELOOP));
        // `..` is refused, even where it would lead back to the same directory.
        assert_eq!(open(&real.join("sub/..")).err(), Some(Errno::EINVAL));
        assert_eq!(open(&real.join("../real")).err(), Some(Errno::EINVAL));
        assert!(open(&real.join("./sub")).is_ok());
        assert!(is_root(&open(Path::new("/")).unwrap()));
        assert!(!is_root(&open(&real).unwrap()));
        let (outer, inner) = (open(&real).unwrap(), open(&real.join("sub")).unwrap());
        assert!(beneath(&inner, &outer) && beneath(&outer, &outer) && !beneath(&outer, &inner));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
