//! Streaming, exact metering of a JSON value as `JSON.parse` would build it and the host would
//! re-encode it (docs/budgets-and-ledger.md#value-budget): compact size, and whether any number is
//! non-lossless.
//!
//! The value is never materialized. Duplicate object keys follow `JSON.parse` (the last value wins,
//! in the first key's position), so each open object remembers its members' sizes. A running lower
//! bound of the final size lets an over-budget value stop being metered (and stop allocating) before
//! its children are all seen: only the part that no later duplicate key can replace counts toward it.

use std::borrow::Cow;
use std::collections::HashMap;

/// The outcome of metering one complete value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metered {
    /// The value exceeded the budget; `size` is then a lower bound, not exact.
    pub over: bool,
    /// Compact encoded size in bytes.
    pub size: usize,
    /// Some number in it is non-finite or `-0`.
    pub lossy: bool,
}

/// A key in the canonical generalized UTF-8 of its UTF-16 code units (lone surrogates as 3 bytes),
/// borrowed from the line when it had no escapes.
pub type Key<'a> = Cow<'a, [u8]>;

/// Generalized UTF-8 of UTF-16 units: pairs as 4 bytes, lone surrogates as 3 (canonical and injective).
pub fn wtf8(units: &[u16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(units.len());
    for r in char::decode_utf16(units.iter().copied()) {
        let cp = match r {
            Ok(c) => c as u32,
            Err(e) => e.unpaired_surrogate() as u32,
        };
        match cp {
            0..=0x7f => out.push(cp as u8),
            0x80..=0x7ff => out.extend([0xc0 | (cp >> 6) as u8, 0x80 | (cp & 0x3f) as u8]),
            0x800..=0xffff => {
                out.extend([0xe0 | (cp >> 12) as u8, 0x80 | ((cp >> 6) & 0x3f) as u8, 0x80 | (cp & 0x3f) as u8])
            }
            _ => out.extend([
                0xf0 | (cp >> 18) as u8,
                0x80 | ((cp >> 12) & 0x3f) as u8,
                0x80 | ((cp >> 6) & 0x3f) as u8,
                0x80 | (cp & 0x3f) as u8,
            ]),
        }
    }
    out
}

/// Members of an open object: a short list first, a map once it grows.
#[derive(Default)]
struct Members<'a> {
    small: Vec<(Key<'a>, usize, bool)>,
    map: Option<HashMap<Key<'a>, (usize, bool)>>,
}

const SMALL: usize = 8;

impl<'a> Members<'a> {
    fn get(&self, key: &[u8]) -> Option<(usize, bool)> {
        match &self.map {
            Some(m) => m.get(key).copied(),
            None => self.small.iter().find(|(k, _, _)| k.as_ref() == key).map(|(_, s, l)| (*s, *l)),
        }
    }

    fn set(&mut self, key: Key<'a>, size: usize, lossy: bool) {
        if let Some(m) = &mut self.map {
            m.insert(key, (size, lossy));
            return;
        }
        if let Some(slot) = self.small.iter_mut().find(|(k, _, _)| k.as_ref() == key.as_ref()) {
            slot.1 = size;
            slot.2 = lossy;
            return;
        }
        self.small.push((key, size, lossy));
        if self.small.len() > SMALL {
            self.map = Some(self.small.drain(..).map(|(k, s, l)| (k, (s, l))).collect());
        }
    }
}

/// A key being read: its bytes, quoted cost, and the member it would replace (size, lossy).
type PendingKey<'a> = (Key<'a>, usize, Option<(usize, bool)>);

struct Level<'a> {
    is_obj: bool,
    /// Distinct members (elements for arrays).
    count: usize,
    /// Sum of member sizes (objects: key + colon + value) without brackets or commas.
    content: usize,
    /// Members holding a non-lossless number.
    lossy: usize,
    /// This level's contribution to the running lower bound (0 when outside the bounded prefix).
    lb: usize,
    members: Members<'a>,
    /// The key whose value is being read: its bytes, quoted cost and previous member, if any.
    key: Option<PendingKey<'a>>,
}

impl Level<'_> {
    fn size(&self) -> usize {
        2 + self.content + self.count.saturating_sub(1)
    }
}

/// Meters one value fed to it as parse events.
pub struct Meter<'a> {
    budget: Option<usize>,
    levels: Vec<Level<'a>>,
    /// Index of the outermost open object: nothing below it counts toward the lower bound, since a
    /// later duplicate key may replace it.
    first_obj: Option<usize>,
    lower_bound: usize,
    over: bool,
    result: Option<Metered>,
}

impl<'a> Meter<'a> {
    /// `budget: None` meters without a size cap (binding arguments are only checked for lossless numbers).
    pub fn new(budget: Option<usize>) -> Self {
        Meter { budget, levels: Vec::new(), first_obj: None, lower_bound: 0, over: false, result: None }
    }

    #[cfg(test)]
    /// Whether the meter stopped early because the value cannot fit the budget.
    pub fn is_over(&self) -> bool {
        self.over
    }

    fn in_prefix(&self) -> bool {
        self.first_obj.is_none()
    }

    fn grow_bound(&mut self, by: usize) {
        self.lower_bound += by;
        if let Some(top) = self.levels.last_mut() {
            top.lb += by;
        }
        if self.budget.is_some_and(|b| self.lower_bound > b) {
            self.over = true;
            self.levels = Vec::new();
        }
    }

    pub fn open(&mut self, is_obj: bool) {
        if self.over {
            return;
        }
        let track = self.in_prefix();
        self.levels.push(Level {
            is_obj,
            count: 0,
            content: 0,
            lossy: 0,
            lb: 0,
            members: Members::default(),
            key: None,
        });
        if track {
            if is_obj {
                self.first_obj = Some(self.levels.len() - 1);
            }
            self.grow_bound(2);
        }
    }

