//! Fuzz target `wheel`: the input bytes are decoded into a tick, a clock start and a
//! sequence of operations, which run on a small [`Fixed`] wheel and on two [`Growable`]
//! wheels, one with precise fires on, each on its own [`ManualClock`], and are checked
//! after every operation against the reference model that `core/tests/model.rs` also
//! uses (`core/tests/support/reference.rs`, whose docs list what is checked).
//!
//! Any disagreement panics, which libFuzzer reports as a crash with the input that caused
//! it. The input format is documented at [`decode`]; `ci/fuzz.sh` runs this target from
//! the seed corpus in `fuzz/corpus/wheel`.
#![no_main]

#[path = "../../core/tests/support/reference.rs"]
mod reference;
#[path = "../../core/tests/support/mod.rs"]
mod support;

use core::time::Duration;

use libfuzzer_sys::fuzz_target;
use punctual_core::{Fixed, Growable, ManualClock, Wheel};
use reference::{Case, Kind, Limit, Near, Op, Span, run, run_with_precise_fires};

/// Entries of the fixed wheel: small, so that inputs fill it.
const FIXED_CAPACITY: usize = 8;
/// Operations per input, at most (keeps each run fast).
const MAX_OPS: usize = 256;

fuzz_target!(|data: &[u8]| {
    let Some(case) = decode(data) else { return };
    let start = case.start_reading();
    let fixed: Wheel<ManualClock, Fixed<FIXED_CAPACITY>> =
        Wheel::fixed(ManualClock::starting_at(start), case.tick);
    run(&fixed, Some(FIXED_CAPACITY), &case);
    let growable: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), case.tick);
    run(&growable, None, &case);
    // With precise fires, a crowded slot's deadlines also fire at the first turn after
    // their own time.
    let looking: Wheel<ManualClock, Growable> =
        Wheel::growable(ManualClock::starting_at(start), case.tick).with_precise_fires();
    run_with_precise_fires(&looking, None, &case);
});

// ---- the input ------------------------------------------------------------------------

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    /// Up to 8 bytes, little-endian (missing bytes read as zero).
    fn u64(&mut self) -> u64 {
        let n = self.0.len().min(8);
        let mut bytes = [0; 8];
        bytes[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        u64::from_le_bytes(bytes)
    }
}

/// Tick counts at the level boundaries and the 32-bit wraps.
const BOUNDARIES: [u64; 12] = [
    63,
    64,
    4095,
    4096,
    262_143,
    262_144,
    1 << 24,
    1 << 30,
    1 << 31,
    1 << 32,
    1 << 36,
    1 << 37,
];

/// Decodes an input (`None` if it is empty):
///
/// * byte 0: the tick, `[1 ms, 1 µs, 977 ns, 1 ns][b % 4]`;
/// * byte 1: the clock start, `b % 6`: zero; just below 2^32 ticks; just below
///   `m · 2^36` ticks; just below the clock's end; just below 2^31 ticks; or anywhere
///   below 2^40 ticks (8 more bytes); bytes 2 and 3 give the distance below and the
///   sub-tick part;
/// * then operations, one byte each, `b % 10`, followed by their operands:
///   `0..=2` arm (a kind byte: bits 0-1 sleep / deadline / named deadline, bit 2 an
///   absolute limit, bit 3 in the past; then a span), `3` drop, `4` complete, `5`
///   re-poll (each a pick byte), `6` advance by a span (bit 7 of the op byte: without
///   polling the woken), `7` advance near a live deadline's time (pick and near bytes),
///   `8` a turn without moving the clock, `9` advance one tick;
/// * a span is a byte `s`, `s % 8`: zero; `s >> 3` ticks; a boundary (next byte) plus
///   `-2..=2`; up to 2^37 ticks (8 bytes); 2^36 to 2^41 ticks (8 bytes); `Duration::MAX`;
///   uncountable; a sub-tick part only (8 bytes).
fn decode(data: &[u8]) -> Option<Case> {
    let mut b = Bytes(data);
    let tick = match b.u8()? % 4 {
        0 => Duration::from_millis(1),
        1 => Duration::from_micros(1),
        2 => Duration::from_nanos(977),
        _ => Duration::from_nanos(1),
    };
    let kind = b.u8().unwrap_or(0) % 6;
    let below = u64::from(b.u8().unwrap_or(0) % 64) + 1;
    let frac = u64::from(b.u8().unwrap_or(0)) * 0x0101_0101_0101;
    let tick_ns = tick.as_nanos() as u64;
    let start = match kind {
        0 => (0, 0),
        1 => ((1 << 32) - below, frac),
        2 => ((1 + (below % 3)) << 36, frac),
        3 => (u64::MAX / tick_ns - below, frac),
        4 => ((1 << 31) - below, frac),
        _ => (b.u64() % (1 << 40), frac),
    };
    let start = match kind {
        2 => (start.0 - below, start.1),
        _ => start,
    };
    let mut ops = Vec::new();
    while let Some(op) = b.u8() {
        if ops.len() == MAX_OPS {
            break;
        }
        ops.push(match op % 10 {
            0..=2 => {
                let k = b.u8().unwrap_or(0);
                let kind = match k & 3 {
                    0 => Kind::Sleep,
                    2 => Kind::Deadline { named: true },
                    _ => Kind::Deadline { named: false },
                };
                let span = span(&mut b);
                let limit = if k & 4 == 0 {
                    Limit::After(span)
                } else {
                    Limit::At {
                        span,
                        past: k & 8 != 0,
                    }
                };
                Op::Arm { kind, limit }
            }
            3 => Op::Drop {
                pick: b.u8().unwrap_or(0),
            },
            4 => Op::Complete {
                pick: b.u8().unwrap_or(0),
            },
            5 => Op::Repoll {
                pick: b.u8().unwrap_or(0),
            },
            6 => Op::Advance {
                span: span(&mut b),
                poll: op & 0x80 == 0,
            },
            7 => {
                let pick = b.u8().unwrap_or(0);
                let near = match b.u8().unwrap_or(0) % 6 {
                    0 => Near::OneNsBefore,
                    1 => Near::At,
                    2 => Near::OneNsAfter,
                    3 => Near::OneTickAfter,
                    4 => Near::TwoTicksAfterLessOneNs,
                    _ => Near::TwoTicksAfter,
                };
                Op::AdvanceNear { pick, near }
            }
            8 => Op::Advance {
                span: Span::Ticks { ticks: 0, frac: 0 },
                poll: true,
            },
            _ => Op::Advance {
                span: Span::Ticks { ticks: 1, frac: 0 },
                poll: true,
            },
        });
    }
    Some(Case { tick, start, ops })
}

fn span(b: &mut Bytes<'_>) -> Span {
    let s = b.u8().unwrap_or(0);
    match s % 8 {
        0 => Span::Ticks { ticks: 0, frac: 0 },
        1 => Span::Ticks {
            ticks: u64::from(s >> 3),
            frac: 0,
        },
        2 => {
            let n = b.u8().unwrap_or(0);
            let base = BOUNDARIES[usize::from(n) % BOUNDARIES.len()];
            Span::Ticks {
                ticks: base.saturating_add_signed(i64::from((n >> 5) % 5) - 2),
                frac: 0,
            }
        }
        3 => Span::Ticks {
            ticks: b.u64() % (1 << 37),
            frac: 0,
        },
        4 => Span::Ticks {
            ticks: (1 << 36) + b.u64() % (31 << 36),
            frac: 0,
        },
        5 => Span::Max,
        6 => Span::Uncountable,
        _ => Span::Ticks {
            ticks: 0,
            frac: b.u64(),
        },
    }
}
