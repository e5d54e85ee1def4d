//! The host's frames to a sandbox process, queued under back-pressure.

use std::io::Write;
use std::os::unix::net::UnixStream;

/// The host's frames to the sandbox process, written by whoever has one (Node's main thread a
/// reply, the supervisor the run and abort frames) under one lock, so frames never interleave;
/// what the socket does not take at once the supervisor writes when it can.
#[derive(Default)]
pub struct Outbound {
    buf: Vec<u8>,
    pub(super) channel: Option<UnixStream>,
}

impl Outbound {
    /// Queues a frame and writes what the socket takes now; true when bytes remain queued.
    pub fn push(&mut self, frame: &[u8]) -> bool {
        if self.channel.is_none() {
            return false;
        }
        self.buf.extend_from_slice(frame);
        self.flush()
    }

    pub(super) fn flush(&mut self) -> bool {
        let Some(channel) = self.channel.as_ref() else { return false };
        while !self.buf.is_empty() {
            match (&*channel).write(&self.buf) {
                Ok(n) => {
                    self.buf.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                // The process is gone; the supervisor sees that on its own.
                Err(_) => self.buf.clear(),
            }
        }
        false
    }
}
