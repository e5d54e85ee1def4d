//! Where this addon's sandbox helper must be, for the load-time check (lib/sandbox-helper.mjs): a
//! platform whose package ships the helper (Linux) must not run children without it unless the
//! host chose to, so the check needs the path even when the file is absent or unusable, which
//! `sandbox::helper::path()` (the usable helper, or none) does not say; and which file the native
//! side will start children through, which `allowUnsandboxed` cannot change.

use napi_derive::napi;

/// The helper's path beside the addon file this process loaded; `null` where no helper ships.
#[napi(catch_unwind)]
pub fn sandbox_helper_path() -> napi::Result<Option<String>> {
    #[cfg(target_os = "linux")]
    {
        use crate::sandbox::helper::{own_file, HELPER_NAME};
        let unknown = || {
            napi::Error::from_reason(
                "cannot tell which file this addon was loaded from (dladdr), so the sandbox helper beside it cannot be found",
            )
        };
        let addon = own_file().ok_or_else(unknown)?;
        let path = addon.parent().ok_or_else(unknown)?.join(HELPER_NAME);
        path.into_os_string().into_string().map(Some).map_err(|path| {
            napi::Error::from_reason(format!("the sandbox helper's path is not UTF-8: {}", path.to_string_lossy()))
        })
    }
    #[cfg(not(target_os = "linux"))]
    Ok(None)
}

/// The helper children are actually started through (`sandbox::helper::path()`: an executable
/// file beside the addon); `null` when there is none, and children start without it.
#[napi(catch_unwind)]
pub fn sandbox_helper_in_use() -> Option<String> {
    #[cfg(unix)]
    {
        crate::sandbox::helper::path().map(|p| p.to_string_lossy().into_owned())
    }
    #[cfg(not(unix))]
    None
}
