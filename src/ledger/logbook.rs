//! Log entries kept compactly, so output cannot multiply in the host: a program that prints its
//! whole budget in one-byte pieces makes millions of entries, and an entry of its own allocation
//! each (a `Text`: 32 bytes, plus a heap block) cost some 24 times the budget. Here text is kept in
//! buffers of up to [`CHUNK`] entries each (Latin-1 entries one byte a unit, UTF-16 entries two)
//! and each entry is one `u64`. Growing a chunk at a time never reallocates everything the book
//! holds (which would leave the old copy with the allocator), and a book drained a slice at a time
//! (`IsolateLogs::take`) lets go of each chunk once it has been read.

use super::byte_meter::{fitting_prefix, json_string_cost, CodeUnits};
use super::text::Text;

/// The top bit of an entry's end: its units are UTF-16 (two native-endian bytes each).
const WIDE: u64 = 1 << 63;

/// Entries per chunk.
const CHUNK: usize = 1 << 14;

#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct LogBook {
    /// Entries `CHUNK * (released + k)..` are in `chunks[k]`.
    chunks: Vec<Chunk>,
    /// Entries in all, released ones included.
    len: usize,
    /// Leading chunks let go of by `release_before`.
    released: usize,
}

#[derive(Default, Debug, Clone, PartialEq, Eq)]
struct Chunk {
    text: Vec<u8>,
    /// Each entry's end in `text`, flagged [`WIDE`].
    ends: Vec<u64>,
}

/// One entry, borrowed from the book (equal when its kind and units are).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Entry<'a> {
    Latin1(&'a [u8]),
    Utf16(Wide<'a>),
}

/// UTF-16 code units stored as native-endian byte pairs (the buffer has no u16 alignment).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Wide<'a>(&'a [u8]);

impl<'a> Wide<'a> {
    /// The units' bytes, as stored.
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

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
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends an entry; UTF-16 text whose units all fit in a byte is kept as Latin-1.
    pub fn push(&mut self, text: &Text) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Chunk::default());
        }
        let chunk = self.chunks.last_mut().expect("a chunk was just made for this entry");
        match text {
            Text::Latin1(b) => {
                chunk.text.extend_from_slice(b);
                chunk.ends.push(chunk.text.len() as u64);
            }
            Text::Utf16(u) if u.iter().all(|&c| c < 0x100) => {
                chunk.text.extend(u.iter().map(|&c| c as u8));
                chunk.ends.push(chunk.text.len() as u64);
            }
            Text::Utf16(u) => {
                chunk.text.reserve(u.len() * 2);
                for unit in u {
                    chunk.text.extend_from_slice(&unit.to_ne_bytes());
                }
                chunk.ends.push(chunk.text.len() as u64 | WIDE);
            }
        }
        self.len += 1;
    }

    /// Entry `i`, which must not have been released.
    pub fn get(&self, i: usize) -> Entry<'_> {
        let chunk = &self.chunks[i / CHUNK - self.released];
        let j = i % CHUNK;
        let start = if j == 0 { 0 } else { (chunk.ends[j - 1] & !WIDE) as usize };
        let end = chunk.ends[j];
        let bytes = &chunk.text[start..(end & !WIDE) as usize];
        if end & WIDE != 0 {
            Entry::Utf16(Wide(bytes))
        } else {
            Entry::Latin1(bytes)
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> + '_ {
        (self.released * CHUNK..self.len).map(|i| self.get(i))
    }

    /// Keeps the first `n` entries.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len {
            return;
        }
        self.chunks.truncate(n.div_ceil(CHUNK).saturating_sub(self.released));
        if let Some(chunk) = self.chunks.last_mut().filter(|_| !n.is_multiple_of(CHUNK)) {
            chunk.ends.truncate(n % CHUNK);
            let end = chunk.ends.last().map_or(0, |e| (e & !WIDE) as usize);
            chunk.text.truncate(end);
        }
        self.len = n;
    }

    /// Lets go of every chunk whose entries all come before entry `i` (they have been read);
    /// entries from `i` on read as before. Released whole (`i` past the last entry), the book is
    /// empty.
    pub fn release_before(&mut self, i: usize) {
        if i >= self.len {
            *self = LogBook::default();
            return;
        }
        let read = (i / CHUNK).saturating_sub(self.released).min(self.chunks.len());
        self.chunks.drain(..read);
        self.released += read;
    }

    /// Every entry as an owned text (for tests and small batches).
    pub fn to_texts(&self) -> Vec<Text> {
        self.iter().map(|e| e.to_text(e.units())).collect()
    }

    /// Gives back memory the book no longer needs (only the last chunk can have room to spare).
    pub fn shrink(&mut self) {
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.text.shrink_to_fit();
            chunk.ends.shrink_to_fit();
        }
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
        let chunk = &book.chunks[0];
        assert_eq!(chunk.text.capacity() + chunk.ends.capacity() * 8, 3 + 2 + 4 * 8);
    }

    #[test]
    fn chunks_are_filled_truncated_and_released_in_order() {
        let entry =
            |i: usize| if i.is_multiple_of(3) { Text::new(&format!("€{i}")) } else { Text::new(&i.to_string()) };
        let n = 3 * CHUNK + 5;
        let mut book = LogBook::default();
        for i in 0..n {
            book.push(&entry(i));
        }
        assert_eq!((book.len(), book.chunks.len()), (n, 4));
        for i in [0, 1, CHUNK - 1, CHUNK, 2 * CHUNK + 7, n - 1] {
            assert_eq!(book.get(i).to_text(book.get(i).units()), entry(i), "{i}");
        }
        // Truncating at a chunk's edge drops the chunks after it; inside one, cuts it.
        let mut cut = book.clone();
        cut.truncate(2 * CHUNK);
        assert_eq!((cut.len(), cut.chunks.len()), (2 * CHUNK, 2));
        cut.push(&Text::new("after"));
        assert_eq!(cut.get(2 * CHUNK).to_text(5), Text::new("after"));
        cut.truncate(CHUNK + 3);
        assert_eq!(
            (cut.len(), cut.chunks.len(), cut.to_texts().last().cloned()),
            (CHUNK + 3, 2, Some(entry(CHUNK + 2)))
        );
        // Released chunks are gone; what is left reads as before.
        book.release_before(CHUNK - 1);
        assert_eq!(book.chunks.len(), 4);
        book.release_before(2 * CHUNK + 1);
        assert_eq!((book.chunks.len(), book.len()), (2, n));
        assert_eq!(book.get(2 * CHUNK).to_text(book.get(2 * CHUNK).units()), entry(2 * CHUNK));
        assert_eq!(book.iter().count(), n - 2 * CHUNK);
        book.release_before(usize::MAX);
        assert_eq!((book.chunks.len(), book.len()), (0, 0));
        book.push(&Text::new("again"));
        assert_eq!(book.to_texts(), vec![Text::new("again")]);
    }
}
