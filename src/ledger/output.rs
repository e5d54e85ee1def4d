//! The isolate backend's one exact output ledger (docs/budgets-and-ledger.md#the-output-ledger):
//! logs are charged as they are emitted, the completion or failure message is charged at the end,
//! and an overflow becomes the `output-limit` result whose size never exceeds the cap.

use super::byte_meter::{fitting_str_prefix, json_str_cost};
use super::logbook::LogBook;
use super::text::Text;
use crate::outcome::FailureKind;

/// What the streaming ledger did with one log entry.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// The whole entry was admitted.
    Whole,
    /// The entry overflowed; this many code units of it were admitted as a final prefix (may be 0).
    /// The run must end now as an output-limit result.
    Overflow { prefix_units: usize },
    /// The ledger already overflowed earlier; nothing is admitted.
    Closed,
}

/// A run's result after the ledger: exactly the seam's shape.
#[derive(Debug)]
pub struct LedgerResult {
    pub logs: LogBook,
    /// Compact JSON text of the completion value (lone surrogates escaped), when there is one.
    pub value_json: Option<String>,
    pub error: Option<(FailureKind, Text)>,
}

#[derive(Debug)]
pub struct OutputLedger {
    cap: usize,
    /// UTF-8 bytes of `JSON.stringify(logs)` for the admitted entries.
    log_bytes: usize,
    /// The same for the entries in `logs` alone (`log_bytes` less an overflow's admitted prefix).
    book_bytes: usize,
    logs: LogBook,
    /// Full text of the entry that overflowed the stream, the last candidate of the limit result.
    overflowed: Option<Text>,
}

impl OutputLedger {
    pub fn new(cap: usize) -> Self {
        OutputLedger { cap, log_bytes: 2, book_bytes: 2, logs: LogBook::default(), overflowed: None }
    }

    /// Bytes left for the completion value or failure message.
    pub fn remaining(&self) -> usize {
        self.cap.saturating_sub(self.log_bytes)
    }

    fn separator(&self) -> usize {
        usize::from(!self.logs.is_empty())
    }

    /// Charges one log entry in emission order (docs/budgets-and-ledger.md#streaming).
    pub fn push(&mut self, text: &Text) -> Admission {
        if self.overflowed.is_some() {
            return Admission::Closed;
        }
        let sep = self.separator();
        let budget = self.cap.saturating_sub(self.log_bytes + sep);
        // Cheap lower bound first: every code unit costs at least one byte.
        if text.len() + 2 <= budget {
            let cost = text.json_cost();
            if cost <= budget {
                self.log_bytes += sep + cost;
                self.book_bytes = self.log_bytes;
                self.logs.push(text);
                return Admission::Whole;
            }
        }
        let prefix_units = text.fitting_prefix(budget).unwrap_or(0);
        if prefix_units > 0 {
            let prefix = text.slice(prefix_units);
            self.log_bytes += sep + prefix.json_cost();
            // The admitted prefix is streamed, but the limit result recomputes from the full text.
            self.overflowed = Some(text.clone());
            return Admission::Overflow { prefix_units };
        }
        self.overflowed = Some(text.clone());
        Admission::Overflow { prefix_units: 0 }
    }

    /// Ends the run with a success. `value` is the completion's JSON text and its metered size.
    pub fn finish_value(self, value: Option<(String, usize)>) -> LedgerResult {
        if self.overflowed.is_some() {
            return self.limit_result();
        }
        match value {
            None => LedgerResult { logs: self.logs, value_json: None, error: None },
            Some((json, cost)) if cost <= self.remaining() => {
                LedgerResult { logs: self.logs, value_json: Some(json), error: None }
            }
            Some(_) => self.limit_result(),
        }
    }

    /// Whether a failure message of this quoted size fits what is left.
    pub fn message_fits(&self, quoted_cost: usize) -> bool {
        self.overflowed.is_none() && quoted_cost <= self.remaining()
    }

