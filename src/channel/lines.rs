//! Splitting fd-3 bytes into lines under the frame cap (docs/protocol.md#caps).

/// The frame cap was crossed: a line, or the bytes buffered for an incomplete one, exceeded it.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameTooLarge;

/// Buffers an incomplete frame and hands out complete lines (without their `\n`).
pub struct LineSplitter {
    residual: Vec<u8>,
    cap: usize,
}

impl LineSplitter {
    pub fn new(cap: usize) -> Self {
        LineSplitter { residual: Vec::new(), cap }
    }

    /// Bytes held for the incomplete frame.
    pub fn pending(&self) -> usize {
        self.residual.len()
    }

    /// Feeds one chunk, calling `line` for every complete line in order. Lengths are checked before
    /// anything is concatenated, so a breach never buffers more than the cap plus one chunk.
    pub fn push(&mut self, chunk: &[u8], mut line: impl FnMut(&[u8])) -> Result<(), FrameTooLarge> {
        let mut rest = chunk;
        let mut first = true;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            let held = if first { self.residual.len() } else { 0 };
            if held + nl > self.cap {
                return Err(FrameTooLarge);
            }
            if held > 0 {
                self.residual.extend_from_slice(&rest[..nl]);
                let whole = std::mem::take(&mut self.residual);
                line(&whole);
            } else {
                line(&rest[..nl]);
            }
            first = false;
            rest = &rest[nl + 1..];
        }
        let held = if first { self.residual.len() } else { 0 };
        if held + rest.len() > self.cap {
            return Err(FrameTooLarge);
        }
        if first {
            // No newline: the frame keeps growing (amortized, so memory stays proportional to it).
            self.residual.extend_from_slice(rest);
        } else {
            // A right-sized copy of the tail, never a view pinning the chunk.
            self.residual = rest.to_vec();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &mut LineSplitter, chunk: &[u8]) -> Result<Vec<String>, FrameTooLarge> {
        let mut out = Vec::new();
        s.push(chunk, |l| out.push(String::from_utf8_lossy(l).into_owned()))?;
        Ok(out)
    }

    #[test]
    fn splits_across_chunks() {
        let mut s = LineSplitter::new(100);
        assert_eq!(lines(&mut s, b"ab").unwrap(), Vec::<String>::new());
        assert_eq!(lines(&mut s, b"c\nd\n\nef").unwrap(), vec!["abc", "d", ""]);
        assert_eq!(s.pending(), 2);
        assert_eq!(lines(&mut s, b"\n").unwrap(), vec!["ef"]);
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn cap_on_residual_and_on_complete_lines() {
        let mut s = LineSplitter::new(4);
        assert!(lines(&mut s, b"1234").is_ok());
        assert_eq!(lines(&mut s, b"5"), Err(FrameTooLarge));
        let mut s = LineSplitter::new(4);
        assert_eq!(lines(&mut s, b"12345\n"), Err(FrameTooLarge), "the first complete frame in a chunk");
        let mut s = LineSplitter::new(4);
        assert!(lines(&mut s, b"12").is_ok());
        assert_eq!(lines(&mut s, b"345\n"), Err(FrameTooLarge), "measured before concatenation");
        let mut s = LineSplitter::new(4);
        assert_eq!(lines(&mut s, b"1234\nab\n12345"), Err(FrameTooLarge));
        let mut s = LineSplitter::new(4);
        assert_eq!(lines(&mut s, b"1234\n").unwrap(), vec!["1234"], "exactly the cap parses");
    }

    #[test]
    fn residual_is_right_sized() {
        let mut s = LineSplitter::new(1 << 20);
        let mut chunk = vec![b'x'; 65536];
        chunk[10] = b'\n';
        lines(&mut s, &chunk).unwrap();
        assert_eq!(s.pending(), 65536 - 11);
        assert_eq!(s.residual.capacity(), 65536 - 11);
    }
}
