//! The C allocator's main heap (the program break's region), and making its pages this
//! process's own ahead of use.
//!
//! A process forked from a template shares the template's heap pages until it writes one: the
//! allocator's first writes to a free chunk or its bookkeeping then each take a copy-on-write
//! fault. Writing the pages ahead (`MADV_POPULATE_WRITE`) takes those faults in one call.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

const PAGE: usize = 4096;

/// Where the heap begins, as noted by [`note_start`]; 0 until then.
static START: AtomicUsize = AtomicUsize::new(0);

/// Notes where this process's heap begins: the current break less what the allocator took
/// from it. Exact only while the allocator has one arena, the heap (a process that never made a
/// thread: the template); a process forked later knows it from here.
pub fn note_start() {
    // SAFETY: sbrk(0) only reads the current break; mallinfo2 only reads the arenas' counters.
    let (end, taken) = unsafe { (libc::sbrk(0) as usize, libc::mallinfo2().arena) };
    if end != usize::MAX && taken > 0 && taken < end {
        START.store((end - taken) & !(PAGE - 1), Ordering::Relaxed);
    }
}

/// The heap's page-aligned (start, length): from where it begins to the current break. `None`
/// when its start was not noted, or the heap is empty.
pub fn range() -> Option<(usize, usize)> {
    let start = START.load(Ordering::Relaxed);
    // SAFETY: sbrk(0) only reads the current break.
    let end = unsafe { libc::sbrk(0) } as usize;
    if start == 0 || end == usize::MAX || end <= start {
        return None;
    }
    Some((start, end.div_ceil(PAGE) * PAGE - start))
}

/// Writes `len` bytes of pages from `start` into this process's page tables as its own
/// (`MADV_POPULATE_WRITE`: each page copied if shared, zeroed if never touched, no content
/// changed). False when the kernel refuses (before 5.14) or the range is not all mapped.
pub fn populate(start: usize, len: usize) -> bool {
    // SAFETY: populating changes no byte of the range, only who owns its pages.
    unsafe { libc::madvise(start as *mut c_void, len, libc::MADV_POPULATE_WRITE) == 0 }
}

#[cfg(test)]
mod tests {
    #[test]
    fn populating_changes_no_byte() {
        let pages = vec![9u8; 64 << 10];
        let start = pages.as_ptr() as usize;
        let aligned = start.next_multiple_of(4096);
        assert!(super::populate(aligned, 8 * 4096));
        assert!(pages.iter().all(|&b| b == 9));
    }

    #[test]
    fn the_range_ends_at_the_break() {
        super::note_start();
        let (start, len) = super::range().expect("the heap, once its start is noted");
        assert!(start.is_multiple_of(4096) && len.is_multiple_of(4096));
        // SAFETY: sbrk(0) only reads the break.
        let end = unsafe { libc::sbrk(0) } as usize;
        assert!(start < end && end <= start + len && start + len - end < 4096);
    }
}
