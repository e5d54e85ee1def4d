//! Stray stdout/stderr (docs/budgets-and-ledger.md#stray-output): each pipe is split on `\n`,
//! each line decoded lossily as UTF-8 (WHATWG: an invalid byte or maximal subpart becomes U+FFFD,
//! cost 3) and admitted through the host log ledger. The unterminated residual carries a running
//! serialized cost so a newline-free flood is flushed (and truncated) as soon as it could no
//! longer fit.

use crate::ledger::byte_meter::{json_str_cost, QUOTES};
use crate::python::protocol::logs::LogLedger;

#[derive(Default)]
struct PipeBuf {
    buf: Vec<u8>,
    /// JSON content cost of `buf[..decoded]`.
    cost: usize,
    /// Bytes of `buf` already costed; the rest is an incomplete UTF-8 sequence.
    decoded: usize,
}

/// Content cost of the complete characters of `bytes`; returns (cost, bytes consumed).
fn cost_complete(bytes: &[u8]) -> (usize, usize) {
    let (mut cost, mut at) = (0usize, 0usize);
    loop {
        match std::str::from_utf8(&bytes[at..]) {
            Ok(s) => return (cost + str_cost(s), bytes.len()),
            Err(e) => {
                let valid = e.valid_up_to();
                cost += str_cost(std::str::from_utf8(&bytes[at..at + valid]).expect("valid prefix"));
                at += valid;
                match e.error_len() {
                    Some(n) => {
                        cost += 3;
                        at += n;
                    }
                    None => return (cost, at),
                }
            }
        }
    }
}

/// JSON string cost of `s` without its quotes.
fn str_cost(s: &str) -> usize {
    json_str_cost(s) - QUOTES
}

fn decode_lossy(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
}

impl PipeBuf {
    fn append(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        let (c, n) = cost_complete(&self.buf[self.decoded..]);
        self.cost += c;
        self.decoded += n;
    }

    fn clear(&mut self) {
        *self = PipeBuf::default();
    }

    /// Takes the residual's complete characters as an entry, keeping an incomplete UTF-8 tail.
    fn take_complete(&mut self) -> Option<Vec<u16>> {
        if self.decoded == 0 {
            return None;
        }
        let tail = self.buf.split_off(self.decoded);
        let text = decode_lossy(&self.buf);
        *self = PipeBuf::default();
        self.append(&tail);
        Some(text)
    }

    /// Takes everything (at pipe end or the close deadline), decoding an incomplete tail lossily.
    fn take_all(&mut self) -> Option<Vec<u16>> {
        if self.buf.is_empty() {
            return None;
        }
        let text = decode_lossy(&self.buf);
        self.clear();
        Some(text)
    }
}

/// Both stray pipes of one run.
#[derive(Default)]
pub struct Stray {
    pipes: [PipeBuf; 2],
}

/// Which stray pipe: 0 for stdout, 1 for stderr.
pub type Pipe = usize;

impl Stray {
    /// Feeds a chunk from `pipe`; returns indices of committed ledger entries.
    pub fn chunk(&mut self, pipe: Pipe, mut chunk: &[u8], ledger: &mut LogLedger) -> Vec<usize> {
        let mut out = Vec::new();
        if ledger.stopped() {
            return out;
        }
        while let Some(nl) = memchr::memchr(b'\n', chunk) {
            let p = &mut self.pipes[pipe];
            let text = if p.buf.is_empty() {
                decode_lossy(&chunk[..nl])
            } else {
                p.buf.extend_from_slice(&chunk[..nl]);
                let t = decode_lossy(&p.buf);
                p.clear();
                t
            };
            out.extend(ledger.line(text));
            chunk = &chunk[nl + 1..];
            if ledger.stopped() {
                self.clear();
                return out;
            }
        }
        let p = &mut self.pipes[pipe];
        if p.buf.is_empty() {
            // Right-sized copy of the tail.
            p.buf = Vec::with_capacity(chunk.len());
        }
        p.append(chunk);
        if self.pending_cost() + 3 > ledger.remaining() {
            out.extend(self.flush_complete(ledger));
        }
        out
    }

