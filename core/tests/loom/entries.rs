//! Entries between free lists, shards and storage: a steal from another shard on a full
//! storage, fresh blocks and steals across shards of a growable storage, the free list's
//! ABA tag, two first arms growing a growable wheel at once, and the stats scan while it
//! grows.

use std::task::Waker;
use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use punctual_core::{Fixed, Growable, ManualClock, Reading, Wheel};

use crate::support::TICK;
use crate::{arm_and_keep, counter, lend, model, model_bounded, poll, settle};

/// Arms two sleeps on this thread's shard: one until the first tick, returned (to keep it
/// armed, or forget it), and one of 30 s that a turn takes in and that is then cancelled
/// (its entry goes back on this shard's free list at the driver's next turn).
fn arm_one_and_cancel_one<S: punctual_core::Storage + 'static>(
    wheel: &Arc<Wheel<ManualClock, S>>,
    waker: &Waker,
) -> punctual_core::Sleep<'static> {
    let mut kept = lend(wheel).sleep_until(Reading::since_origin(TICK));
    assert!(poll(&mut kept, waker).is_pending());
    let mut released = lend(wheel).sleep(Duration::from_secs(30));
    assert!(poll(&mut released, waker).is_pending());
    wheel.turn();
    drop(released);
    kept
}

/// A thread whose shard has no free entry, on a storage that holds no untouched one,
/// steals another shard's free entry, while that shard's thread arms, releases and turns:
/// no entry is lost or handed out twice, and the stealing thread never runs degraded
/// while an entry is free.
#[test]
fn a_steal_from_another_shard_on_a_full_storage() {
    model(|| {
        let wheel: Arc<Wheel<ManualClock, Fixed<2>>> =
            Arc::new(Wheel::fixed(ManualClock::new(), TICK));
        let (task, task_waker) = counter();
        // Both entries touched by this thread's shard: one kept armed, one freed onto
        // this shard's list by the turn that reclaims it.
        let kept = arm_one_and_cancel_one(&wheel, &task_waker);
        wheel.turn();

        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                // Another shard, empty, and nothing untouched: steals the freed entry.
                let mut a = wheel.sleep_until(Reading::since_origin(TICK));
                assert!(poll(&mut a, &task_waker).is_pending());
                std::mem::forget(a);
            })
        };
        wheel.turn();
        other.join().unwrap();
        assert_eq!(
            wheel.degraded_polls(),
            0,
            "ran degraded while an entry was free"
        );
        settle(&wheel, &task, 2, TICK); // `kept` and `a`
        std::mem::forget(kept);
    });
}

/// Growable storage hands untouched entries to a shard in blocks, and a thread whose shard
/// is empty takes a block of its own (or, on a storage that would have to grow, steals a
/// run of another shard's entries): with two threads on two shards, arming, releasing
/// (taken back or cancelled) and taking entries concurrently, no entry is lost or handed
/// out twice.
#[test]
fn fresh_blocks_and_steals_across_shards() {
    model(|| {
        let wheel: Arc<Wheel<ManualClock, punctual_core::Growable>> =
            Arc::new(Wheel::growable(ManualClock::new(), TICK));
        let (task, task_waker) = counter();
        // This thread's shard takes the first block and keeps one entry armed; the other
        // goes back on this shard's list at the driver's next turn.
        let kept = arm_one_and_cancel_one(&wheel, &task_waker);

        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                // Another shard, empty: takes a block of its own (the storage holds one).
                let mut a = wheel.sleep(Duration::from_secs(30));
                assert!(poll(&mut a, &task_waker).is_pending());
                let mut b = wheel.sleep_until(Reading::since_origin(TICK));
                assert!(poll(&mut b, &task_waker).is_pending());
                drop(a);
                std::mem::forget(b);
            })
        };
        wheel.turn();
        let mut c = lend(&wheel).sleep(Duration::from_secs(30));
        assert!(poll(&mut c, &task_waker).is_pending());
        drop(c);
        other.join().unwrap();
        settle(&wheel, &task, 2, TICK); // `kept` and `b`
        std::mem::forget(kept);
    });
}

/// Two threads arming, cancelling, reclaiming and arming again on a two-entry wheel: the
/// free list's ABA tag keeps every entry owned by at most one deadline. A second arm may
/// find the wheel full (the other thread's cancel not reclaimed yet) and run degraded,
/// which the wheel counts; every deadline is either on its own entry or counted.
#[test]
fn free_list_aba() {
    model_bounded(2, || {
        let wheel: Arc<Wheel<ManualClock, Fixed<2>>> =
            Arc::new(Wheel::fixed(ManualClock::new(), TICK));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let wheel = wheel.clone();
                thread::spawn(move || {
                    let waker = Waker::noop();
                    let mut s = wheel.sleep(TICK * 10);
                    assert!(poll(&mut s, waker).is_pending());
                    drop(s);
                    wheel.turn(); // reclaim (or ask the current driver to)
                    let mut s = wheel.sleep(TICK * 10);
                    assert!(poll(&mut s, waker).is_pending());
                    std::mem::forget(s);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(wheel.occupied() + wheel.degraded_polls(), 2);
    });
}

/// Two threads arm the first deadlines of a growable wheel at once: both reserve its
/// first segment, one installs it and the other frees its copy. Each deadline has an entry
/// of its own and both fire. (That the loser's copy is freed, Miri checks:
/// `threads::first_arms_on_growable_wheel_each_get_an_entry`.)
#[test]
fn two_first_arms_grow_a_growable_wheel_at_once() {
    model_bounded(2, || {
        let wheel: Arc<Wheel<ManualClock, Growable>> =
            Arc::new(Wheel::growable(ManualClock::new(), TICK));
        let (task, task_waker) = counter();
        let other = {
            let wheel = wheel.clone();
            let task_waker = task_waker.clone();
            thread::spawn(move || {
                let mut sleep = lend(&wheel).sleep_until(Reading::since_origin(TICK));
                assert!(poll(&mut sleep, &task_waker).is_pending());
                std::mem::forget(sleep);
            })
        };
        let mut sleep = lend(&wheel).sleep_until(Reading::since_origin(TICK));
        assert!(poll(&mut sleep, &task_waker).is_pending());
        std::mem::forget(sleep);
        other.join().unwrap();
        settle(&wheel, &task, 2, TICK);
    });
}

/// `Wheel::stats` (which counts the entries in use by index, up to the slab's high-water
/// mark) on one thread while another arms the first deadline of a growable wheel: every
/// index the count reaches is in a segment the scan sees installed (the high-water mark is
/// published with Release after the segment, read with Acquire).
#[test]
fn stats_while_a_growable_wheel_grows() {
    model(|| {
        let wheel: Arc<Wheel<ManualClock, Growable>> =
            Arc::new(Wheel::growable(ManualClock::new(), TICK));
        // The scan on the spawned thread: loom explores it both before and after the
        // arm's operations only this way round.
        let w = lend(&wheel);
        let scanner = thread::spawn(move || w.stats().occupied);
        arm_and_keep(&wheel, TICK);
        assert!(scanner.join().unwrap() <= 1);
        assert_eq!(wheel.occupied(), 1);
    });
}