    /// A key of the innermost (object) level, with its quoted JSON cost.
    pub fn key(&mut self, key: Key<'a>, cost: usize) {
        if self.over {
            return;
        }
        let depth = self.levels.len() - 1;
        let top = self.levels.last_mut().expect("a key inside an object");
        let previous = top.members.get(&key);
        let fresh = previous.is_none();
        let comma = usize::from(top.count > 0);
        top.key = Some((key, cost, previous));
        if fresh && self.first_obj == Some(depth) {
            // The key can only ever be replaced by itself: it, its colon and a 1-byte value stay.
            self.grow_bound(comma + cost + 2);
        }
    }

    /// A complete scalar (or closed container) of `size` bytes.
    pub fn value(&mut self, size: usize, lossy: bool) {
        if self.over {
            return;
        }
        let Some(depth) = self.levels.len().checked_sub(1) else {
            self.result = Some(Metered { over: self.budget.is_some_and(|b| size > b), size, lossy });
            return;
        };
        let in_prefix = self.in_prefix();
        let top = &mut self.levels[depth];
        if top.is_obj {
            let (key, key_cost, previous) = top.key.take().expect("a value follows its key");
            let member = key_cost + 1 + size;
            match previous {
                Some((old, old_lossy)) => {
                    top.content = top.content - old + member;
                    top.lossy = top.lossy - usize::from(old_lossy) + usize::from(lossy);
                }
                None => {
                    top.count += 1;
                    top.content += member;
                    top.lossy += usize::from(lossy);
                }
            }
            top.members.set(key, member, lossy);
        } else {
            let comma = usize::from(top.count > 0);
            top.count += 1;
            top.content += size;
            top.lossy += usize::from(lossy);
            if in_prefix {
                self.grow_bound(comma + size);
            }
        }
    }

    /// Closes the innermost level and feeds its exact size to its parent.
    pub fn close(&mut self) {
        if self.over {
            return;
        }
        let level = self.levels.pop().expect("close matches open");
        let depth = self.levels.len();
        if self.first_obj == Some(depth) {
            self.first_obj = None;
            self.lower_bound -= level.lb;
        } else if self.first_obj.is_none() {
            // An array in the bounded prefix: its exact size replaces its partial contribution.
            self.lower_bound -= level.lb;
        }
        let (size, lossy) = (level.size(), level.lossy > 0);
        self.value(size, lossy);
    }

    /// The result once the value is complete (an early stop reports `over`).
    pub fn finish(self) -> Metered {
        if self.over {
            return Metered { over: true, size: self.lower_bound, lossy: false };
        }
        self.result.expect("finish after a complete value")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Key<'_> {
        Cow::Borrowed(s.as_bytes())
    }

    #[test]
    fn arrays_and_objects() {
        // [1,{"a":true},"x"] = 18 bytes
        let mut m = Meter::new(Some(100));
        m.open(false);
        m.value(1, false);
        m.open(true);
        m.key(k("a"), 3);
        m.value(4, false);
        m.close();
        m.value(3, false);
        m.close();
        assert_eq!(m.finish(), Metered { over: false, size: 18, lossy: false });
    }

    #[test]
    fn duplicate_keys_follow_json_parse() {
        // {"a":"xxxxxxxxxx","a":1} parses to {"a":1}: 7 bytes, and the lossy first value is gone.
        let mut m = Meter::new(Some(7));
        m.open(true);
        m.key(k("a"), 3);
        m.value(12, true);
        m.key(k("a"), 3);
        m.value(1, false);
        m.close();
        assert_eq!(m.finish(), Metered { over: false, size: 7, lossy: false });
    }

    #[test]
    fn lower_bound_stops_early_on_wide_objects() {
        let mut m = Meter::new(Some(20));
        m.open(true);
        let keys: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
        for key in &keys {
            m.key(Cow::Borrowed(key.as_bytes()), key.len() + 2);
            m.value(1, false);
            if m.is_over() {
                break;
            }
        }
        assert!(m.is_over(), "distinct keys alone exceed the budget");
        assert!(m.finish().over);
    }

    #[test]
    fn replaceable_members_do_not_count_toward_the_bound() {
        // {"a":[0,0,0,...]} can still shrink, so the bound stays at the key.
        let mut m = Meter::new(Some(10));
        m.open(true);
        m.key(k("a"), 3);
        m.open(false);
        for _ in 0..50 {
            m.value(1, false);
        }
        assert!(!m.is_over());
        m.close();
        m.key(k("a"), 3);
        m.value(1, false);
        m.close();
        assert_eq!(m.finish(), Metered { over: false, size: 7, lossy: false });
    }

    #[test]
    fn many_keys_use_the_map() {
        let mut m = Meter::new(None);
        m.open(true);
        let keys: Vec<String> = (0..20).map(|i| format!("{i:02}")).collect();
        for key in &keys {
            m.key(Cow::Borrowed(key.as_bytes()), 4);
            m.value(1, true);
        }
        for key in &keys {
            m.key(Cow::Borrowed(key.as_bytes()), 4);
            m.value(1, false);
        }
        m.close();
        // 20 members of "NN":0 (6 bytes) + 19 commas + 2 brackets
        assert_eq!(m.finish(), Metered { over: false, size: 20 * 6 + 19 + 2, lossy: false });
    }

    #[test]
    fn root_scalar_over_budget() {
        let mut m = Meter::new(Some(3));
        m.value(4, false);
        assert_eq!(m.finish(), Metered { over: true, size: 4, lossy: false });
    }
}
