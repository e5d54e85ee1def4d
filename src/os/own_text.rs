//! This object's executable text, as the loader mapped it, and faulting it in ahead of use.

use std::ffi::c_void;

/// The address range of this object's executable segment: (start, length), page-aligned.
pub fn range() -> Option<(usize, usize)> {
    struct Found {
        here: usize,
        text: Option<(usize, usize)>,
    }
    unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> i32 {
        // A panic must not unwind into the loader: it ends the search, nothing found.
        crate::panic::guard(
            || {
                // SAFETY: dl_iterate_phdr passes a live info and our own `Found`.
                let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
                found.text = executable_segment(info, found.here);
                i32::from(found.text.is_some())
            },
            |_| 1,
        )
    }
    let mut found = Found { here: range as *const () as usize, text: None };
    // SAFETY: `each` reads only what the loader hands it and writes only `found`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut found as *mut Found).cast()) };
    found.text
}

/// The page-aligned (start, length) of `info`'s executable segment that holds `here`, if any.
fn executable_segment(info: &libc::dl_phdr_info, here: usize) -> Option<(usize, usize)> {
    // SAFETY: the loader's program headers for this object, `dlpi_phnum` of them.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let page = 4096;
    headers.iter().filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_X != 0).find_map(|h| {
        let start = info.dlpi_addr as usize + h.p_vaddr as usize;
        let end = start + h.p_memsz as usize;
        let aligned = start & !(page - 1);
        (start..end).contains(&here).then(|| (aligned, (end - aligned).div_ceil(page) * page))
    })
}

/// Maps `len` bytes of text from `start` (page-aligned) into this process's page tables
/// (`MADV_POPULATE_READ`), so running that code later takes no page fault. False when the kernel
/// refuses (before 5.14).
pub fn populate(start: usize, len: usize) -> bool {
    // SAFETY: a range of this process's own read-only text; populating reads it, changes nothing.
    unsafe { libc::madvise(start as *mut c_void, len, libc::MADV_POPULATE_READ) == 0 }
}

#[cfg(test)]
mod tests {
    #[test]
    fn holds_this_function_and_maps_it() {
        let (start, len) = super::range().expect("this object's text");
        let here = holds_this_function_and_maps_it as *const () as usize;
        assert!((start..start + len).contains(&here), "{here:#x} outside {start:#x}+{len:#x}");
        assert_eq!((start % 4096, len % 4096), (0, 0));
        // Kernels before 5.14 refuse the advice; these machines run 6.x.
        assert!(super::populate(start, len.min(2 << 20)));
    }
}
