//! The host's lifeline: a pipe whose write end only the host holds (close-on-exec, never
//! written). Each sandbox helper gets the read end and reads end-of-file exactly when the host
//! has died, however it died (SIGKILL included), and then kills its run. A parent-death signal
//! would not do: it fires when the *thread* that forked the helper exits.
//!
//! The pipe exists while some child may watch it: each launch through the helper takes a
//! [`Hold`], kept by whoever owns that child until it is reaped. When the last hold goes (every
//! runtime disposed, every child gone) the pipe is closed, and the next launch makes a new one:
//! a host that disposed its runtimes holds no descriptor of ours.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

use crate::panic::Lock;

struct Pipe {
    read: OwnedFd,
    _write: OwnedFd,
    holders: usize,
}

static PIPE: Mutex<Option<Pipe>> = Mutex::new(None);

/// A launched child's claim on the lifeline; the pipe stays open while any exists.
pub struct Hold {
    read: RawFd,
}

impl Hold {
    /// The read end to hand to a helper (valid while this hold lives).
    pub fn read_end(&self) -> RawFd {
        self.read
    }
}

/// A hold on the lifeline, making the pipe if none is open (`None` if it could not be made:
/// runs then go on without it, as before).
pub fn hold() -> Option<Hold> {
    let mut slot = PIPE.locked();
    if slot.is_none() {
        let (r, w) = super::fds::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
        // Above the descriptors a child's are placed at, so placing it clobbers none.
        let read = super::fds::high_fd(&r).ok()?;
        *slot = Some(Pipe { read, _write: w, holders: 0 });
    }
    let pipe = slot.as_mut()?;
    pipe.holders += 1;
    Some(Hold { read: pipe.read.as_raw_fd() })
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut slot = PIPE.locked();
        if let Some(pipe) = slot.as_mut() {
            pipe.holders -= 1;
            if pipe.holders == 0 {
                *slot = None;
            }
        }
    }
}
