//! Advances that add up to a deadline's duration fire it, however they are split and
//! whatever the phase of its start within a tick, and never before: on a wheel of a
//! `ManualClock`, under `virtual_time`, and under tokio's paused clock (beside tokio's own
//! `sleep`, which fires the same way).

use std::future::pending;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use proptest::prelude::*;
use punctual::prelude::*;
use punctual::virtual_time;
use punctual::wheel::{Growable, ManualClock, Wheel};

/// A start phase (ns into a 1 ms tick), a duration, and the cut points that split it.
fn case() -> impl Strategy<Value = (u64, u64, Vec<u64>)> {
    (0u64..1_000_000, 1u64..30_000_000_000).prop_flat_map(|(phase, total)| {
        (
            Just(phase),
            Just(total),
            proptest::collection::vec(0..total, 0..5),
        )
    })
}

/// The pieces of `total` cut at `cuts`, in order, adding up to `total`.
fn pieces(total: u64, mut cuts: Vec<u64>) -> Vec<Duration> {
    cuts.sort_unstable();
    cuts.push(total);
    let mut last = 0;
    cuts.into_iter()
        .map(|cut| {
            let piece = cut - last;
            last = cut;
            Duration::from_nanos(piece)
        })
        .collect()
}

fn poll<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn on_a_manual_clock((phase, total, cuts) in case()) {
        let wheel: Wheel<ManualClock, Growable> =
            Wheel::growable(ManualClock::new(), Duration::from_millis(1));
        wheel.advance(Duration::from_nanos(phase));
        let mut d = pin!(wheel.deadline(Duration::from_nanos(total), pending::<()>()));
        prop_assert!(poll(d.as_mut()).is_pending());
        let pieces = pieces(total, cuts);
        let (last, before) = pieces.split_last().unwrap();
        for piece in before {
            wheel.advance(*piece);
            prop_assert!(poll(d.as_mut()).is_pending(), "early");
        }
        wheel.advance(*last);
        prop_assert!(matches!(poll(d.as_mut()), Poll::Ready(Err(_))), "not fired once the advances add up");
    }

    #[test]
    fn under_virtual_time((phase, total, cuts) in case()) {
        // Each case on a thread of its own: a thread's virtual clock only moves forward.
        let outcome = std::thread::spawn(move || {
            virtual_time::pause();
            virtual_time::advance(Duration::from_nanos(phase));
            let mut d = pin!(pending::<()>().deadline(Duration::from_nanos(total)));
            assert!(poll(d.as_mut()).is_pending());
            let pieces = pieces(total, cuts);
            let (last, before) = pieces.split_last().unwrap();
            for piece in before {
                virtual_time::advance(*piece);
                assert!(poll(d.as_mut()).is_pending(), "early");
            }
            virtual_time::advance(*last);
            assert!(matches!(poll(d.as_mut()), Poll::Ready(Err(_))), "not fired once the advances add up");
        })
        .join();
        prop_assert!(outcome.is_ok());
    }
}

/// `advance_to_next` stops on the deadline's own time, whatever the start's phase.
#[test]
fn advance_to_next_lands_on_the_deadline() {
    std::thread::spawn(|| {
        virtual_time::pause();
        for phase in [0, 1, 7, 333_333, 999_999] {
            virtual_time::advance(Duration::from_nanos(phase));
            let mut d = pin!(pending::<()>().deadline(Duration::from_millis(20)));
            assert!(poll(d.as_mut()).is_pending());
            assert_eq!(
                virtual_time::advance_to_next(),
                Some(Duration::from_millis(20))
            );
            assert!(matches!(poll(d.as_mut()), Poll::Ready(Err(_))));
        }
        assert_eq!(virtual_time::advance_to_next(), None);
    })
    .join()
    .unwrap();
}

/// On tokio's paused clock the default deadline fires no later than tokio's own sleep of
/// the same duration, however the advances are split: from a start on tokio's millisecond
/// grid both fire once the advances add up. (From a start off that grid tokio's sleep
/// rounds its deadline up to the next millisecond; the default deadline, driven by tokio's
/// timer, may then wait for that millisecond too, and never longer.)
#[test]
fn beside_tokio_sleep_on_the_paused_clock() {
    let splits: [&[u64]; 5] = [
        &[20_000_000],
        &[19_999_000, 1_000],
        &[19_999_999, 1],
        &[1, 19_999_999],
        &[5_000_000, 5_000_000, 9_999_500, 500],
    ];
    for phase_us in [0u64, 1, 300, 999] {
        for split in splits {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            rt.block_on(async {
                tokio::time::advance(Duration::from_micros(phase_us)).await;
                let total = Duration::from_micros(20_000_000);
                let mut ours = tokio_test::task::spawn(pending::<()>().deadline(total));
                let mut theirs = tokio_test::task::spawn(tokio::time::sleep(total));
                assert!(ours.poll().is_pending());
                assert!(theirs.poll().is_pending());
                let (last, before) = split.split_last().unwrap();
                for piece in before {
                    tokio::time::advance(Duration::from_micros(*piece)).await;
                    assert!(
                        ours.poll().is_pending(),
                        "early at phase {phase_us}, split {split:?}"
                    );
                }
                tokio::time::advance(Duration::from_micros(*last)).await;
                let tokio_fired = theirs.poll().is_ready();
                let ours_fired = ours.poll().is_ready();
                let at = format!("phase {phase_us} us, split {split:?}");
                assert!(
                    ours_fired || !tokio_fired,
                    "later than tokio's sleep at {at}"
                );
                if phase_us == 0 {
                    assert!(ours_fired && tokio_fired, "not fired on the grid at {at}");
                } else if !ours_fired {
                    tokio::time::advance(Duration::from_millis(1)).await;
                    assert!(ours.poll().is_ready(), "not fired a millisecond on at {at}");
                }
            });
        }
    }
}
