//! [`FreeSet`]: which indices below a length are free, lowest first.
//! * A bit per index, set if free, with a summary bit per word (set if the word has a bit
//!   set): the lowest free index is found in two `trailing_zeros`, after the hint.
//! * No word of `summary` before `hint` has a bit set.

extern crate alloc;

use alloc::vec::Vec;

/// The free indices among `0..len` of a growable storage.
#[derive(Debug, Default)]
pub(crate) struct FreeSet {
    words: Vec<u64>,
    summary: Vec<u64>,
    count: usize,
    hint: usize,
}

impl FreeSet {
    pub(crate) const fn new() -> Self {
        Self {
            words: Vec::new(),
            summary: Vec::new(),
            count: 0,
            hint: 0,
        }
    }

    /// Free indices.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Makes room for indices below `len`; bits at or past it must be clear.
    pub(crate) fn fit(&mut self, len: usize) {
        let words = len.div_ceil(64);
        self.words.resize(words, 0);
        self.summary.resize(words.div_ceil(64), 0);
        self.hint = self.hint.min(self.summary.len().saturating_sub(1));
    }

    /// Gives back memory beyond `capacity` indices.
    pub(crate) fn shrink_to(&mut self, capacity: usize) {
        self.words.shrink_to(capacity.div_ceil(64));
        self.summary.shrink_to(capacity.div_ceil(64 * 64));
    }

    /// Marks `index` free.
    pub(crate) fn insert(&mut self, index: usize) {
        let word = index / 64;
        debug_assert_eq!(self.words[word] & (1 << (index % 64)), 0, "freed twice");
        self.words[word] |= 1 << (index % 64);
        self.summary[word / 64] |= 1 << (word % 64);
        self.count += 1;
        self.hint = self.hint.min(word / 64);
    }

    /// Marks the free `index` taken.
    pub(crate) fn remove(&mut self, index: usize) {
        let word = index / 64;
        debug_assert_ne!(self.words[word] & (1 << (index % 64)), 0, "taken twice");
        self.words[word] &= !(1 << (index % 64));
        if self.words[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
        self.count -= 1;
    }

    /// The lowest free index, taken; `None` if none is free.
    pub(crate) fn take_lowest(&mut self) -> Option<usize> {
        if self.count == 0 {
            return None;
        }
        while self.summary[self.hint] == 0 {
            self.hint += 1;
        }
        let word = self.hint * 64 + self.summary[self.hint].trailing_zeros() as usize;
        let index = word * 64 + self.words[word].trailing_zeros() as usize;
        self.remove(index);
        Some(index)
    }
}
