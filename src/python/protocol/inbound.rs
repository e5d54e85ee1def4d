//! What a run takes from fd 3: the channel's codec reads the line as hostile, and a Python
//! child's frames are narrowed to what it may say (no `stop`, no verdict of the host's).

use crate::channel::codec::{decode_frame, ChildFrame};
use crate::outcome::{FailureKind, StoppedAt};

/// A frame read from fd 3, owned (its line is gone).
#[derive(Debug, PartialEq)]
pub enum Inbound {
    BootAck,
    Log {
        text: Vec<u16>,
        truncated: bool,
        open: bool,
    },
    Call {
        id: f64,
        global: Vec<u16>,
        name: Vec<u16>,
        args: String,
    },
    Done {
        value: Option<(String, crate::channel::value_meter::Metered)>,
        error: Option<(FailureKind, Vec<u16>)>,
    },
    /// Where the host's SIGTERM found the program (taken only after the host decided the end).
    Stopped(StoppedAt),
}

pub fn inbound(line: &[u8], budget: usize) -> Option<Inbound> {
    let text = |r: (usize, usize)| String::from_utf8_lossy(&line[r.0..r.1]).into_owned();
    Some(match decode_frame(line, budget)? {
        ChildFrame::BootAck => Inbound::BootAck,
        ChildFrame::Log { text, truncated, open } => Inbound::Log { text, truncated, open },
        ChildFrame::Call { id, global, name, args } => Inbound::Call { id, global, name, args: text(args) },
        ChildFrame::Done { value, error, .. } => {
            // Budget verdicts are the host's: a child naming one sent a malformed frame.
            if error.as_ref().is_some_and(|(kind, _)| !kind.child_reportable()) {
                return None;
            }
            Inbound::Done { value: value.map(|v| (text(v.range), v.metered)), error }
        }
        ChildFrame::Stopped(at) => Inbound::Stopped(at),
        ChildFrame::Stop { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::table::{check::reader_agrees, Channel, Dir, ISOLATE_KINDS, PYTHON_KINDS};

    #[test]
    fn a_run_reads_what_the_table_says() {
        let ty = |frame: &Inbound| match frame {
            Inbound::BootAck => "boot-ack",
            Inbound::Log { .. } => "log",
            Inbound::Call { .. } => "call",
            Inbound::Done { .. } => "done",
            Inbound::Stopped(_) => "stopped",
        };
        reader_agrees(Channel::Fd3, Dir::ToHost, |line| inbound(line, 1 << 20), ty);
        // The isolate's kinds a Python child may not name are dropped.
        for kind in ISOLATE_KINDS {
            let line = format!(r#"{{"type":"done","error":{{"kind":"{kind}","message":"m"}}}}"#);
            assert_eq!(inbound(line.as_bytes(), 100).is_some(), PYTHON_KINDS.contains(kind), "{kind}");
        }
    }
}
