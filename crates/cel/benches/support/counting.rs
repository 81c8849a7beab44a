//! Counts heap allocations, so a report can say what one evaluation allocates. A bench binary
//! that wants the counts installs it:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: support::counting::Counting = support::counting::Counting;
//! ```
//!
//! Why `unsafe`: a global allocator must implement the `unsafe` trait `GlobalAlloc`, and
//! forwarding to `System` calls its `unsafe` methods. This module only forwards every call
//! unchanged to `System` and bumps two relaxed atomic counters; it adds no other unsafety.
//! It is compiled into bench binaries only, never into a library crate.
#![allow(
    unsafe_code,
    reason = "a counting global allocator; see the module documentation"
)]
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

pub struct Counting;

fn count(size: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(size as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; counting has no effect on the memory returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's `layout` obligations pass straight through to `System`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (every allocation is).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: as for `dealloc`; `new_size` obligations pass through to `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (including reallocations) and bytes requested so far.
pub fn snapshot() -> (u64, u64) {
    (
        ALLOCATIONS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    )
}

/// Allocations and bytes during one call of `f` (after one warm-up call). Meaningful only in a
/// binary that installs [`Counting`] as its global allocator.
pub fn allocations<R>(mut f: impl FnMut() -> R) -> (u64, u64) {
    std::hint::black_box(f());
    let (a0, b0) = snapshot();
    let r = f();
    let (a1, b1) = snapshot();
    drop(std::hint::black_box(r));
    (a1 - a0, b1 - b0)
}
