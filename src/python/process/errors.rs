//! Error texts in the shape Node gives them, so messages read like the reference backend's
//! (`spawn /usr/bin/python3 ENOENT`, `write EPIPE`, `ENOENT: no such file or directory, mkdtemp '…'`).

use std::io;

/// The errno's symbolic name (`EPIPE`), or `E<number>` for unusual ones.
pub fn code(err: &io::Error) -> String {
    let Some(n) = err.raw_os_error() else {
        return err.kind().to_string();
    };
    let name = match n {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::E2BIG => "E2BIG",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::ECHILD => "ECHILD",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::EPIPE => "EPIPE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ELOOP => "ELOOP",
        libc::ECONNRESET => "ECONNRESET",
        libc::ENOTCONN => "ENOTCONN",
        libc::EDQUOT => "EDQUOT",
        _ => return format!("E{n}"),
    };
    name.to_string()
}

/// `strerror` text with a lowercase first letter, as libuv spells it.
fn description(err: &io::Error) -> String {
    let text = match err.raw_os_error() {
        Some(n) => {
            // SAFETY: strerror returns a pointer to a NUL-terminated static or thread-local string.
            let p = unsafe { libc::strerror(n) };
            if p.is_null() {
                err.to_string()
            } else {
                // SAFETY: a non-null strerror result is a NUL-terminated string.
                unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        }
        None => err.to_string(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// `<syscall> <CODE>`, e.g. `write EPIPE`.
pub fn syscall(call: &str, err: &io::Error) -> String {
    format!("{call} {}", code(err))
}

/// `<CODE>: <description>, <syscall> '<path>'` (Node's fs errors).
pub fn fs(call: &str, path: &str, err: &io::Error) -> String {
    format!("{}: {}, {call} '{path}'", code(err), description(err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_shapes() {
        let e = io::Error::from_raw_os_error(libc::EPIPE);
        assert_eq!(syscall("write", &e), "write EPIPE");
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(fs("mkdtemp", "/x/y-XXXXXX", &e), "ENOENT: no such file or directory, mkdtemp '/x/y-XXXXXX'");
    }
}
