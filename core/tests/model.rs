//! Model-based property test of the wheel (docs/design.md, "Evidence"): random cases (a
//! tick, a clock start, and up to 48 operations: arm, drop, complete, re-poll, advance
//! with or without polling the woken, advance near a deadline's time), drawn by proptest
//! and played on a `Fixed<4>` wheel (so that it fills up), with `u32` and `u8` slot heads,
//! and on a growable one; and cases that crowd slots past eight deadlines (up to 96
//! operations, on a 1 ms tick) on growable wheels with and without precise fires. Each is
//! checked after every operation against the reference model in `support/reference.rs`,
//! which the fuzz target shares; its docs list what is checked (never early, at most two
//! ticks late, decided once, occupancy and reclaiming, degraded polls on a full wheel,
//! odd limits), and with precise fires that a crowded tick's deadlines fire at the first
//! turn after their own time, as a sparse tick's do; `precise_fires.rs` checks the looks'
//! plans and the driver's wakes around them.
//!
//! The number of cases per storage kind defaults to [`DEFAULT_CASES`]; set
//! `PROPTEST_CASES` to change it.
#![cfg(all(feature = "alloc", feature = "stats"))]

#[path = "support/reference.rs"]
mod reference;
mod support;

use core::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::Config;
use punctual_core::{Fixed, Growable, ManualClock, Storage, Wheel};
use reference::{Case, Kind, Limit, Near, Op, Span};

/// Cases per storage kind when `PROPTEST_CASES` is not set.
const DEFAULT_CASES: u32 = 1024;
/// Entries of the fixed wheel: small, so that it fills up.
const FIXED_CAPACITY: usize = 4;

// ---- strategies -----------------------------------------------------------------------

fn boundary_ticks() -> impl Strategy<Value = u64> {
    let bases = vec![
        63u64,
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
    ];
    (prop::sample::select(bases), -2i64..=2).prop_map(|(b, d)| b.saturating_add_signed(d))
}

fn frac() -> impl Strategy<Value = u64> {
    prop_oneof![2 => Just(0u64), 1 => any::<u64>(), 1 => Just(u64::MAX)]
}

/// Deadline lengths: zero, small, around level boundaries, large, beyond the wheel's range,
/// and beyond what the wheel can count.
fn span_for_deadline() -> impl Strategy<Value = Span> {
    let ticks = prop_oneof![
        3 => Just(0u64),
        6 => 1u64..8,
        2 => 8u64..300,
        6 => boundary_ticks(),
        3 => 0u64..(1 << 37),
        1 => (1u64 << 36)..(1 << 41),
    ];
    prop_oneof![
        18 => (ticks, frac()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac }),
        1 => Just(Span::Max),
        1 => Just(Span::Uncountable),
    ]
}

