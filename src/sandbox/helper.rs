//! Where the sandbox helper executable is: beside the addon's own file (the platform package,
//! or the source checkout after a build), found once per process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const HELPER_NAME: &str = "code-runtime-native-sandbox";

/// The file this code was loaded from (the `.node` addon, or a test executable).
pub fn own_file() -> Option<PathBuf> {
    // SAFETY: Dl_info is plain data (null pointers are valid values).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = own_file as *const ();
    // SAFETY: dladdr only reads the loader's tables for an address inside this object.
    if unsafe { libc::dladdr(here.cast(), &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated path.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    use std::os::unix::ffi::OsStrExt;
    std::fs::canonicalize(Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()))).ok()
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The helper beside the addon (or, for the crate's own test executables in `target/*/deps`,
/// one directory up); `None` when it is not there, and children then start without it.
pub fn path() -> Option<&'static Path> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| {
        let file = own_file()?;
        let dir = file.parent()?;
        [dir.join(HELPER_NAME), dir.parent()?.join(HELPER_NAME)].into_iter().find(|p| executable(p))
    })
    .as_deref()
}

/// The helper's static build (scripts/link-sandbox-roles.mjs), shipped beside it.
pub const ROLES_NAME: &str = "code-runtime-native-sandbox-roles";

/// The roles file in use and what it is.
pub struct Roles {
    pub path: PathBuf,
    /// No program interpreter: only such a file can be exec'd inside a run's own root, where no
    /// dynamic loader need be, so only then does a forked run's init join rather than copy
    /// (`Plan::join`, src/sandbox/harden/joined.rs).
    pub linked_statically: bool,
}

/// The helper's static build beside the helper, which a forked Python run's keeper and init
/// exec in their roles (no dynamic loader: each exec costs less); `None` when it is not there or
/// does not start as the helper does (with no arguments it exits with `EXIT_USAGE`), and the
/// helper then serves those roles itself. Checked once per process.
pub fn roles() -> Option<&'static Roles> {
    static ROLES: OnceLock<Option<Roles>> = OnceLock::new();
    ROLES
        .get_or_init(|| {
            let path = path()?.parent()?.join(ROLES_NAME);
            if !executable(&path) || !starts(&path) {
                return None;
            }
            let linked_statically = std::fs::File::open(&path).is_ok_and(|f| without_interpreter(&f));
            Some(Roles { path, linked_statically })
        })
        .as_ref()
}

/// Whether `file` is a 64-bit little-endian ELF program with no `PT_INTERP` program header;
/// false for anything unreadable or not so.
fn without_interpreter(file: &std::fs::File) -> bool {
    use std::os::unix::fs::FileExt;
    const PT_INTERP: u32 = 3;
    let mut header = [0u8; 64];
    if file.read_exact_at(&mut header, 0).is_err() || header[..6] != *b"\x7fELF\x02\x01" {
        return false;
    }
    let word = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]) as usize;
    let offset = u64::from_le_bytes(header[32..40].try_into().unwrap_or_default());
    let (size, count) = (word(54), word(56));
    if size < 4 || count == 0 || count > 256 {
        return false;
    }
    let mut headers = vec![0u8; size * count];
    if file.read_exact_at(&mut headers, offset).is_err() {
        return false;
    }
    headers.chunks(size).all(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]) != PT_INTERP)
}

/// How long the roles file may take to answer its check: the helper answers in about a
/// millisecond; a file that takes longer is not used (and is killed).
const ROLES_CHECK: Duration = Duration::from_secs(2);

/// Whether `program`, run with no arguments and nothing of this process's, exits as the helper
/// does then, within [`ROLES_CHECK`].
fn starts(program: &Path) -> bool {
    use std::process::{Command, Stdio};
    let mut command = Command::new(program);
    command.env_clear().current_dir("/").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let Ok(mut child) = command.spawn() else { return false };
    let until = Instant::now() + ROLES_CHECK;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code() == Some(super::abi::EXIT_USAGE),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// The Python template's library (crates/python-entry), as cargo names it.
pub const PYTHON_LIBRARY_NAME: &str = "libcode_runtime_native_python.so";

/// The Python template's library beside the helper; `None` when it is not there (the template
/// then does not start, and each run spawns its interpreter).
pub fn python_library() -> Option<PathBuf> {
    let library = path()?.parent()?.join(PYTHON_LIBRARY_NAME);
    library.is_file().then_some(library)
}

#[cfg(test)]
mod tests {
    use super::without_interpreter;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> std::fs::File {
        let mut file = unlinked_tempfile();
        file.write_all(bytes).expect("write");
        file
    }

    /// A file in the temporary directory, already unlinked.
    fn unlinked_tempfile() -> std::fs::File {
        let path =
            std::env::temp_dir().join(format!("crn-elf-{}-{:?}", std::process::id(), std::thread::current().id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path);
        let _ = std::fs::remove_file(&path);
        file.expect("a temporary file")
    }

    /// A 64-bit ELF header whose one program header (at 64) has type `kind`.
    fn elf(kind: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; 64 + 56];
        bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes());
        bytes[54..56].copy_from_slice(&56u16.to_le_bytes());
        bytes[56..58].copy_from_slice(&1u16.to_le_bytes());
        bytes[64..68].copy_from_slice(&kind.to_le_bytes());
        bytes
    }

    #[test]
    fn a_program_with_an_interpreter_is_not_static() {
        let own = std::fs::File::open(std::env::current_exe().expect("exe")).expect("open");
        assert!(!without_interpreter(&own), "this test executable is linked dynamically");
        assert!(!without_interpreter(&file_of(&elf(3))));
        assert!(without_interpreter(&file_of(&elf(1))));
    }

    #[test]
    fn anything_else_is_not_static() {
        let whole = elf(1);
        assert!(!without_interpreter(&file_of(&whole[..60])), "a truncated header");
        assert!(!without_interpreter(&file_of(&whole[..100])), "truncated program headers");
        assert!(!without_interpreter(&file_of(b"#!/bin/sh\nexit 125\n")));
        let mut big_endian = whole.clone();
        big_endian[5] = 2;
        assert!(!without_interpreter(&file_of(&big_endian)));
        let mut none = whole;
        none[56] = 0;
        assert!(!without_interpreter(&file_of(&none)), "no program headers");
    }
}
