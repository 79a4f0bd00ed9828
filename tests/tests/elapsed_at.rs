//! A deadline at an instant reports the instant it was given, on every default wheel:
//! the global wheel and a tokio runtime's, on real time and paused; a budget that ends
//! one reports the budget.

use std::time::{Duration, Instant};

use punctual::DeadlineExt;
use punctual::wheel::GlobalClock;

#[test]
fn timeout_at_on_the_global_wheel_reports_its_instant() {
    futures_executor::block_on(async {
        let at = Instant::now() + Duration::from_millis(20);
        // Polled first well after it was made: the instant, not the time left then.
        std::thread::sleep(Duration::from_millis(5));
        let e = punctual::timeout_at(at, std::future::pending::<()>())
            .await
            .unwrap_err();
        assert_eq!(e.instant(), Some(GlobalClock::reading_of(at)));
        assert_eq!(e.duration(), Duration::ZERO);
        assert_eq!(e.to_string(), "deadline at an instant elapsed");
    });
}

#[test]
fn deadline_at_already_passed_reports_its_instant() {
    futures_executor::block_on(async {
        let at = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        let e = std::future::pending::<()>()
            .deadline_at(at)
            .named("late")
            .await
            .unwrap_err();
        assert_eq!(e.instant(), Some(GlobalClock::reading_of(at)));
        assert_eq!(e.duration(), Duration::ZERO);
        assert_eq!(e.name(), Some("late"));
    });
}

#[test]
fn a_deadline_of_a_duration_reports_no_instant() {
    futures_executor::block_on(async {
        let e = punctual::timeout(Duration::from_millis(3), std::future::pending::<()>())
            .await
            .unwrap_err();
        assert_eq!(e.instant(), None);
        assert_eq!(e.duration(), Duration::from_millis(3));
    });
}

#[test]
fn budget_cutting_a_deadline_at_reports_the_budget() {
    futures_executor::block_on(async {
        let at = Instant::now() + Duration::from_secs(10);
        let inner = punctual::budget(Duration::from_millis(5), async {
            std::future::pending::<()>().deadline_at(at).await
        });
        let e = inner.await.unwrap_err();
        assert!(e.is_budget(), "{e}");
        assert_eq!(e.instant(), None);
        assert_eq!(e.duration(), Duration::from_millis(5));
    });
}

#[test]
fn timeout_at_in_a_tokio_runtime_reports_its_instant() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let at = tokio::time::Instant::now() + Duration::from_millis(10);
        let e = punctual::timeout_at(at, std::future::pending::<()>())
            .await
            .unwrap_err();
        assert_eq!(e.instant(), Some(GlobalClock::reading_of(at.into_std())));
    });
}

#[tokio::test(start_paused = true)]
async fn timeout_at_on_paused_time_reports_its_instant() {
    let at = tokio::time::Instant::now() + Duration::from_secs(30);
    tokio::time::advance(Duration::from_secs(1)).await;
    let e = punctual::timeout_at(at, std::future::pending::<()>())
        .await
        .unwrap_err();
    assert_eq!(e.instant(), Some(GlobalClock::reading_of(at.into_std())));
}
