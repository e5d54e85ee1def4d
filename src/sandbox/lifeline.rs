//! The host's lifeline: a pipe made once per host process whose write end only the host holds
//! (close-on-exec, never written). Each sandbox helper gets the read end and reads end-of-file
//! exactly when the host has died, however it died (SIGKILL included), and then kills its run.
//! A parent-death signal would not do: it fires when the *thread* that forked the helper exits.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The read end to hand to a helper (`None` if the pipe could not be made: runs then go on
/// without it, as before).
pub fn read_end() -> Option<RawFd> {
    static PIPE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();
    let (read, _write) = PIPE
        .get_or_init(|| {
            let (r, w) = super::fds::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
            // Above the descriptors a child's are placed at, so placing it clobbers none.
            Some((super::fds::high_fd(&r).ok()?, w))
        })
        .as_ref()?;
    Some(read.as_raw_fd())
}
