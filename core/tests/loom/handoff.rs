//! Batched wakes: the lead's poll takes the hand-off list while the next tick's turn takes
//! it back (and hands off a batch of its own). Every fired deadline's task is woken
//! exactly once, whoever takes the list, and no entry is lost or freed twice.

use loom::thread;
use punctual_core::Reading;

use crate::support::TICK;
use crate::{batched_wheel, counter, lend, model, poll, settle, woken};

/// Arms a sleep until `at` for each of `n` new counting wakers, polled once.
fn arm(
    wheel: &crate::Arc<crate::TestWheel>,
    n: usize,
    at: std::time::Duration,
) -> Vec<(
    crate::CountingWaker,
    std::task::Waker,
    impl Future<Output = ()> + Unpin + Send + 'static,
)> {
    (0..n)
        .map(|_| {
            let (count, waker) = counter();
            let mut sleep = lend(wheel).sleep_until(Reading::since_origin(at));
            assert!(poll(&mut sleep, &waker).is_pending());
            (count, waker, sleep)
        })
        .collect()
}

/// The lead's poll against the next tick's turn: the other two are woken once each.
#[test]
fn lead_takes_vs_take_back() {
    model(|| {
        let wheel = batched_wheel();
        let mut armed = arm(&wheel, 3, TICK);
        wheel.clock().set(TICK);
        wheel.turn();
        let lead = armed
            .iter()
            .position(|(count, ..)| woken(count) == 1)
            .expect("a lead");
        assert_eq!(armed.iter().map(|(c, ..)| woken(c)).sum::<usize>(), 1);
        let (lead_count, lead_waker, mut lead_sleep) = armed.remove(lead);
        wheel.clock().set(TICK * 2);

        let poller = thread::spawn(move || {
            assert!(poll(&mut lead_sleep, &lead_waker).is_ready());
        });
        let driver = {
            let wheel = lend(&wheel);
            thread::spawn(move || {
                wheel.turn();
            })
        };
        poller.join().unwrap();
        driver.join().unwrap();
        assert_eq!(woken(&lead_count), 1);
        for (count, waker, mut sleep) in armed {
            assert_eq!(woken(&count), 1, "a batched wake lost or repeated");
            assert!(poll(&mut sleep, &waker).is_ready());
        }
        let (task, _) = counter();
        settle(&wheel, &task, 0, TICK * 3);
    });
}

/// The lead's poll against a turn that takes back its batch and hands off the next
/// tick's: each task woken once, after one more turn at the latest.
#[test]
fn lead_takes_vs_a_new_hand_off() {
    model(|| {
        let wheel = batched_wheel();
        let mut first = arm(&wheel, 2, TICK);
        let second = arm(&wheel, 2, TICK * 2);
        wheel.clock().set(TICK);
        wheel.turn();
        let lead = first
            .iter()
            .position(|(count, ..)| woken(count) == 1)
            .expect("a lead");
        let (lead_count, lead_waker, mut lead_sleep) = first.remove(lead);
        wheel.clock().set(TICK * 2);

        let poller = thread::spawn(move || {
            assert!(poll(&mut lead_sleep, &lead_waker).is_ready());
        });
        let driver = {
            let wheel = lend(&wheel);
            thread::spawn(move || {
                wheel.turn();
            })
        };
        poller.join().unwrap();
        driver.join().unwrap();
        assert_eq!(woken(&lead_count), 1);
        assert_eq!(woken(&first[0].0), 1, "the first batch, lost or repeated");
        // The second batch: its lead woken by the turn, the other by the lead's poll or by
        // the next tick's turn.
        assert!(second.iter().map(|(c, ..)| woken(c)).sum::<usize>() >= 1);
        wheel.clock().set(TICK * 3);
        wheel.turn();
        for (count, waker, mut sleep) in first.into_iter().chain(second) {
            assert_eq!(woken(&count), 1, "a batched wake lost or repeated");
            assert!(poll(&mut sleep, &waker).is_ready());
        }
        let (task, _) = counter();
        settle(&wheel, &task, 0, TICK * 4);
    });
}