    /// Ends the run with a failure; the message is charged to the ledger
    /// (docs/budgets-and-ledger.md#terminal-preflight).
    pub fn finish_failure(self, kind: FailureKind, message: Text) -> LedgerResult {
        if kind == FailureKind::OutputLimit || !self.message_fits(message.json_cost()) {
            return self.limit_result();
        }
        LedgerResult { logs: self.logs, value_json: None, error: Some((kind, message)) }
    }

    /// The output-limit result (docs/budgets-and-ledger.md#the-limit-result): as many candidate
    /// entries as fit beside the diagnostic, then the diagnostic itself, cut under tiny caps. The
    /// candidates are the admitted entries, then the one that overflowed; the whole ones kept are
    /// the longest run from the first that fits, then a prefix of the next. The admitted entries
    /// cost `book_bytes` together, so the cut is found from their end, through the few entries a
    /// diagnostic's bytes cover: a program that printed millions of entries is not walked again
    /// (it was, on Node's main thread, 40 ms for two million).
    pub fn limit_result(self) -> LedgerResult {
        let cap = self.cap;
        let full = format!("outer output exceeded {cap} bytes");
        let msg_bytes = json_str_cost(&full);
        let mut logs = self.logs;
        let mut kept = 0usize;
        let mut used = 2usize;
        let mut last = None;
        if let Some(log_budget) = cap.checked_sub(msg_bytes).filter(|b| *b >= 2) {
            kept = logs.len();
            used = self.book_bytes;
            while kept > 0 && used > log_budget {
                kept -= 1;
                used -= logs.get(kept).json_cost() + usize::from(kept > 0);
            }
            let sep = usize::from(kept > 0);
            let room = log_budget.saturating_sub(used + sep);
            last = match (kept < logs.len(), &self.overflowed) {
                (true, _) => {
                    let next = logs.get(kept);
                    next.fitting_prefix(room).filter(|u| *u > 0).map(|units| next.to_text(units))
                }
                (false, Some(next)) if next.json_cost() <= room => Some(next.clone()),
                (false, Some(next)) => next.fitting_prefix(room).filter(|u| *u > 0).map(|units| next.slice(units)),
                (false, None) => None,
            };
        }
        logs.truncate(kept);
        if let Some(cut) = last {
            used += usize::from(kept > 0) + cut.json_cost();
            logs.push(&cut);
        }
        let message = fitting_str_prefix(&full, cap.saturating_sub(used)).to_string();
        LedgerResult { logs, value_json: None, error: Some((FailureKind::OutputLimit, Text::new(&message))) }
    }
}

/// Bytes of `JSON.stringify(logs)`.
#[cfg(test)]
pub fn logs_cost(logs: &LogBook) -> usize {
    2 + logs.iter().map(|t| t.json_cost()).sum::<usize>() + logs.len().saturating_sub(1)
}

