//! The fd-3 protocol's host half: the frames a run takes in (`inbound`), the events a run reports into JavaScript, the frames the host writes (`writer`), the log ledger (`logs`) and a child's stray stdout/stderr (`stray`).

pub mod events;
pub mod inbound;
pub mod logs;
pub mod stray;
pub mod writer;
