//! Where a forked child's own allocations come from, between the fork and its return into the
//! interpreter (docs/python.md#the-template).
//!
//! A child the template forks shares the template's C heap, copy on write: 3 MiB of the
//! interpreter's chunks with free ones scattered through it. glibc's malloc serves a small
//! request from a free chunk wherever it lies and writes that chunk's and its neighbours' links,
//! so nearly every allocation copied a page: a keeper's ~470 allocations (130 KiB) made ~150
//! copy-on-write faults, a run's program process more. Here they come from a region the child
//! maps for itself instead, handed out in order and never reused: they write few pages, each of
//! them fresh. The template itself, and the program once it returns into the interpreter (which
//! may start threads), allocate from the C heap as before; what the region handed out stays
//! valid for the process's life and is never freed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// The region's size: a keeper's own allocations take ~100 KiB, the program's setup as much
/// again. Reserved, not committed: only the pages written cost anything. Past it, requests go to
/// the C heap. `py/template.py` adds it to what the template says its library maps: address
/// space every child holds that is not the program's to use (its `RLIMIT_AS` grows by it).
#[no_mangle]
pub static CRN_CHILD_REGION_BYTES: usize = REGION_BYTES;
const REGION_BYTES: usize = 512 * 1024;

/// The region's bounds (0 and 0 until a child maps it), and the first byte not yet handed out:
/// every byte from there to the end is as the kernel mapped it, zero.
static START: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Whether new allocations come from the region.
static OPEN: AtomicBool = AtomicBool::new(false);

/// This library's allocator: the region while it is open, the C heap otherwise.
pub struct ForkedArena;

/// In a child just forked (one thread): maps the region and serves this library's allocations
/// from it. Without the mapping (refused) they stay on the C heap.
pub fn open() {
    // SAFETY: a new private anonymous mapping, owned by nothing else.
    let region = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            REGION_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if region == libc::MAP_FAILED {
        return;
    }
    let start = region as usize;
    START.store(start, Relaxed);
    END.store(start + REGION_BYTES, Relaxed);
    NEXT.store(start, Relaxed);
    OPEN.store(true, Relaxed);
}

/// Before the program process returns into the interpreter: new allocations come from the C heap
/// again.
pub fn close() {
    OPEN.store(false, Relaxed);
}

fn within(ptr: *mut u8) -> bool {
    (START.load(Relaxed)..END.load(Relaxed)).contains(&(ptr as usize))
}

/// `layout` from the region's unused end; `None` when it is closed or has no room.
fn take(layout: Layout) -> Option<*mut u8> {
    if !OPEN.load(Relaxed) {
        return None;
    }
    let end = END.load(Relaxed);
    let mut next = NEXT.load(Relaxed);
    loop {
        let start = next.checked_add(layout.align() - 1)? & !(layout.align() - 1);
        let after = start.checked_add(layout.size()).filter(|after| *after <= end)?;
        match NEXT.compare_exchange_weak(next, after, Relaxed, Relaxed) {
            Ok(_) => return Some(start as *mut u8),
            Err(now) => next = now,
        }
    }
}