/// A failure that happens before any isolate exists goes through a fresh ledger
/// (docs/budgets-and-ledger.md#terminal-preflight).
pub fn fresh_failure(cap: usize, kind: FailureKind, message: Text) -> LedgerResult {
    OutputLedger::new(cap).finish_failure(kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Text {
        Text::new(s)
    }
    fn strs(logs: &LogBook) -> Vec<String> {
        logs.to_texts().iter().map(|l| l.to_string_lossy()).collect()
    }
    fn msg(r: &LedgerResult) -> (String, String) {
        let (k, m) = r.error.as_ref().unwrap();
        (k.as_str().to_string(), m.to_string_lossy())
    }
    fn total(r: &LedgerResult) -> usize {
        logs_cost(&r.logs)
            + r.error.as_ref().map(|(_, m)| m.json_cost()).unwrap_or(0)
            + r.value_json.as_ref().map(|v| v.len()).unwrap_or(0)
    }

    #[test]
    fn streaming_cap_15() {
        let mut l = OutputLedger::new(15);
        assert_eq!(l.push(&t("12345")), Admission::Whole);
        assert_eq!(l.push(&t("123456")), Admission::Overflow { prefix_units: 3 });
        assert_eq!(l.push(&t("dropped")), Admission::Closed);
        assert_eq!(l.remaining(), 0);
        let r = l.limit_result();
        assert_eq!(strs(&r.logs), Vec::<String>::new());
        assert_eq!(msg(&r), ("output-limit".into(), "outer outpu".into()));
        assert!(total(&r) <= 15);
    }

    #[test]
    fn streaming_cap_6_has_no_empty_prefix() {
        let mut l = OutputLedger::new(6);
        assert_eq!(l.push(&t("12")), Admission::Whole);
        assert_eq!(l.push(&t("no-prefix-fits")), Admission::Overflow { prefix_units: 0 });
    }

    #[test]
    fn worked_boundaries() {
        // return "€" at 7 and 6
        let r = OutputLedger::new(7).finish_value(Some(("\"€\"".into(), 5)));
        assert_eq!(r.value_json.as_deref(), Some("\"€\""));
        let r = OutputLedger::new(6).finish_value(Some(("\"€\"".into(), 5)));
        assert_eq!(msg(&r).1, "ou");
        // console.log("abc"); return "xy" at 11 and 10
        let mut l = OutputLedger::new(11);
        l.push(&t("abc"));
        assert!(l.finish_value(Some(("\"xy\"".into(), 4))).value_json.is_some());
        let mut l = OutputLedger::new(10);
        l.push(&t("abc"));
        let r = l.finish_value(Some(("\"xy\"".into(), 4)));
        assert_eq!((strs(&r.logs), msg(&r).1), (vec![], "outer ".into()));
        // throw "boom" at 8 and 7
        let r = OutputLedger::new(8).finish_failure(FailureKind::Exception, t("boom"));
        assert_eq!(msg(&r), ("exception".into(), "boom".into()));
        let r = OutputLedger::new(7).finish_failure(FailureKind::Exception, t("boom"));
        assert_eq!(msg(&r), ("output-limit".into(), "out".into()));
        // console.log("12345") at 4
        let mut l = OutputLedger::new(4);
        assert_eq!(l.push(&t("12345")), Admission::Overflow { prefix_units: 0 });
        assert_eq!(msg(&l.limit_result()).1, "");
        // a lossy completion whose diagnostic does not fit: 56 x's under 64
        let mut l = OutputLedger::new(64);
        l.push(&t(&"x".repeat(56)));
        let r = l.finish_failure(FailureKind::InvalidOutput, t("program completion must be lossless JSON"));
        assert_eq!(strs(&r.logs), vec!["x".repeat(28)]);
        assert_eq!(msg(&r).1, "outer output exceeded 64 bytes");
    }

    #[test]
    fn oversized_first_log_and_escapes() {
        let mut l = OutputLedger::new(96);
        l.push(&t(&format!("start-{}", "x".repeat(100000))));
        let r = l.limit_result();
        assert_eq!(strs(&r.logs), vec![format!("start-{}", "x".repeat(54))]);
        assert_eq!(total(&r), 96);
        let mut l = OutputLedger::new(96);
        l.push(&t(&"\"".repeat(1000)));
        let r = l.limit_result();
        assert_eq!(strs(&r.logs), vec!["\"".repeat(30)]);
        assert!(total(&r) <= 96);
    }

    #[test]
    fn runaway_spam_at_300() {
        let mut l = OutputLedger::new(300);
        for i in 0..1000 {
            if l.push(&t(&format!("spam line {i}"))) != Admission::Whole {
                break;
            }
        }
        let r = l.limit_result();
        assert_eq!(r.logs.len(), 19);
        assert_eq!(r.logs.to_texts()[18].to_string_lossy(), "spa");
        assert_eq!(r.logs.to_texts()[17].to_string_lossy(), "spam line 17");
        assert_eq!(msg(&r).1, "outer output exceeded 300 bytes");
        assert_eq!(total(&r), 300);
    }

    #[test]
    fn two_writes_at_80() {
        let mut l = OutputLedger::new(80);
        l.push(&t(&"a".repeat(20)));
        l.push(&t(&"b".repeat(100)));
        let r = l.limit_result();
        assert_eq!(strs(&r.logs), vec!["a".repeat(20), "b".repeat(21)]);
        assert_eq!(msg(&r).1, "outer output exceeded 80 bytes");
    }

    /// The limit result as the walk over every candidate made it (before the cut was found from
    /// the end): `(logs, message)`.
    fn walked(cap: usize, admitted: &[Text], overflowed: Option<&Text>) -> (Vec<String>, String) {
        let full = format!("outer output exceeded {cap} bytes");
        let mut candidates: Vec<Text> = admitted.to_vec();
        candidates.extend(overflowed.cloned());
        let (mut kept, mut used, mut prefix) = (0usize, 2usize, None);
        if let Some(budget) = cap.checked_sub(json_str_cost(&full)).filter(|b| *b >= 2) {
            for entry in &candidates {
                let sep = usize::from(kept > 0);
                if used + sep + entry.json_cost() <= budget {
                    used += sep + entry.json_cost();
                    kept += 1;
                    continue;
                }
                if let Some(units) = entry.fitting_prefix(budget.saturating_sub(used + sep)).filter(|u| *u > 0) {
                    used += sep + entry.slice(units).json_cost();
                    prefix = Some(entry.slice(units));
                }
                break;
            }
        }
        candidates.truncate(kept);
        candidates.extend(prefix);
        let logs = candidates.iter().map(|l| l.to_string_lossy()).collect();
        (logs, fitting_str_prefix(&full, cap.saturating_sub(used)).to_string())
    }

    #[test]
    fn the_cut_from_the_end_is_the_walk_over_every_candidate() {
        // Entries of every cost class (one byte, escapes, two- and three-byte characters, lone
        // surrogates), under caps from below the diagnostic to far above the output.
        let pieces = ["x", "ab", "\"", "\n\t", "é", "€€", "\u{1F600}", "line of text"];
        let mut seed = 0x9e37_79b9u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as usize
        };
        let mut checked = 0;
        for _ in 0..3000 {
            let cap = next() % 400;
            let mut ledger = OutputLedger::new(cap);
            let mut admitted = Vec::new();
            let mut overflowed = None;
            for _ in 0..next() % 60 {
                let mut text = t(&pieces[next() % pieces.len()].repeat(1 + next() % 6));
                if next() % 9 == 0 {
                    text = Text::Utf16(vec![0xd800, 0x61]);
                }
                match ledger.push(&text) {
                    Admission::Whole => admitted.push(text),
                    Admission::Overflow { .. } => overflowed = Some(text),
                    Admission::Closed => break,
                }
            }
            let expected = walked(cap, &admitted, overflowed.as_ref());
            let r = if overflowed.is_some() || next() % 2 == 0 {
                ledger.limit_result()
            } else {
                ledger.finish_value(Some(("\"v\"".repeat(cap).to_string(), 3 * cap + 1)))
            };
            assert_eq!((strs(&r.logs), msg(&r).1), expected, "cap {cap}");
            assert!(cap < 4 || total(&r) <= cap, "cap {cap}: the result is larger");
            checked += 1;
        }
        assert_eq!(checked, 3000);
    }

    #[test]
    fn pre_isolate_failures() {
        let r = fresh_failure(64, FailureKind::Abort, t(&"r".repeat(1000)));
        assert_eq!(msg(&r), ("output-limit".into(), "outer output exceeded 64 bytes".into()));
        let r = fresh_failure(4, FailureKind::Exception, t("SyntaxError: TypeScript enum is not supported"));
        assert_eq!(msg(&r), ("output-limit".into(), "".into()));
        let r = fresh_failure(64, FailureKind::Abort, t("too-late"));
        assert_eq!(msg(&r), ("abort".into(), "too-late".into()));
    }
}