    fn pending_cost(&self) -> usize {
        self.pipes.iter().map(|p| p.cost).sum()
    }

    /// Flushes both residuals' complete characters (the budget can no longer hold them as pending).
    fn flush_complete(&mut self, ledger: &mut LogLedger) -> Vec<usize> {
        let mut out = Vec::new();
        for pipe in 0..2 {
            if let Some(text) = self.pipes[pipe].take_complete() {
                out.extend(ledger.line(text));
            }
        }
        if ledger.stopped() {
            self.clear();
        }
        out
    }

    /// Flushes one pipe entirely (at its end).
    pub fn end(&mut self, pipe: Pipe, ledger: &mut LogLedger) -> Vec<usize> {
        let text = self.pipes[pipe].take_all();
        let out = match text {
            Some(t) if !ledger.stopped() => ledger.line(t),
            _ => Vec::new(),
        };
        if ledger.stopped() {
            self.clear();
        }
        out
    }

    /// Flushes both pipes (at the close deadline).
    pub fn flush_all(&mut self, ledger: &mut LogLedger) -> Vec<usize> {
        let mut out = self.end(0, ledger);
        out.extend(self.end(1, ledger));
        out
    }

    /// Drops everything buffered (after the marker).
    pub fn clear(&mut self) {
        for p in self.pipes.iter_mut() {
            p.clear();
        }
    }

    /// Bytes held across both pipes.
    #[cfg(test)]
    pub fn held_bytes(&self) -> usize {
        self.pipes.iter().map(|p| p.buf.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::protocol::logs::log_truncation_marker;

    fn strs(l: &LogLedger) -> Vec<String> {
        l.logs().iter().map(|t| String::from_utf16_lossy(t)).collect()
    }

    #[test]
    fn lines_across_chunks_and_pipes() {
        let mut l = LogLedger::new(1000);
        let mut s = Stray::default();
        s.chunk(0, b"ra", &mut l);
        s.chunk(1, b"err\n", &mut l);
        s.chunk(0, b"w\n\nx", &mut l);
        s.end(0, &mut l);
        assert_eq!(strs(&l), vec!["err", "raw", "", "x"]);
    }

    #[test]
    fn invalid_utf8_costs_three() {
        assert_eq!(cost_complete(b"a\xffb"), (5, 3));
        assert_eq!(cost_complete(b"\xe2\x82"), (0, 0), "an incomplete tail is not costed yet");
        assert_eq!(cost_complete(b"\xe2\x82x"), (4, 3), "a maximal subpart is one U+FFFD");
        let mut l = LogLedger::new(1000);
        let mut s = Stray::default();
        s.chunk(0, b"\xe2\x82", &mut l);
        s.chunk(0, b"\xac\xff\n", &mut l);
        assert_eq!(strs(&l), vec!["€\u{fffd}"]);
        assert_eq!(l.remaining(), 999 - (2 + 3 + 3 + 1));
    }

    #[test]
    fn newline_free_flood_is_truncated_without_buffering_it() {
        let mut l = LogLedger::new(64);
        let mut s = Stray::default();
        for _ in 0..1000 {
            s.chunk(0, &[b'x'; 100], &mut l);
            assert!(s.held_bytes() <= 200);
        }
        assert_eq!(strs(&l), vec![log_truncation_marker(64)]);
        assert_eq!(s.held_bytes(), 0);
    }

    #[test]
    fn combined_pending_cost_flushes_both() {
        let mut l = LogLedger::new(40);
        let mut s = Stray::default();
        s.chunk(0, b"aaaaaaaaaa", &mut l);
        s.chunk(1, b"bbbbbbbbbb\xe2\x82", &mut l);
        // 10 + 10 pending, plus 3, fits 39; 10 more on stdout does not.
        assert!(l.logs().is_empty());
        s.chunk(0, b"cccccccccccccccccc", &mut l);
        assert_eq!(strs(&l), vec![format!("{}{}", "a".repeat(10), "c".repeat(18)), log_truncation_marker(40)]);
        assert_eq!(s.held_bytes(), 0);
    }
}
