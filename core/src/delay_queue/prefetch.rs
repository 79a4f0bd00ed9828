//! [`prefetch`]: asks for a value's cache lines ahead of its use; no effect on its contents.
//! [`after`]: what a drain asks for next.
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

/// A drain visits values scattered over the slots: asks for the key of the value after
/// `index` and the slot of the one after that, so that their loads overlap.
#[inline]
pub(super) fn after<T, S: super::SlotStorage<T>>(slots: &S, index: u32) {
    let all = slots.slots();
    let next = all[index as usize].next;
    if let Some(next) = all.get(next as usize) {
        slots.prefetch_key(next.key);
        if let Some(following) = all.get(next.next as usize) {
            prefetch(following);
        }
    }
}
