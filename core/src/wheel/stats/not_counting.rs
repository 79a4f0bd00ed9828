//! The counters, not kept (no `stats`): no bytes, and every count does nothing.

/// Without `stats`: nothing kept, nothing counted.
pub(crate) struct Counters;

impl Counters {
    pub(crate) const fn new() -> Self {
        Self
    }

    #[inline(always)]
    pub(crate) fn armed(&self) {}

    #[inline(always)]
    pub(crate) fn fired(&self, _late_ticks: u64) {}

    #[inline(always)]
    pub(crate) fn cancelled(&self) {}

    #[inline(always)]
    pub(crate) fn degraded_poll(&self) {}

    #[inline(always)]
    pub(crate) fn refused(&self) {}

    #[inline(always)]
    pub(crate) fn overrun(&self) {}
}
