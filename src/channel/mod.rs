//! Talking to a child over a framed channel, shared by both backends: every byte from a child is
//! hostile. Every frame of every channel is described once, as data (`table`). JSON lines under a frame cap (`lines`), one iterative scan per line (`scan`, metering
//! values in place with `meter` and the exact number rules of `numbers`), the frames rebuilt field
//! by field (`codec`), and written as a sandbox process writes them (`child_frames`); every frame the host writes, and their decoding in a sandbox process
//! (`host_frames`), the queue they are written from (`frame_queue`), what a run may leave waiting in the host
//! (`backlog`: calls in flight and replies not yet taken), and the JSON text they and the JavaScript layer's events are made of (`wire`).

pub mod backlog;
pub mod child_frames;
pub mod codec;
pub mod frame_queue;
pub mod host_frames;
pub mod lines;
pub mod numbers;
pub mod scan;
pub mod table;
pub mod value_meter;
pub mod wire;
