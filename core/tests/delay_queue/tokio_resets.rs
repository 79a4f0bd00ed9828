//! tokio-util's `tests/time_delay_queue.rs` cases about resets, on a manual clock, as in
//! `tokio_cases.rs`.

use super::tokio_cases::setup;
use super::*;

#[test]
fn reset_entry() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let key = queue.insert_at("foo", now + ms(5));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(1));
    queue.reset_at(key, now + ms(10)).unwrap();
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(7));
    assert!(!poller.is_woken());
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(2));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn reset_to_past_wakes_pending_queue() {
    let wheel = wheel();
    wheel.advance(ms(1000));
    let (mut queue, mut poller) = setup(&wheel);
    let key = queue.insert("foo", ms(10_000));
    assert!(poller.poll(&mut queue).is_pending());
    assert!(!poller.is_woken());
    let past = queue.now() - ms(100);
    queue.reset_at(key, past).unwrap();
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn reset_much_later() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    wheel.advance(ms(1));
    let key = queue.insert_at("foo", now + ms(200));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(3));
    queue.reset_at(key, now + ms(10)).unwrap();
    wheel.advance(ms(20));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
}

#[test]
fn reset_twice() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    wheel.advance(ms(1));
    let key = queue.insert_at("foo", now + ms(200));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(3));
    queue.reset_at(key, now + ms(50)).unwrap();
    wheel.advance(ms(20));
    queue.reset_at(key, now + ms(40)).unwrap();
    wheel.advance(ms(20));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
}

#[test]
fn repeatedly_reset_entry_inserted_as_expired() {
    let wheel = wheel();
    wheel.advance(ms(1000));
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let key = queue.insert_at("foo", now - ms(100));
    queue.reset_at(key, now + ms(100)).unwrap();
    queue.reset_at(key, now + ms(50)).unwrap();
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(49));
    assert!(!poller.is_woken());
    wheel.advance(ms(11));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn multi_reset() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let one = queue.insert_at("one", now + ms(200));
    let two = queue.insert_at("two", now + ms(250));
    assert!(poller.poll(&mut queue).is_pending());
    queue.reset_at(one, now + ms(300)).unwrap();
    queue.reset_at(two, now + ms(350)).unwrap();
    queue.reset_at(one, now + ms(400)).unwrap();
    wheel.advance(ms(310));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(50));
    assert_eq!(ready(poller.poll(&mut queue)), "two");
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(50));
    assert_eq!(ready(poller.poll(&mut queue)), "one");
    assert!(matches!(poller.poll(&mut queue), Poll::Ready(None)));
}

#[test]
fn expire_first_key_when_reset_earlier() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let one = queue.insert_at("one", now + ms(200));
    queue.insert_at("two", now + ms(250));
    assert!(poller.poll(&mut queue).is_pending());
    queue.reset_at(one, now + ms(100)).unwrap();
    wheel.advance(ms(100));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "one");
}

#[test]
fn expire_second_key_when_reset_earlier() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    queue.insert_at("one", now + ms(200));
    let two = queue.insert_at("two", now + ms(250));
    assert!(poller.poll(&mut queue).is_pending());
    queue.reset_at(two, now + ms(100)).unwrap();
    wheel.advance(ms(100));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "two");
}

#[test]
fn reset_first_expiring_item_to_expire_later() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let one = queue.insert_at("one", now + ms(200));
    queue.insert_at("two", now + ms(250));
    assert!(poller.poll(&mut queue).is_pending());
    queue.reset_at(one, now + ms(300)).unwrap();
    // The sleep armed for "one" may wake the task once; nothing comes out then.
    wheel.advance(ms(200));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(49));
    assert!(!poller.is_woken());
    wheel.advance(ms(1));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "two");
}

#[test]
fn reset_later_after_slot_starts() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let foo = queue.insert_at("foo", now + ms(100));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(80));
    assert!(!poller.is_woken());
    queue.reset_at(foo, now + ms(120)).unwrap();
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(39));
    assert!(!poller.is_woken());
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(1));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
}

#[test]
fn reset_earlier_after_slot_starts() {
    let wheel = wheel();
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let foo = queue.insert_at("foo", now + ms(200));
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(80));
    assert!(!poller.is_woken());
    queue.reset_at(foo, now + ms(120)).unwrap();
    // Re-armed for 120 ms with the waiting task's waker: no wake before.
    assert!(!poller.is_woken());
    wheel.advance(ms(39));
    assert!(!poller.is_woken());
    assert!(poller.poll(&mut queue).is_pending());
    wheel.advance(ms(1));
    assert!(poller.is_woken());
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
}

#[test]
fn reset_inserted_expired() {
    let wheel = wheel();
    wheel.advance(ms(1000));
    let (mut queue, mut poller) = setup(&wheel);
    let now = queue.now();
    let key = queue.insert_at("foo", now - ms(100));
    queue.reset_at(key, now + ms(100)).unwrap();
    assert_eq!(queue.len(), 1);
    wheel.advance(ms(200));
    assert_eq!(ready(poller.poll(&mut queue)), "foo");
    assert_eq!(queue.len(), 0);
}
