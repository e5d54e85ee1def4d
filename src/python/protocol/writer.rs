//! fd-3 writes from the host: `boot`, then `run`, then replies one at a time, each encoded only
//! when it is next, under back-pressure from the non-blocking socket.

use std::collections::VecDeque;
use std::os::fd::RawFd;

use crate::channel::host_frames;

/// Which frame a write error hit: a failed `boot` or `run` fails the run, a failed reply does not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Boot,
    Run,
    Reply,
}

pub struct Writer {
    current: Option<(Vec<u8>, usize, WriteKind)>,
    run: Option<Vec<u8>>,
    replies: VecDeque<(f64, bool, String)>,
    /// The socket failed; nothing more is written (the close path settles the run).
    dead: bool,
}

impl Writer {
    /// A writer whose first frame is `boot`.
    pub fn new(boot: Vec<u8>) -> Self {
        Writer { current: Some((boot, 0, WriteKind::Boot)), run: None, replies: VecDeque::new(), dead: false }
    }

    /// Whether the socket failed; nothing is written after that.
    pub fn is_dead(&self) -> bool {
        self.dead
    }

    /// Queues `run`, which goes out before any reply.
    pub fn queue_run(&mut self, frame: Vec<u8>) {
        self.run = Some(frame);
    }

    /// Replies waiting unwritten (the one being written is not counted).
    pub fn queued_replies(&self) -> usize {
        self.replies.len()
    }

    /// Queues a reply, encoded only when it is next.
    pub fn queue_reply(&mut self, id: f64, ok: bool, payload: String) {
        self.replies.push_back((id, ok, payload));
    }

    pub fn pending(&self) -> bool {
        !self.dead && (self.current.is_some() || self.run.is_some() || !self.replies.is_empty())
    }

    fn load(&mut self) {
        if self.current.is_some() {
            return;
        }
        if let Some(run) = self.run.take() {
            self.current = Some((run, 0, WriteKind::Run));
        } else if let Some((id, ok, payload)) = self.replies.pop_front() {
            self.current = Some((host_frames::reply_frame(id, ok, &payload), 0, WriteKind::Reply));
        }
    }

    /// Writes until the socket would block. An error reports the kind of frame it hit.
    pub fn flush(&mut self, fd: RawFd) -> Result<(), (WriteKind, std::io::Error)> {
        while !self.dead {
            self.load();
            let Some((buf, at, kind)) = self.current.as_mut() else {
                return Ok(());
            };
            // SAFETY: writing from a live buffer to our own non-blocking socket; MSG_NOSIGNAL
            // keeps a closed peer from raising SIGPIPE in the host.
            let n = unsafe { libc::send(fd, buf[*at..].as_ptr().cast(), buf.len() - *at, libc::MSG_NOSIGNAL) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::Interrupted {
                    return Ok(());
                }
                let kind = *kind;
                self.dead = true;
                self.current = None;
                self.run = None;
                self.replies.clear();
                return Err((kind, e));
            }
            *at += n as usize;
            if *at == buf.len() {
                self.current = None;
            }
        }
        Ok(())
    }
}
