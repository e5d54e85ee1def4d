//! The mounts a namespace's init makes for its program: a root of the program's own (a fresh
//! tmpfs holding bind mounts of exactly the paths the plan grants, at their own paths, a fresh
//! `/proc` and the scratch tmpfs, then `pivot_root` into it), or, when no root is asked for or it
//! cannot be built, the private mounts alone.
//!
//! Every source is opened (`O_PATH`) before anything is mounted, with the credentials the host
//! started the helper with: a root host's installation under `/root` is reachable then, and the
//! root's own tmpfs may cover the directory it is mounted on without hiding a source.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sys::stat::{Mode, SFlag};
use nix::sys::statvfs::FsFlags;
use nix::unistd::{Gid, Uid};

use super::namespaces::INSIDE_ID;

/// The root tmpfs only holds the directories and files bind mounts need (read-only once built).
/// Its files belong to the inside id, the only one init can create files as.
const ROOT_OPTIONS: &str = "size=1m,nr_inodes=4096,mode=0755,uid=1000,gid=1000";
/// Bytes of tmpfs per inode it may hold: a run that fills its scratch with empty files or
/// directories pins at most about a kilobyte of kernel memory per 4 KiB of its size.
const BYTES_PER_INODE: u64 = 4096;

/// What the mounts achieved.
pub struct Mounted {
    /// `/proc` shows only this PID namespace.
    pub private_proc: bool,
    /// The program's root is its own.
    pub root: bool,
}

/// What the init is asked to build.
pub struct Layout<'a> {
    /// The directory the root's tmpfs is mounted on (`None`: no root of its own).
    pub root: Option<&'a Path>,
    /// Granted paths and whether they are writable.
    pub grants: Vec<(&'a Path, bool)>,
    /// The scratch tmpfs: where, and its size in bytes.
    pub scratch: Option<(&'a Path, u64)>,
    /// Mount a fresh `/proc`.
    pub proc: bool,
    /// Detached trees (idmapped by the keeper) to attach for the grants at these exact paths,
    /// instead of binding them.
    pub trees: &'a [(PathBuf, OwnedFd)],
    /// The grants that are a file policy's own paths, opened by the keeper with no symbolic link
    /// followed (src/sandbox/exact.rs): these descriptors are what is mounted for them, at the
    /// path itself, and whether one lies beneath another is decided on the objects.
    pub exact: &'a [(PathBuf, OwnedFd)],
}

/// Makes mounts private, then builds the root (falling back to the private mounts alone when the
/// kernel refuses its tmpfs). `Err` when not even the private mounts hold, or when the root was
/// started but could not be finished (never a half-built root).
pub fn mount_all(layout: &Layout) -> Result<Mounted, Errno> {
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
    if let Some(dir) = layout.root {
        let (sources, links) = resolve(&layout.grants, layout.trees, layout.exact);
        if mount(Some("tmpfs"), dir, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some(ROOT_OPTIONS)).is_ok()
        {
            return build(dir, layout, sources, links);
        }
    }
    let private_proc = mount_proc(Path::new("/proc"));
    if let Some((dir, bytes)) = layout.scratch {
        mount_scratch(dir, bytes)?;
    }
    // Without a root of its own (a policy that lifts the file rules), the host's own trees the
    // policy grants are still reached as their owner, over their own paths.
    // Each over the object the keeper checked, never over what its path names by now.
    for (at, tree) in layout.trees {
        let target = layout.exact.iter().find(|(path, _)| path == at).ok_or(Errno::ENOENT)?;
        super::idmap::attach_over(tree.as_fd(), target.1.as_fd())?;
    }
    Ok(Mounted { private_proc, root: false })
}

fn mount_proc(at: &Path) -> bool {
    let none: Option<&str> = None;
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("proc"), at, Some("proc"), flags, none).is_ok()
}

fn mount_scratch(dir: &Path, bytes: u64) -> nix::Result<()> {
    let options = format!("size={bytes},nr_inodes={},mode=0700,uid={INSIDE_ID},gid={INSIDE_ID}", inodes_for(bytes));
    mount(Some("tmpfs"), dir, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some(options.as_str()))
}

/// The scratch's inode cap for its size.
pub fn inodes_for(bytes: u64) -> u64 {
    (bytes / BYTES_PER_INODE).max(64)
}

/// One granted path, resolved and opened before anything was mounted.
struct Source {
    /// Its canonical path: where it is bound in the root.
    real: PathBuf,
    fd: OwnedFd,
    dir: bool,
    device: bool,
    write: bool,
    /// Flags of the mount it lives on that a bind in a user namespace must keep.
    locked: MsFlags,
    /// A detached tree the keeper made to attach here instead of a bind.
    tree: Option<std::os::fd::RawFd>,
    /// A file policy's own path, opened with no symbolic link followed.
    exact: bool,
}

