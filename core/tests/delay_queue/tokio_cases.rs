//! tokio-util's `tests/time_delay_queue.rs` cases that apply, on a manual clock: the clock
//! moves by `wheel.advance` where tokio's paused clock moved by `sleep`. Where tokio-util
//! wakes the task only to re-arm, this queue re-arms with the task's waker and wakes it
//! only when a value is due; the cases check that instead.

use super::*;

type Q<'w> = Queue<'w, &'static str>;

pub(super) fn setup(wheel: &TestWheel) -> (Q<'_>, Poller) {
    (DelayQueue::new(wheel, GrowableSlots::new()), Poller::new())
}

#[test]
fn single_immediate_delay() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    queue.insert_at("foo", now);
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn multi_immediate_delays() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    for value in ["1", "2", "3"] {
        queue.insert_at(value, now);
    }
    wheel.advance(ms(1));
    let mut out: Vec<_> = (0..3).map(|_| ready(poller.poll(&mut queue))).collect();
    out.sort_unstable();
    assert_eq!(out, ["1", "2", "3"]);
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn single_short_delay() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    queue.insert_at("foo", now + ms(5));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(1));
    assert!(!poller.is_woken());
    wheel.advance(ms(4));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
#[cfg_attr(miri, ignore)] // 1 200 turns of the wheel.
fn multi_delay_at_start() {
    let wheel = wheel();
    let mut queue: Queue<'_, u64> = DelayQueue::new(&wheel, GrowableSlots::new());
    let mut poller = Poller::new();
    let long = 262_144 + 9 * 4096;
    let delays = [1000, 2, 234, long, 60, 10];
    for delay in delays {
        queue.insert(delay, ms(delay));
    }
    assert!(poller.poll(&mut queue).is_pending());
    assert!(!poller.is_woken());
    let mut wakes_without_value = 0;
    for elapsed in 1..=1200 {
        wheel.advance(ms(1));
        if delays.contains(&elapsed) {
            assert!(poller.is_woken(), "not woken at {elapsed}");
            assert_eq!(ready(poller.poll(&mut queue)), elapsed);
            assert!(poller.poll(&mut queue).is_pending());
        } else if poller.is_woken() {
            // A cascade of a higher slot.
            wakes_without_value += 1;
            assert!(poller.poll(&mut queue).is_pending(), "early at {elapsed}");
        }
    }
    assert!(wakes_without_value <= 4, "{wakes_without_value} cascades");
}

#[test]
fn insert_in_past_fires_immediately() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    wheel.advance(ms(10));
    queue.insert_at("foo", now);
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
}

#[test]
fn remove_entry() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let key = queue.insert_at("foo", now + ms(5));
    assert!(poller.poll(&mut queue).is_pending());
    assert_eq!(queue.remove(key), Some("foo"));
    wheel.advance(ms(10));
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn remove_expired_item() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    wheel.advance(ms(10));
    let key = queue.insert_at("foo", now);
    assert_eq!(queue.remove(key), Some("foo"));
    // Removed before it came out: no event.
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn remove_at_timer_wheel_threshold() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let foo = queue.insert_at("foo", now + ms(64));
    let bar = queue.insert_at("bar", now + ms(64));
    wheel.advance(ms(80));
    match ready(poller.poll(&mut queue)) {
        "foo" => assert_eq!(queue.remove(bar), Some("bar")),
        "bar" => assert_eq!(queue.remove(foo), Some("foo")),
        other => panic!("{other}"),
    }
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn expires_before_last_insert() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    queue.insert_at("foo", now + ms(10_000));
    assert!(poller.poll(&mut queue).is_pending());
    queue.insert_at("bar", now + ms(600));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(600));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "bar");
}

#[test]
fn insert_before_first_after_poll() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    queue.insert_at("one", now + ms(200));
    assert!(poller.poll(&mut queue).is_pending());
    // No poll in between: the waiting task must still be woken at 100 ms.
    queue.insert_at("two", now + ms(100));
    wheel.advance(ms(99));
    assert!(!poller.is_woken());
    wheel.advance(ms(1));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "two");
}

#[test]
fn insert_after_ready_poll() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    for value in ["1", "2", "3"] {
        queue.insert_at(value, now + ms(100));
    }
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(100));
    assert!(poller.is_woken());
    let mut out = Vec::new();
    while out.len() < 3 {
        out.push(ready(poller.poll(&mut queue)));
        queue.insert_at("foo", now + ms(500));
    }
    out.sort_unstable();
    assert_eq!(out, ["1", "2", "3"]);
}

#[test]
fn insert_in_past_after_poll_fires_at_once() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    queue.insert_at("foo", now + ms(200));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(80));
    assert!(!poller.is_woken());
    queue.insert_at("bar", now + ms(40));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "bar");
}

#[test]
fn poll_expired_when_empty() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let key = queue.insert("foo", Duration::from_secs(10));
    assert!(poller.poll(&mut queue).is_pending());
    queue.remove(key);
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn item_expiry_greater_than_wheel() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    for _ in 0..2 {
        wheel.advance(ms(1 << 35));
        queue.insert("zero", ms(0));
        assert_eq!(ready(poller.poll(&mut queue)), "zero");
    }
    let key = queue.insert("one", ms(1));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(1));
    assert_eq!(ready(poller.poll(&mut queue)), "one");
    assert!(!queue.contains_key(key));
}

#[test]
fn peek() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let foo = queue.insert_at("foo", now + ms(5));
    let bar = queue.insert_at("bar", now);
    let baz = queue.insert_at("baz", now + ms(10));
    assert_eq!(queue.peek(), Some(bar));
    assert_eq!(queue.next_deadline(), Some(now));
    wheel.advance(ms(6));
    assert_eq!(queue.peek(), Some(bar));
    assert_eq!(ready(poller.poll(&mut queue)), "bar");
    assert_eq!(queue.peek(), Some(foo));
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert_eq!(queue.peek(), Some(baz));
    assert_eq!(queue.next_deadline(), Some(now + ms(10)));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(5));
    assert_eq!(ready(poller.poll(&mut queue)), "baz");
    assert_eq!(queue.peek(), None);
    assert_eq!(queue.next_deadline(), None);
}

#[test]
fn peek_entries_sharing_a_wheel_slot() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let early = queue.insert_at("early", now + ms(100));
    let late = queue.insert_at("late", now + ms(120));
    assert_eq!(queue.peek(), Some(early));
    wheel.advance(ms(105));
    assert_eq!(queue.peek(), Some(early));
    assert_eq!(ready(poller.poll(&mut queue)), "early");
    assert_eq!(queue.peek(), Some(late));
    wheel.advance(ms(20));
    assert_eq!(ready(poller.poll(&mut queue)), "late");
    assert_eq!(queue.peek(), None);
}

#[test]
fn wake_after_remove_last() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let key = queue.insert("foo", ms(1000));
    assert!(poller.poll(&mut queue).is_pending());
    queue.remove(key);
    assert!(poller.is_woken());
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn wake_after_clear() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    queue.insert("foo", ms(1000));
    assert!(poller.poll(&mut queue).is_pending());
    assert!(!poller.is_woken());
    queue.clear();
    assert!(poller.is_woken());
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn insert_after_none_wakes_when_due() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
    queue.insert("foo", ms(5));
    wheel.advance(ms(4));
    assert!(!poller.is_woken());
    wheel.advance(ms(1));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
}
