//! The host's frames to a sandbox process, queued under back-pressure.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use crate::channel::backlog::Refused;
use crate::channel::frame_queue::FrameQueue;

/// The host's frames to the sandbox process, written by whoever has one (Node's main thread a
/// reply, the supervisor the run and abort frames) under one lock, so frames never interleave;
/// what the socket does not take at once the supervisor writes when it can.
#[derive(Default)]
pub struct Outbound {
    queue: FrameQueue<()>,
    pub(super) channel: Option<UnixStream>,
}

impl Outbound {
    /// Queues a frame and writes what the socket takes now; true when bytes remain queued.
    pub fn push(&mut self, frame: Vec<u8>) -> bool {
        if self.channel.is_none() {
            return false;
        }
        self.queue.push(frame, ());
        self.flush()
    }

    /// Queues a reply under the backlog's caps (src/channel/backlog.rs); `Ok(true)` when bytes
    /// remain queued.
    pub fn push_reply(&mut self, frame: Vec<u8>) -> Result<bool, Refused> {
        if self.channel.is_none() {
            return Ok(false);
        }
        self.queue.push_reply(frame, ())?;
        Ok(self.flush())
    }

    pub(super) fn flush(&mut self) -> bool {
        let Some(channel) = self.channel.as_ref() else { return false };
        // A failed write means the process is gone; the supervisor sees that on its own.
        let _ = self.queue.flush(channel.as_raw_fd());
        self.queue.pending()
    }
}