/// Clock advances: zero, one tick, sub-tick amounts, a few ticks, across level boundaries,
/// and big jumps.
fn span_for_advance() -> impl Strategy<Value = Span> {
    prop_oneof![
        3 => Just(Span::Ticks { ticks: 0, frac: 0 }),
        4 => Just(Span::Ticks { ticks: 1, frac: 0 }),
        4 => any::<u64>().prop_map(|frac| Span::Ticks { ticks: 0, frac }),
        4 => (1u64..70, frac()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac }),
        3 => (boundary_ticks(), frac()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac }),
        2 => (0u64..(1 << 37)).prop_map(|ticks| Span::Ticks { ticks, frac: 0 }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        Just(Kind::Sleep),
        any::<bool>().prop_map(|named| Kind::Deadline { named })
    ];
    let limit = prop_oneof![
        4 => span_for_deadline().prop_map(Limit::After),
        1 => (span_for_deadline(), any::<bool>())
            .prop_map(|(span, past)| Limit::At { span, past }),
    ];
    let near = prop_oneof![
        Just(Near::OneNsBefore),
        Just(Near::At),
        Just(Near::OneNsAfter),
        Just(Near::OneTickAfter),
        Just(Near::TwoTicksAfterLessOneNs),
        Just(Near::TwoTicksAfter),
    ];
    prop_oneof![
        8 => (kind, limit).prop_map(|(kind, limit)| Op::Arm { kind, limit }),
        2 => any::<u8>().prop_map(|pick| Op::Drop { pick }),
        2 => any::<u8>().prop_map(|pick| Op::Complete { pick }),
        4 => span_for_advance().prop_map(|span| Op::Advance { span, poll: true }),
        1 => span_for_advance().prop_map(|span| Op::Advance { span, poll: false }),
        4 => (any::<u8>(), near).prop_map(|(pick, near)| Op::AdvanceNear { pick, near }),
        2 => any::<u8>().prop_map(|pick| Op::Repoll { pick }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let tick = prop_oneof![
        3 => Just(Duration::from_millis(1)),
        1 => Just(Duration::from_micros(1)),
        1 => Just(Duration::from_nanos(977)),
    ];
    // Long uptimes: tick counts just below 2^32 and multiples of 2^36, or anywhere.
    let below = |base: u64| (1u64..70, frac()).prop_map(move |(b, frac)| (base - b, frac));
    let start = prop_oneof![
        4 => Just((0, 0)),
        1 => below(1 << 32),
        1 => (1u64..4).prop_flat_map(move |m| below(m << 36)),
        1 => (0u64..(1 << 40), frac()),
    ];
    (tick, start, prop::collection::vec(op(), 1..48)).prop_map(|(tick, start, ops)| Case {
        tick,
        start,
        ops,
    })
}

/// Cases that crowd many deadlines into a few ticks (so that slots hold more than a sparse
/// slot's eight) and advance the clock by parts of a tick (so that turns come inside the
/// tick before a crowded slot's): what precise fires change. On a 1 ms tick.
fn crowded_case() -> impl Strategy<Value = Case> {
    let near_span = (0u64..3, any::<u64>()).prop_map(|(ticks, frac)| Span::Ticks { ticks, frac });
    let kind = prop_oneof![
        Just(Kind::Sleep),
        any::<bool>().prop_map(|named| Kind::Deadline { named })
    ];
    let near = prop_oneof![
        Just(Near::OneNsBefore),
        Just(Near::At),
        Just(Near::OneNsAfter),
    ];
    let op = prop_oneof![
        12 => (kind, near_span).prop_map(|(kind, span)| Op::Arm { kind, limit: Limit::After(span) }),
        1 => any::<u8>().prop_map(|pick| Op::Drop { pick }),
        1 => any::<u8>().prop_map(|pick| Op::Complete { pick }),
        3 => any::<u64>().prop_map(|frac| Op::Advance { span: Span::Ticks { ticks: 0, frac }, poll: true }),
        1 => Just(Op::Advance { span: Span::Ticks { ticks: 1, frac: 0 }, poll: true }),
        3 => (any::<u8>(), near).prop_map(|(pick, near)| Op::AdvanceNear { pick, near }),
    ];
    prop::collection::vec(op, 16..96).prop_map(|ops| Case {
        tick: Duration::from_millis(1),
        start: (0, 0),
        ops,
    })
}

std::thread_local! {
    /// Set while a case runs: proptest reports a panic in the case (a disagreement with
    /// the reference, or a debug assertion in the wheel) as the case's failure, so printing
    /// it on every shrinking step too would only bury the report.
    static IN_CASE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

fn quiet_panics_in_cases() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CASE.with(core::cell::Cell::get) {
                default(info);
            }
        }));
    });
}

/// Runs `play` (a case against the reference), with its panics reported by proptest
/// alone.
fn quietly(play: impl FnOnce()) {
    struct InCase;
    impl Drop for InCase {
        fn drop(&mut self) {
            IN_CASE.with(|c| c.set(false));
        }
    }
    quiet_panics_in_cases();
    IN_CASE.with(|c| c.set(true));
    let _in_case = InCase;
    play();
}

