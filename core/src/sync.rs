//! The one place atomics and interior mutability come from: [loom]'s under
//! `cfg(punctual_loom)`, [portable-atomic]'s with that feature, else `core`'s.
//! * Only 32-bit and pointer-sized atomics. Exceptions: `ManualClock` (an `AtomicU64`),
//!   the ambient budget's flag and the overrun threshold (`core` atomics read relaxed).
//!
//! [loom]: https://docs.rs/loom
//! [portable-atomic]: https://docs.rs/portable-atomic

pub(crate) mod atomic_waker;

#[cfg(punctual_loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize};

#[cfg(all(not(punctual_loom), feature = "portable-atomic"))]
pub(crate) use portable_atomic::{AtomicPtr, AtomicU32, AtomicUsize};

#[cfg(all(not(punctual_loom), not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize};

// One clear error instead of one per read-modify-write the target lacks.
#[cfg(all(
    not(feature = "portable-atomic"),
    not(all(target_has_atomic = "32", target_has_atomic = "ptr"))
))]
compile_error!(
    "punctual needs 32-bit and pointer-sized compare-and-swap, which this target lacks \
     (thumbv6m, say): enable the `portable-atomic` feature (of `punctual`, `punctual-core` \
     or `punctual-embassy`) and link a `critical-section` implementation"
);

pub(crate) use core::sync::atomic::Ordering;

#[cfg(punctual_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `core::cell::UnsafeCell` with loom's closure API, so loom checks every access.
#[cfg(not(punctual_loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(punctual_loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    /// Reads through a shared pointer; the caller guarantees no concurrent writer.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Writes through a unique pointer; the caller guarantees exclusive access.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Marks a function `const` except under loom, whose atomics have no const constructors.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $($rest:tt)*) => {
        #[cfg(not(punctual_loom))]
        $(#[$attr])* $vis const fn $($rest)*
        #[cfg(punctual_loom)]
        $(#[$attr])* $vis fn $($rest)*
    };
}
pub(crate) use const_fn;

/// `[$init; $n]` of a value that is not `Copy`: in a `const` block, or built one by one
/// under loom.
macro_rules! array_of {
    ($init:expr; $n:expr) => {{
        #[cfg(not(punctual_loom))]
        let array = [const { $init }; $n];
        #[cfg(punctual_loom)]
        let array: [_; $n] = core::array::from_fn(|_| $init);
        array
    }};
}
pub(crate) use array_of;

/// A value alone on its cache lines (`std`): [`crossbeam_utils::CachePadded`].
#[cfg(feature = "std")]
pub(crate) use crossbeam_utils::CachePadded as Padded;

/// Without `std`, the value as it is: such targets have one core or no data cache.
#[cfg(not(feature = "std"))]
pub(crate) type Padded<T> = T;

/// `value` alone on its cache lines, as [`Padded`] places it.
#[inline(always)]
pub(crate) const fn padded<T>(value: T) -> Padded<T> {
    #[cfg(feature = "std")]
    return Padded::new(value);
    #[cfg(not(feature = "std"))]
    value
}
