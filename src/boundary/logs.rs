//! A run's log entries as JavaScript strings, without stalling Node's event loop: a report with
//! few entries carries them as an array; one with many carries an `IsolateLogs`, which the
//! JavaScript layer empties a slice per turn of the loop (a program that printed its whole budget
//! in one-byte pieces has millions, and building them in one turn took 330–470 ms).

use std::ptr::null_mut;

use napi::bindgen_prelude::{Array, Env, JsValue, ToNapiValue, TypeName};
use napi::{sys, Status};
use napi_derive::napi;

use crate::ledger::logbook::{Entry, LogBook};

/// Entries a report carries as an array; more go through `IsolateLogs`.
const INLINE_ENTRIES: usize = 16384;

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(Status::from(status), format!("could not {what}")))
    }
}

/// One entry as a JavaScript string with exactly its code units. `scratch` holds a UTF-16
/// entry's units (the book keeps them unaligned).
///
/// # Safety
/// On the main thread with a live env.
unsafe fn entry_value(env: sys::napi_env, entry: Entry, scratch: &mut Vec<u16>) -> napi::Result<sys::napi_value> {
    let mut out = null_mut();
    let status = match entry {
        // SAFETY: the pointer and length describe live bytes; napi copies them.
        Entry::Latin1(b) => unsafe {
            sys::napi_create_string_latin1(env, b.as_ptr().cast(), b.len() as isize, &mut out)
        },
        Entry::Utf16(w) => {
            w.copy_into(scratch);
            // SAFETY: as above.
            unsafe { sys::napi_create_string_utf16(env, scratch.as_ptr(), scratch.len() as isize, &mut out) }
        }
    };
    check(status, "create a log entry's string")?;
    Ok(out)
}

/// Sets `array[at..]` to entries `from..to` of `book`.
///
/// # Safety
/// On the main thread with a live env; `array` is an array of that env.
unsafe fn fill(
    env: sys::napi_env,
    array: sys::napi_value,
    at: u32,
    book: &LogBook,
    from: usize,
    to: usize,
) -> napi::Result<()> {
    let mut scratch = Vec::new();
    // An entry equal to the one before it, or to a recent short one, is the same string: a
    // program that prints a few short texts millions of times costs the host a few strings, not
    // millions (JavaScript strings are values: nothing can tell them apart).
    let mut last: Option<(Entry<'_>, sys::napi_value)> = None;
    let mut recent: [Option<(Entry<'_>, sys::napi_value)>; RECENT_SLOTS] = [None; RECENT_SLOTS];
    for (k, i) in (from..to).enumerate() {
        let entry = book.get(i);
        let slot = recent_slot(entry);
        // SAFETY: the caller's env and array; every value kept was made in this call's scope.
        unsafe {
            let value = match (last, slot.and_then(|s| recent[s])) {
                (Some((previous, value)), _) if previous == entry => value,
                (_, Some((seen, value))) if seen == entry => value,
                _ => entry_value(env, entry, &mut scratch)?,
            };
            last = Some((entry, value));
            if let Some(s) = slot {
                recent[s] = Some((entry, value));
            }
            check(sys::napi_set_element(env, array, at + k as u32, value), "store a log entry")?;
        }
    }
    Ok(())
}

/// Recent short entries remembered while a slice is filled: a direct-mapped table.
const RECENT_SLOTS: usize = 256;
/// Entries of at most this many bytes are remembered: above it, an entry's own text outweighs a
/// string's fixed cost, so sharing gains little.
const RECENT_MAX_BYTES: usize = 32;

/// `entry`'s slot in the table of recent entries (FNV-1a of its bytes and encoding), or `None`
/// when it is too long to be remembered.
fn recent_slot(entry: Entry<'_>) -> Option<usize> {
    let (tag, bytes) = match entry {
        Entry::Latin1(b) => (1u8, b),
        Entry::Utf16(w) => (2u8, w.bytes()),
    };
    if bytes.len() > RECENT_MAX_BYTES {
        return None;
    }
    let mut hash: u32 = 0x811c_9dc5;
    for &b in std::iter::once(&tag).chain(bytes) {
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    Some(hash as usize % RECENT_SLOTS)
}

/// A batch of entries (`onLog`'s, or a small report's) as an array.
///
/// # Safety
/// On the main thread with a live env.
pub unsafe fn array(env: sys::napi_env, book: &LogBook) -> napi::Result<sys::napi_value> {
    let mut array = null_mut();
    // SAFETY: the caller's env.
    unsafe {
        check(sys::napi_create_array_with_length(env, book.len(), &mut array), "create the logs array")?;
        fill(env, array, 0, book, 0, book.len())?;
    }
    Ok(array)
}

/// A report's entries: an array when there are few, else the drain.
pub struct ReportLogs(pub LogBook);

impl ToNapiValue for ReportLogs {
    unsafe fn to_napi_value(env: sys::napi_env, logs: Self) -> napi::Result<sys::napi_value> {
        if logs.0.len() <= INLINE_ENTRIES {
            // SAFETY: called by napi-rs on the main thread with a live env.
            return unsafe { array(env, &logs.0) };
        }
        // SAFETY: as above.
        let total = logs.0.len();
        // SAFETY: as above.
        unsafe { IsolateLogs::to_napi_value(env, IsolateLogs { book: logs.0, next: 0, total }) }
    }
}

impl TypeName for ReportLogs {
    fn type_name() -> &'static str {
        "Array"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::Object
    }
}

/// The entries of a report with many: `take(into, max)` moves them into an array a slice at a
/// time, so each turn of Node's event loop builds only a slice.
#[napi]
pub struct IsolateLogs {
    book: LogBook,
    next: usize,
    total: usize,
}

#[napi]
impl IsolateLogs {
    /// How many entries there are in all.
    #[napi(catch_unwind, getter)]
    pub fn length(&self) -> u32 {
        self.total as u32
    }

    /// Stores the next `max` entries at their indices of `into` (created with `length`
    /// elements); returns whether entries remain. The entries' memory goes with the last slice.
    #[napi(catch_unwind)]
    pub fn take(&mut self, env: Env, into: Array, max: u32) -> napi::Result<bool> {
        let from = self.next;
        let to = self.total.min(from.saturating_add(max.max(1) as usize));
        if from >= to {
            return Ok(false);
        }
        // SAFETY: a napi method runs on the main thread with its live env; `into` is its array.
        unsafe { fill(env.raw(), into.raw(), from as u32, &self.book, from, to)? };
        self.next = to;
        // What has been read is the array's now: the book lets go of it as it goes.
        self.book.release_before(to);
        if to == self.total {
            self.book = LogBook::default();
            return Ok(false);
        }
        Ok(true)
    }
}
