//! Log entries kept compactly, so output cannot multiply in the host: a program that prints its
//! whole budget in one-byte pieces makes millions of entries, and an entry of its own allocation
//! each (a `Text`: 32 bytes, plus a heap block) cost some 24 times the budget. Here all text is
//! one buffer (Latin-1 entries one byte a unit, UTF-16 entries two) and each entry one `u64`.

use super::byte_meter::{fitting_prefix, json_string_cost, CodeUnits};
use super::text::Text;

/// The top bit of an entry's end: its units are UTF-16 (two native-endian bytes each).
const WIDE: u64 = 1 << 63;

#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct LogBook {
    text: Vec<u8>,
    /// Each entry's end in `text`, flagged [`WIDE`].
    ends: Vec<u64>,
}

/// One entry, borrowed from the book.
#[derive(Clone, Copy)]
pub enum Entry<'a> {
    Latin1(&'a [u8]),
    Utf16(Wide<'a>),
}

/// UTF-16 code units stored as native-endian byte pairs (the buffer has no u16 alignment).
#[derive(Clone, Copy)]
pub struct Wide<'a>(&'a [u8]);

impl Wide<'_> {
    fn unit(&self, i: usize) -> u16 {
        u16::from_ne_bytes([self.0[2 * i], self.0[2 * i + 1]])
    }

    /// The units, copied into `out` (cleared first).
    pub fn copy_into(&self, out: &mut Vec<u16>) {
        out.clear();
        out.extend(self.0.chunks_exact(2).map(|pair| u16::from_ne_bytes([pair[0], pair[1]])));
    }
}

impl CodeUnits for Wide<'_> {
    fn units_len(&self) -> usize {
        self.0.len() / 2
    }

    fn code_point_at(&self, i: usize) -> (usize, usize) {
        let u = self.unit(i);
        match u {
            0xd800..=0xdbff if i + 1 < self.units_len() && (0xdc00..=0xdfff).contains(&self.unit(i + 1)) => (4, 2),
            0xd800..=0xdfff => (6, 1),
            _ => (super::byte_meter::unit_cost(u as u32), 1),
        }
    }
}

impl Entry<'_> {
    pub fn json_cost(&self) -> usize {
        match self {
            Entry::Latin1(b) => json_string_cost(*b),
            Entry::Utf16(w) => json_string_cost(w),
        }
    }

    pub fn fitting_prefix(&self, budget: usize) -> Option<usize> {
        match self {
            Entry::Latin1(b) => fitting_prefix(*b, budget),
            Entry::Utf16(w) => fitting_prefix(w, budget),
        }
    }

    /// The entry as an owned text, cut to its first `units` code units.
    pub fn to_text(self, units: usize) -> Text {
        match self {
            Entry::Latin1(b) => Text::Latin1(b[..units].to_vec()),
            Entry::Utf16(w) => {
                let mut out = Vec::new();
                Wide(&w.0[..2 * units]).copy_into(&mut out);
                Text::Utf16(out)
            }
        }
    }

    pub fn units(&self) -> usize {
        match self {
            Entry::Latin1(b) => b.len(),
            Entry::Utf16(w) => w.units_len(),
        }
    }
}

impl LogBook {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Appends an entry; UTF-16 text whose units all fit in a byte is kept as Latin-1.
    pub fn push(&mut self, text: &Text) {
        match text {
            Text::Latin1(b) => {
                self.text.extend_from_slice(b);
                self.ends.push(self.text.len() as u64);
            }
            Text::Utf16(u) if u.iter().all(|&c| c < 0x100) => {
                self.text.extend(u.iter().map(|&c| c as u8));
                self.ends.push(self.text.len() as u64);
            }
            Text::Utf16(u) => {
                self.text.reserve(u.len() * 2);
                for unit in u {
                    self.text.extend_from_slice(&unit.to_ne_bytes());
                }
                self.ends.push(self.text.len() as u64 | WIDE);
            }
        }
    }

    pub fn get(&self, i: usize) -> Entry<'_> {
        let start = if i == 0 { 0 } else { (self.ends[i - 1] & !WIDE) as usize };
        let end = self.ends[i];
        let bytes = &self.text[start..(end & !WIDE) as usize];
        if end & WIDE != 0 {
            Entry::Utf16(Wide(bytes))
        } else {
            Entry::Latin1(bytes)
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Keeps the first `n` entries.
    pub fn truncate(&mut self, n: usize) {
        if n < self.ends.len() {
            self.ends.truncate(n);
            let end = self.ends.last().map_or(0, |e| (e & !WIDE) as usize);
            self.text.truncate(end);
        }
    }

    /// Every entry as an owned text (for tests and small batches).
    pub fn to_texts(&self) -> Vec<Text> {
        self.iter().map(|e| e.to_text(e.units())).collect()
    }

    /// Gives back memory the book no longer needs.
    pub fn shrink(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

impl From<Vec<Text>> for LogBook {
    fn from(texts: Vec<Text>) -> LogBook {
        let mut book = LogBook::default();
        for text in &texts {
            book.push(text);
        }
        book
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_every_code_unit() {
        let texts = vec![
            Text::new("x"),
            Text::new(""),
            Text::Utf16(vec![0x61, 0xe9]),
            Text::Utf16(vec![0xd800, 0x41, 0x20ac]),
            Text::new("€ and 😀"),
            Text::new("café"),
        ];
        let book = LogBook::from(texts.clone());
        assert_eq!(book.len(), 6);
        // UTF-16 that fits Latin-1 is kept as Latin-1, with the same units.
        assert!(matches!(book.get(2), Entry::Latin1(b"a\xe9")));
        let back = book.to_texts();
        assert_eq!(back[3], texts[3]);
        assert_eq!(back[4], texts[4]);
        for (entry, text) in book.iter().zip(&texts) {
            assert_eq!(entry.json_cost(), text.json_cost());
            assert_eq!(entry.units(), text.len());
            assert_eq!(entry.fitting_prefix(5), text.fitting_prefix(5));
        }
    }

    #[test]
    fn truncation_and_size() {
        let mut book = LogBook::default();
        for _ in 0..1000 {
            book.push(&Text::new("x"));
        }
        book.push(&Text::new("€"));
        book.truncate(3);
        assert_eq!(book.to_texts(), vec![Text::new("x"); 3]);
        book.push(&Text::new("€"));
        assert_eq!(book.to_texts()[3], Text::new("€"));
        // A one-byte entry costs its byte and its end.
        book.shrink();
        assert_eq!(book.text.capacity() + book.ends.capacity() * 8, 3 + 2 + 4 * 8);
    }
}
