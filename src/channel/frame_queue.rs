//! The host's frames to a child, queued under back-pressure: the one writer both backends use.
//! Frames go out whole and in order, each written as far as the non-blocking socket takes it;
//! the rest waits for the next `flush` (when the socket is writable again). Each frame carries a
//! tag saying what it is, so a failed write can be reported against the frame it hit.

use std::collections::VecDeque;
use std::os::fd::RawFd;

use super::backlog::{Refused, ReplyBacklog};

pub struct FrameQueue<K: Copy> {
    /// Each frame, its tag, and whether it counts in `replies`.
    frames: VecDeque<(Vec<u8>, K, bool)>,
    /// Replies queued and not yet written whole (src/channel/backlog.rs).
    replies: ReplyBacklog,
    /// Bytes of the first frame already written.
    written: usize,
    /// The socket failed: nothing more is queued or written.
    dead: bool,
}

impl<K: Copy> Default for FrameQueue<K> {
    fn default() -> Self {
        FrameQueue { frames: VecDeque::new(), replies: ReplyBacklog::default(), written: 0, dead: false }
    }
}

impl<K: Copy> FrameQueue<K> {
    /// Queues a frame behind the others (dropped once the socket failed).
    pub fn push(&mut self, frame: Vec<u8>, kind: K) {
        if !self.dead {
            self.frames.push_back((frame, kind, false));
        }
    }

    /// Queues a reply for the child, under the backlog's caps: refused (and not queued) when
    /// the child has left too many replies unread.
    pub fn push_reply(&mut self, frame: Vec<u8>, kind: K) -> Result<(), Refused> {
        if self.dead {
            return Ok(());
        }
        self.replies.admit(frame.len())?;
        self.frames.push_back((frame, kind, true));
        Ok(())
    }

    /// Whether bytes wait to be written.
    pub fn pending(&self) -> bool {
        !self.frames.is_empty()
    }

    /// Frames of which nothing has been written yet.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.frames.len() - usize::from(self.written > 0)
    }

    pub fn is_dead(&self) -> bool {
        self.dead
    }

    /// Writes until the queue is empty or the socket would block. A failed write (the peer is
    /// gone) empties the queue for good and names the kind of frame it hit.
    pub fn flush(&mut self, fd: RawFd) -> Result<(), (K, std::io::Error)> {
        while let Some((frame, kind, _)) = self.frames.front() {
            let rest = &frame[self.written..];
            // SAFETY: writing from a live buffer; MSG_NOSIGNAL keeps a closed peer from raising
            // SIGPIPE in the host.
            let n = unsafe { libc::send(fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted) {
                    return Ok(());
                }
                let kind = *kind;
                self.dead = true;
                self.frames.clear();
                self.replies.clear();
                self.written = 0;
                return Err((kind, e));
            }
            self.written += n as usize;
            if self.written == frame.len() {
                if let Some((frame, _, true)) = self.frames.pop_front() {
                    self.replies.taken(frame.len());
                }
                self.written = 0;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        (a, b)
    }

    #[test]
    fn frames_go_out_whole_and_in_order_under_back_pressure() {
        let (host, mut child) = pair();
        let mut queue = FrameQueue::default();
        let big = vec![b'x'; 4 << 20];
        queue.push(b"first\n".to_vec(), 1);
        queue.push(big.clone(), 2);
        queue.push(b"last\n".to_vec(), 3);
        assert_eq!(queue.waiting(), 3);
        queue.flush(host.as_raw_fd()).unwrap();
        // The socket took part of the large frame and would block on the rest.
        assert!(queue.pending());
        assert_eq!(queue.waiting(), 1, "the large frame is under way, the last one waits");
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        while got.len() < 6 + big.len() + 5 {
            let n = child.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
            queue.flush(host.as_raw_fd()).unwrap();
        }
        assert!(!queue.pending());
        assert_eq!(&got[..6], b"first\n");
        assert!(got[6..6 + big.len()].iter().all(|&b| b == b'x'));
        assert_eq!(&got[6 + big.len()..], b"last\n");
    }

    #[test]
    fn replies_a_child_leaves_unread_are_refused_at_the_cap_and_released_as_written() {
        let (host, mut child) = pair();
        let mut queue = FrameQueue::default();
        queue.push(b"run\n".to_vec(), 0);
        let mut refused = None;
        for i in 0..5000 {
            if let Err(e) = queue.push_reply(b"{\"type\":\"reply\"}\n".to_vec(), 1) {
                refused = Some((i, e));
                break;
            }
            queue.flush(host.as_raw_fd()).unwrap();
        }
        // The socket's buffer took some replies whole; the rest wait up to the cap.
        let (at, why) = refused.expect("the cap refused a reply");
        assert_eq!(why, crate::channel::backlog::Refused::Frames);
        assert!(at >= crate::channel::backlog::MAX_WAITING_REPLIES);
        let mut buf = vec![0u8; 1 << 20];
        while queue.pending() {
            let _ = child.read(&mut buf).unwrap();
            queue.flush(host.as_raw_fd()).unwrap();
        }
        assert_eq!((queue.replies.frames(), queue.replies.bytes()), (0, 0));
        assert!(queue.push_reply(b"again\n".to_vec(), 1).is_ok());
    }

    #[test]
    fn a_failed_write_names_its_frame_and_ends_the_queue() {
        let (host, child) = pair();
        drop(child);
        let mut queue = FrameQueue::default();
        queue.push(b"run\n".to_vec(), "run");
        queue.push(b"reply\n".to_vec(), "reply");
        let (kind, e) = queue.flush(host.as_raw_fd()).unwrap_err();
        assert_eq!(kind, "run");
        assert_eq!(e.raw_os_error(), Some(libc::EPIPE));
        assert!(queue.is_dead() && !queue.pending());
        queue.push(b"later\n".to_vec(), "reply");
        assert!(!queue.pending(), "nothing is queued after the socket failed");
        assert!(queue.flush(host.as_raw_fd()).is_ok());
    }
}
