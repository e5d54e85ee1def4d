//! fd-3 writes from the host: `boot`, then `run`, then replies, through the channel's one frame
//! queue (src/channel/frame_queue.rs), each frame tagged with what it is.

use crate::channel::frame_queue::FrameQueue;

/// Which frame a write error hit: a failed `boot` or `run` fails the run, a failed reply does not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Boot,
    Run,
    Reply,
}

pub type Writer = FrameQueue<WriteKind>;
