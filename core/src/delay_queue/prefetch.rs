//! [`prefetch`]: asks for a value's cache lines ahead of its use; no effect on its contents.
//! * Only a hint: on other targets, under Miri and under loom it does nothing.

/// Starts loading the lines of `value` into the cache.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(punctual_loom)))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (value as *const T).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        // SAFETY: a prefetch never faults and has no visible effect, whatever the address;
        // SSE is baseline on x86-64.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(punctual_loom))))]
    let _ = value;
}
