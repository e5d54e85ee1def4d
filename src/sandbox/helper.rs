//! Where the sandbox helper executable is: beside the addon's own file (the platform package,
//! or the source checkout after a build), found once per process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

/// The Python template's library (crates/python-entry), as cargo names it.
pub const PYTHON_LIBRARY_NAME: &str = "libcode_runtime_native_python.so";

/// The Python template's library beside the helper; `None` when it is not there (the template
/// then does not start, and each run spawns its interpreter).
pub fn python_library() -> Option<PathBuf> {
    let library = path()?.parent()?.join(PYTHON_LIBRARY_NAME);
    library.is_file().then_some(library)
}