/// Symbolic links on the way to a granted path, recreated in the root so the path the plan
/// names leads to the same place: `(link, absolute target)`.
type Link = (PathBuf, PathBuf);

/// Fills the root's tmpfs, just mounted on `dir`, and enters it.
fn build(dir: &Path, layout: &Layout, sources: Vec<Source>, links: Vec<Link>) -> Result<Mounted, Errno> {
    // Everything below is relative to the root, so no directory of the host's on the way to it is
    // looked up again (the host may keep it private to its own uid).
    nix::unistd::chdir(dir)?;
    // From here on the files made in the root belong to the program's id inside (a root host's
    // own uid has no mapping there, and the kernel refuses to create files for it).
    own_files_as_inside_id()?;
    for source in &sources {
        bind(source)?;
    }
    for (link, target) in &links {
        let at = inside(link);
        if at.symlink_metadata().is_err() {
            make_parents(&at)?;
            std::os::unix::fs::symlink(target, &at).map_err(io_errno)?;
        }
    }
    let private_proc = layout.proc && {
        let at = inside(Path::new("/proc"));
        make_dir(&at).is_ok() && mount_proc(&at)
    };
    if let Some((scratch, bytes)) = layout.scratch {
        let at = inside(scratch);
        if at.symlink_metadata().is_err() {
            make_parents(&at)?;
            make_dir(&at)?;
        }
        mount_scratch(&at, bytes)?;
    }
    write_identity(layout.scratch.map(|(s, _)| s))?;
    drop(sources);
    enter()?;
    Ok(Mounted { private_proc, root: true })
}

/// Opened sources in bind order (parents first), without those a broader grant already covers,
/// and the links that lead to them. A file policy's own paths (`exact`) are the keeper's
/// descriptors at their own paths, with no link to them; other grants are canonicalised and
/// opened here (their links recreated), and those that do not exist are left out.
fn resolve(
    grants: &[(&Path, bool)],
    trees: &[(PathBuf, OwnedFd)],
    exact: &[(PathBuf, OwnedFd)],
) -> (Vec<Source>, Vec<Link>) {
    let mut sources: Vec<Source> = Vec::new();
    let mut links = Vec::new();
    // A grant of `/` lifts Landlock's file rules; a root of its own never holds the host's root.
    let mut found: Vec<(PathBuf, bool, Option<OwnedFd>)> = grants
        .iter()
        .filter(|(path, _)| *path != Path::new("/"))
        .filter_map(|(path, write)| {
            if let Some((_, fd)) = exact.iter().find(|(p, _)| p == path) {
                return Some((path.to_path_buf(), *write, Some(fd.try_clone().ok()?)));
            }
            links.extend(links_to(path));
            Some((std::fs::canonicalize(path).ok()?, *write, None))
        })
        .collect();
    found.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (real, write, held) in found {
        let is_exact = held.is_some();
        let fd = match held {
            Some(fd) => fd,
            None => match nix::fcntl::open(&real, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()) {
                Ok(fd) => fd,
                Err(_) => continue,
            },
        };
        // A policy path is covered only by another one it lies beneath, on the objects; the
        // system's grants by their canonical paths, as before.
        let covered = sources.iter().any(|s| {
            let inside = match is_exact {
                true => s.exact && super::exact::beneath(&fd, &s.fd),
                false => real.starts_with(&s.real),
            };
            inside && (s.write || !write)
        });
        if covered {
            continue;
        }
        let Ok(stat) = nix::sys::stat::fstat(&fd) else { continue };
        let kind = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
        let locked = nix::sys::statvfs::fstatvfs(&fd).map(|s| locked_flags(s.flags())).unwrap_or(MsFlags::empty());
        let device = kind == SFlag::S_IFCHR || kind == SFlag::S_IFBLK;
        let tree = trees.iter().find(|(at, _)| *at == real).map(|(_, fd)| fd.as_raw_fd());
        sources.push(Source { real, fd, dir: kind == SFlag::S_IFDIR, device, write, locked, tree, exact: is_exact });
    }
    (sources, links)
}

/// Each symbolic link met walking `path` from `/`, with the absolute path it resolves to.
fn links_to(path: &Path) -> Vec<Link> {
    let mut out = Vec::new();
    let mut walked = PathBuf::from("/");
    let mut rest: Vec<PathBuf> =
        path.components().filter(|c| matches!(c, Component::Normal(_))).map(|c| PathBuf::from(c.as_os_str())).collect();
    rest.reverse();
    // Bounded like the kernel's own walk: a loop of links ends it.
    for _ in 0..256 {
        let Some(next) = rest.pop() else { break };
        walked.push(next);
        let is_link = walked.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            continue;
        }
        let Ok(target) = std::fs::canonicalize(&walked) else { break };
        out.push((walked.clone(), target.clone()));
        walked = target;
    }
    out
}

