//! The recent events are bounded: the oldest go first (a process of its own, since the
//! capacity is the process's).

use std::time::Duration;

use punctual::DeadlineExt;
use punctual::report;

#[test]
fn the_recent_events_keep_the_last_ones() {
    report::enable();
    report::set_recent_capacity(3);
    const NAMES: [&str; 5] = ["r0", "r1", "r2", "r3", "r4"];
    futures_executor::block_on(async {
        for name in NAMES {
            let _ = async {}
                .deadline(Duration::from_millis(1))
                .named(name)
                .await;
        }
    });
    let names: Vec<_> = report::recent().iter().map(|e| e.name).collect();
    assert_eq!(names, ["r2", "r3", "r4"]);
    report::set_recent_capacity(1);
    assert_eq!(report::recent().len(), 1);
    report::set_recent_capacity(0);
    futures_executor::block_on(async {
        async {}
            .deadline(Duration::from_millis(1))
            .named("r5")
            .await
    })
    .unwrap();
    assert!(report::recent().is_empty());
    assert_eq!(
        report::snapshot().counts("r5").unwrap().completed,
        1,
        "still counted"
    );
}
