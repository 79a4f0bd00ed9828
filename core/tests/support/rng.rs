//! A small xorshift generator: random but reproducible, the same sequence for a seed on
//! every run and every machine.

/// An xorshift64 generator; its seed must not be zero.
pub(crate) struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