/// The per-mount flags a bind of a mount with `flags` must keep: a user namespace may not clear
/// what its creator's mounts set.
fn locked_flags(flags: FsFlags) -> MsFlags {
    let pairs = [
        (FsFlags::ST_RDONLY, MsFlags::MS_RDONLY),
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ];
    pairs.iter().filter(|(st, _)| flags.contains(*st)).fold(MsFlags::empty(), |acc, (_, ms)| acc | *ms)
}

/// Binds one source at its own path in the root, read-only unless granted for writing.
fn bind(source: &Source) -> Result<(), Errno> {
    let at = inside(&source.real);
    if at.symlink_metadata().is_err() {
        make_parents(&at)?;
        if source.dir {
            make_dir(&at)?;
        } else {
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o644).open(&at).map_err(io_errno)?;
        }
    }
    if let Some(tree) = source.tree {
        // SAFETY: the keeper's descriptor, which `Layout::trees` keeps open for the whole build.
        return super::idmap::attach(unsafe { BorrowedFd::borrow_raw(tree) }, &at);
    }
    let from = format!("/proc/self/fd/{}", source.fd.as_raw_fd());
    let none: Option<&str> = None;
    mount(Some(from.as_str()), &at, none, MsFlags::MS_BIND | MsFlags::MS_REC, none)?;
    // Devices keep their mount's flags (a device node on a `nodev` mount cannot be opened).
    if source.device {
        return Ok(());
    }
    let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | source.locked;
    if !source.write {
        flags |= MsFlags::MS_RDONLY;
    }
    mount(none, &at, none, flags, none)
}

/// The files `write_identity` makes, for the program to read.
pub const IDENTITY_FILES: [&str; 2] = ["/etc/passwd", "/etc/group"];

/// A minimal `/etc/passwd` and `/etc/group` naming the program's id, unless the plan granted the
/// host's own (libraries that look the user up then find one).
fn write_identity(home: Option<&Path>) -> Result<(), Errno> {
    let etc = inside(Path::new("/etc"));
    make_dir(&etc)?;
    let home = home.unwrap_or(Path::new("/")).display().to_string();
    let files = [
        ("passwd", format!("sandbox:x:{INSIDE_ID}:{INSIDE_ID}:sandbox:{home}:/bin/false\n")),
        ("group", format!("sandbox:x:{INSIDE_ID}:\n")),
    ];
    for (name, text) in files {
        let path = etc.join(name);
        if path.symlink_metadata().is_err() {
            std::fs::write(&path, text).map_err(io_errno)?;
        }
    }
    Ok(())
}

/// `pivot_root` into the built root (the working directory), with the host's tree detached, the
/// root read-only, and the working directory its top (never a directory of the host's).
fn enter() -> Result<(), Errno> {
    let none: Option<&str> = None;
    nix::unistd::pivot_root(".", ".")?;
    umount2(".", MntFlags::MNT_DETACH)?;
    nix::unistd::chdir("/")?;
    let read_only =
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(none, "/", none, read_only, none)
}

/// Files this process creates from now on belong to `INSIDE_ID`.
fn own_files_as_inside_id() -> Result<(), Errno> {
    nix::unistd::setfsgid(Gid::from_raw(INSIDE_ID));
    nix::unistd::setfsuid(Uid::from_raw(INSIDE_ID));
    // setfsuid reports the previous id whatever happens: asking again shows the current one.
    match nix::unistd::setfsuid(Uid::from_raw(INSIDE_ID)).as_raw() == INSIDE_ID {
        true => Ok(()),
        false => Err(Errno::EPERM),
    }
}

/// `path` (absolute) inside the root, relative to it (the working directory while it is built).
fn inside(path: &Path) -> PathBuf {
    Path::new(".").join(path.strip_prefix("/").unwrap_or(path))
}

fn make_parents(path: &Path) -> Result<(), Errno> {
    match path.parent() {
        Some(parent) => std::fs::DirBuilder::new().recursive(true).mode(0o755).create(parent).map_err(io_errno),
        None => Ok(()),
    }
}

fn make_dir(path: &Path) -> Result<(), Errno> {
    match std::fs::DirBuilder::new().mode(0o755).create(path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(io_errno(e)),
        _ => Ok(()),
    }
}

fn io_errno(e: std::io::Error) -> Errno {
    Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))
}
