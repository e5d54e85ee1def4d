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

/// The helper's static build beside the helper, which a Python spare's keeper and init exec in
/// their roles (no dynamic loader: each exec costs less); `None` when it is not there or does not
/// start as the helper does (with no arguments it exits with `EXIT_USAGE`), and the helper then
/// serves those roles itself. Checked once per process.
pub fn roles() -> Option<&'static Path> {
    static ROLES: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROLES
        .get_or_init(|| {
            let roles = path()?.parent()?.join(ROLES_NAME);
            (executable(&roles) && starts(&roles)).then_some(roles)
        })
        .as_deref()
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
