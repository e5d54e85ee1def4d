//! The host's log ledger (docs/budgets-and-ledger.md#log-ledger): every admitted entry is charged
//! its JSON-string size plus a separator against `maxLogBytes − 1`, so `JSON.stringify(logs)` never
//! exceeds `maxLogBytes`; the first entry that does not fit is dropped whole and replaced by the one
//! truncation marker, which is not charged and is always last.

use crate::ledger::byte_meter::json_string_cost;

/// `[code-runtime-native] log capture truncated at <N> bytes`
pub fn log_truncation_marker(max_bytes: usize) -> String {
    format!("[code-runtime-native] log capture truncated at {max_bytes} bytes")
}

pub struct LogLedger {
    max_bytes: usize,
    remaining: usize,
    logs: Vec<Vec<u16>>,
    /// An open entry: its admitted fragments so far, waiting for the rest of the line.
    held: Option<Vec<u16>>,
    stopped: bool,
}

impl LogLedger {
    pub fn new(max_bytes: usize) -> Self {
        LogLedger { max_bytes, remaining: max_bytes.saturating_sub(1), logs: Vec::new(), held: None, stopped: false }
    }

    /// Whether the marker was pushed; nothing is captured after it.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    pub fn remaining(&self) -> usize {
        self.remaining
    }

    pub fn logs(&self) -> &[Vec<u16>] {
        &self.logs
    }

    pub fn into_logs(mut self) -> Vec<Vec<u16>> {
        self.commit_held();
        self.logs
    }

    /// Charges `cost` if it fits (after the cheap lower bound `units + overhead`).
    fn charge(&mut self, units: usize, overhead: usize, text: &[u16], cost: impl Fn(usize) -> usize) -> bool {
        if units + overhead > self.remaining {
            return false;
        }
        let c = cost(json_string_cost(text));
        if c > self.remaining {
            return false;
        }
        self.remaining -= c;
        true
    }

    /// A held open prefix becomes an entry (at settlement, or before a marker).
    pub fn commit_held(&mut self) -> Option<usize> {
        let held = self.held.take()?;
        self.logs.push(held);
        Some(self.logs.len() - 1)
    }

    /// Pushes the marker once and stops capturing. Returns the committed entries' indices.
    pub fn truncate(&mut self) -> Vec<usize> {
        if self.stopped {
            return Vec::new();
        }
        let mut out: Vec<usize> = self.commit_held().into_iter().collect();
        self.logs.push(log_truncation_marker(self.max_bytes).encode_utf16().collect());
        out.push(self.logs.len() - 1);
        self.stopped = true;
        out
    }

    /// A `log` frame from fd 3. Returns the indices of entries committed by it.
    pub fn frame(&mut self, text: Vec<u16>, open: bool, truncated: bool) -> Vec<usize> {
        if self.stopped {
            return Vec::new();
        }
        if truncated {
            // The host pushes its own marker, never the frame's text.
            return self.truncate();
        }
        if self.held.is_some() {
            // A continuation costs only its content: the quotes and separator were charged already.
            if !self.charge(text.len(), 0, &text, |c| c - 2) {
                return self.truncate();
            }
            self.held.as_mut().expect("held").extend_from_slice(&text);
            if open {
                return Vec::new();
            }
            return self.commit_held().into_iter().collect();
        }
        if !self.charge(text.len(), 3, &text, |c| c + 1) {
            return self.truncate();
        }
        if open {
            self.held = Some(text);
            return Vec::new();
        }
        self.logs.push(text);
        vec![self.logs.len() - 1]
    }

    /// A whole entry from stray stdout/stderr.
    pub fn line(&mut self, text: Vec<u16>) -> Vec<usize> {
        if self.stopped {
            return Vec::new();
        }
        if !self.charge(text.len(), 3, &text, |c| c + 1) {
            return self.truncate();
        }
        self.logs.push(text);
        vec![self.logs.len() - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }
    fn strs(l: &LogLedger) -> Vec<String> {
        l.logs().iter().map(|t| String::from_utf16_lossy(t)).collect()
    }
    fn serialized(l: &[Vec<u16>]) -> usize {
        2 + l.iter().map(|t| json_string_cost(&t[..])).sum::<usize>() + l.len().saturating_sub(1)
    }

    #[test]
    fn marker_text() {
        assert_eq!(log_truncation_marker(64), "[code-runtime-native] log capture truncated at 64 bytes");
    }

    #[test]
    fn flood_under_64_bytes() {
        let mut l = LogLedger::new(64);
        for i in 0..1000 {
            l.frame(u(&format!("line {i}")), false, false);
        }
        let logs = l.into_logs();
        let (admitted, marker) = logs.split_at(logs.len() - 1);
        assert_eq!(serialized(admitted), 64, "seven 8-byte entries and six commas fill it exactly");
        assert_eq!(String::from_utf16_lossy(&marker[0]), log_truncation_marker(64));
        assert_eq!(admitted.len(), 7);
    }

    #[test]
    fn exact_fit_and_one_over() {
        // maxLogBytes 10: ["abcdef"] is 10 bytes.
        let mut l = LogLedger::new(10);
        l.frame(u("abcdef"), false, false);
        assert_eq!(strs(&l), vec!["abcdef"]);
        let mut l = LogLedger::new(10);
        l.frame(u("abcdefg"), false, false);
        assert_eq!(strs(&l), vec![log_truncation_marker(10)]);
    }

    #[test]
    fn open_entries_merge_and_bill_once() {
        let mut l = LogLedger::new(64);
        assert!(l.frame(u("a"), true, false).is_empty());
        assert_eq!(l.frame(u("b"), false, false), vec![0]);
        assert_eq!(strs(&l), vec!["ab"]);
        assert_eq!(l.remaining(), 63 - 5);
        // A held prefix is committed before the marker.
        let mut l = LogLedger::new(64);
        l.frame(u("start"), true, false);
        l.frame(u(&"x".repeat(100)), false, false);
        assert_eq!(strs(&l), vec!["start".to_string(), log_truncation_marker(64)]);
    }

    #[test]
    fn forged_truncated_frames_push_the_host_marker_once() {
        let mut l = LogLedger::new(100);
        l.frame(u("ok"), false, false);
        l.frame(u("forged text"), false, true);
        l.frame(u("after"), false, false);
        l.frame(u("forged again"), false, true);
        l.line(u("stray"));
        assert_eq!(strs(&l), vec!["ok".to_string(), log_truncation_marker(100)]);
    }

    #[test]
    fn escapes_are_billed() {
        // "\u0000" costs 8 with quotes; ledger 15 − 1 = 14 → one fits (9), a second does not.
        let mut l = LogLedger::new(15);
        l.line(vec![0]);
        l.line(vec![0]);
        assert_eq!(l.logs().len(), 2);
        assert_eq!(String::from_utf16_lossy(&l.logs()[1]), log_truncation_marker(15));
        let mut l = LogLedger::new(64);
        l.frame(vec![0xd800], false, false);
        assert_eq!(l.remaining(), 63 - 9);
    }
}
