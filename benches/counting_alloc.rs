//! A counting global allocator: the heap bytes live ([`live`]). Only the binaries that
//! measure memory include it, so that no timing bench pays for it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

static LIVE: AtomicIsize = AtomicIsize::new(0);

/// The heap bytes live now.
pub(crate) fn live() -> isize {
    LIVE.load(Ordering::SeqCst)
}

struct Counting;

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn count(ptr: *mut u8, bytes: isize) -> *mut u8 {
    if !ptr.is_null() {
        LIVE.fetch_add(bytes, Ordering::Relaxed);
    }
    ptr
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, and only
// adds bookkeeping on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout, which meets `alloc`'s contract.
        count(unsafe { System.alloc(layout) }, layout.size() as isize)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        count(
            unsafe { System.alloc_zeroed(layout) },
            layout.size() as isize,
        )
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded: `ptr` was allocated by `System` with `layout`, and the caller
        // meets `realloc`'s contract for `new_size`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        count(new, new_size as isize - layout.size() as isize)
    }
}