// SAFETY: every block handed out is `layout.size()` bytes aligned to `layout.align()`, from the
// region (each byte handed out once) or from `System`; blocks are freed only by the allocator
// they came from (`within`).
unsafe impl GlobalAlloc for ForkedArena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, passed on.
        take(layout).unwrap_or_else(|| unsafe { System.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // The region's unused end was never written: zero already.
        // SAFETY: the caller's layout, passed on.
        take(layout).unwrap_or_else(|| unsafe { System.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !within(ptr) {
            // SAFETY: a block `System` handed out with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old_end = ptr as usize + layout.size();
        if within(ptr) && new_size <= layout.size() {
            return ptr;
        }
        // The last block handed out grows in place.
        if within(ptr) && OPEN.load(Relaxed) && ptr as usize + new_size <= END.load(Relaxed) {
            let grown = ptr as usize + new_size;
            if NEXT.compare_exchange(old_end, grown, Relaxed, Relaxed).is_ok() {
                return ptr;
            }
        }
        if !within(ptr) && !OPEN.load(Relaxed) {
            // SAFETY: a block `System` handed out with this layout; the caller's new size.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: the caller promises `new_size` is valid for `layout.align()`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a new block of `new_size` bytes; the old one holds `layout.size()`, and the
        // two never overlap (each byte of the region is handed out once).
        unsafe {
            let moved = self.alloc(new_layout);
            if !moved.is_null() {
                std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            moved
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{close, open, within, END, START};

    /// Runs `check` in a forked child (one thread, as a template's child is) and returns its
    /// exit code: the test process's own threads never see the region open.
    fn in_child(check: fn() -> i32) -> i32 {
        // SAFETY: the child only allocates (glibc's malloc is made whole after a fork) and ends
        // with `_exit`.
        match unsafe { libc::fork() } {
            0 => {
                let code = std::panic::catch_unwind(check).unwrap_or(99);
                // SAFETY: ends the child at once.
                unsafe { libc::_exit(code) }
            }
            pid => {
                let mut status = 0;
                // SAFETY: waits for this test's own child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                assert!(libc::WIFEXITED(status), "the child was killed: {status:#x}");
                libc::WEXITSTATUS(status)
            }
        }
    }

    #[test]
    fn a_childs_allocations_come_from_its_region_in_order_until_it_closes() {
        let code = in_child(|| {
            let before: Vec<u8> = vec![7; 100];
            open();
            let region = START.load(super::Relaxed)..END.load(super::Relaxed);
            let a = Box::new(1u64);
            let b = String::from("keeper");
            let (a_at, b_at) = (&*a as *const u64 as usize, b.as_ptr() as usize);
            if region.is_empty() || !region.contains(&a_at) || !region.contains(&b_at) || b_at <= a_at {
                return 1;
            }
            // Zeroed blocks are the region's fresh pages, untouched.
            let zeroed = vec![0u8; 64 * 1024];
            if !within(zeroed.as_ptr() as *mut u8) || zeroed.iter().any(|b| *b != 0) {
                return 2;
            }
            // The last block grows in place; an earlier one moves, its bytes with it.
            let mut grown: Vec<u32> = Vec::with_capacity(4);
            grown.extend([1, 2, 3, 4]);
            let at = grown.as_ptr();
            grown.reserve_exact(1000);
            if grown.as_ptr() != at || grown != [1, 2, 3, 4] {
                return 3;
            }
            let mut text = b.clone();
            let _later = Box::new(2u8);
            text.push_str(&"x".repeat(5000));
            if !within(text.as_mut_ptr()) || !text.starts_with("keeper") {
                return 4;
            }
            // A block from the C heap moves into the region when it grows.
            let mut moved = before;
            moved.reserve_exact(4096);
            if !within(moved.as_mut_ptr()) || moved[..100].iter().any(|b| *b != 7) {
                return 5;
            }
            close();
            let after = Box::new(3u64);
            if within(&*after as *const u64 as *mut u8) {
                return 6;
            }
            // Blocks from the region are still good, and freed as nothing.
            drop((a, zeroed, grown, text, moved));
            if *after != 3 {
                return 7;
            }
            0
        });
        assert_eq!(code, 0);
    }

    #[test]
    fn past_its_end_allocations_come_from_the_c_heap() {
        let code = in_child(|| {
            open();
            let big = vec![1u8; super::REGION_BYTES + 1];
            let small = Box::new(5u8);
            if within(big.as_ptr() as *mut u8) || !within(&*small as *const u8 as *mut u8) {
                return 1;
            }
            let filling: Vec<Box<[u8; 4096]>> = (0..200).map(|_| Box::new([9; 4096])).collect();
            let last = filling.last().map_or(0, |b| b.as_ptr() as usize);
            if within(last as *mut u8) || filling.iter().any(|b| b[4095] != 9) {
                return 2;
            }
            0
        });
        assert_eq!(code, 0);
    }
}