/// [`reference::run`], with its panics reported by proptest alone.
fn run<S: Storage>(wheel: &Wheel<ManualClock, S>, capacity: Option<usize>, case: &Case) {
    quietly(|| reference::run(wheel, capacity, case));
}

/// [`reference::run_with_precise_fires`], with its panics reported by proptest alone.
#[cfg(feature = "std")]
fn run_with_precise_fires<S: Storage>(
    wheel: &Wheel<ManualClock, S>,
    capacity: Option<usize>,
    case: &Case,
) {
    quietly(|| reference::run_with_precise_fires(wheel, capacity, case));
}

/// The reference learns whether the wheel fires inside a tick from a wheel of the build;
/// here, where the core's features are known, that answer is the `sub-tick` feature's.
#[test]
fn reference_knows_whether_sub_tick_firing_is_built() {
    assert_eq!(reference::sub_tick_fires(), cfg!(feature = "sub-tick"));
}

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    // No regression files: this test owns no directory to write them to.
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fixed_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Fixed<FIXED_CAPACITY>> =
            Wheel::fixed(ManualClock::starting_at(case.start_reading()), case.tick);
        run(&wheel, Some(FIXED_CAPACITY), &case);
    }

    /// The same with the slot heads kept as bytes (`Fixed<N, u8>`, as small firmware
    /// wheels keep them): the width changes the wheel's size, never its behaviour.
    #[test]
    fn narrow_fixed_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Fixed<FIXED_CAPACITY, u8>> =
            Wheel::fixed(ManualClock::starting_at(case.start_reading()), case.tick);
        run(&wheel, Some(FIXED_CAPACITY), &case);
    }

    /// The same with fewer levels (`Fixed<N, u8, L>`): a range of 64^L ticks, past which
    /// deadlines wait at the top level and are placed again each rotation. Two levels
    /// (4 096 ticks) put most of the cases' longer deadlines beyond the range; three is
    /// what `punctual-embassy`'s wheels have.
    #[test]
    fn two_level_fixed_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Fixed<FIXED_CAPACITY, u8, 2>> =
            Wheel::fixed(ManualClock::starting_at(case.start_reading()), case.tick);
        run(&wheel, Some(FIXED_CAPACITY), &case);
    }

    #[test]
    fn three_level_fixed_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Fixed<FIXED_CAPACITY, u8, 3>> =
            Wheel::fixed(ManualClock::starting_at(case.start_reading()), case.tick);
        run(&wheel, Some(FIXED_CAPACITY), &case);
    }

    /// A growable wheel with precise fires on (`Wheel::with_precise_fires`), on cases that
    /// crowd slots: dense slots are also looked at before their tick, so every deadline
    /// fires at the first turn after its own time, as a sparse tick's does; never before.
    /// With `std` only: without it, precise fires change nothing.
    #[cfg(feature = "std")]
    #[test]
    fn precise_firing_wheel_agrees_with_the_reference(case in crowded_case()) {
        let wheel: Wheel<ManualClock, Growable> =
            Wheel::growable(ManualClock::starting_at(case.start_reading()), case.tick)
                .with_precise_fires();
        run_with_precise_fires(&wheel, None, &case);
    }

    /// The crowded cases without precise fires, for comparison: the same reference holds.
    #[test]
    fn growable_wheel_matches_reference_when_crowded(case in crowded_case()) {
        let wheel: Wheel<ManualClock, Growable> =
            Wheel::growable(ManualClock::starting_at(case.start_reading()), case.tick);
        run(&wheel, None, &case);
    }

    #[test]
    fn growable_wheel_agrees_with_the_reference(case in case()) {
        let wheel: Wheel<ManualClock, Growable> =
            Wheel::growable(ManualClock::starting_at(case.start_reading()), case.tick);
        run(&wheel, None, &case);
    }
}
