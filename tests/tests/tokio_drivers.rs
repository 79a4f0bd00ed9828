//! A default deadline inside a tokio runtime fires inside that runtime: on the runtime's
//! reactor (a timerfd, on Linux) or its timer, with no thread of punctual's. Only a
//! runtime with neither driver borrows the global wheel's timer thread.
//!
//! One test, in a binary of its own: it reads what the process has done so far (the
//! global wheel's entries, the threads that run).

use std::time::{Duration, Instant};

use tokio::runtime::Builder;

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect()
}

/// A default deadline of 5 ms fires, not early, on a current-thread runtime built so.
fn fires_on(build: impl FnOnce(&mut Builder) -> &mut Builder) {
    let rt = build(&mut Builder::new_current_thread()).build().unwrap();
    rt.block_on(async {
        use punctual::DeadlineExt;
        let started = Instant::now();
        let r = std::future::pending::<()>()
            .deadline(Duration::from_millis(5))
            .await;
        assert!(r.is_err());
        assert!(started.elapsed() >= Duration::from_millis(5), "early");
    });
}

fn global_wheel_used() -> bool {
    punctual::wheel::global_wheel().stats().high_water > 0
}

#[test]
fn default_deadlines_fire_inside_the_runtime() {
    fires_on(Builder::enable_all);
    fires_on(Builder::enable_time);
    if cfg!(target_os = "linux") {
        fires_on(Builder::enable_io);
    }
    let multi = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    multi.block_on(async {
        let tasks: Vec<_> = (0..4)
            .map(|i| tokio::spawn(punctual::sleep(Duration::from_millis(2 + i))))
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert!(
        !global_wheel_used(),
        "a runtime with drivers used the global wheel"
    );
    assert!(
        !thread_names()
            .iter()
            .any(|name| name.starts_with("punctual")),
        "a thread of punctual's runs: {:?}",
        thread_names()
    );

    // Neither driver: the driver task sleeps with an alarm on the global wheel.
    fires_on(|b| b);
    assert!(global_wheel_used(), "no alarm on the global wheel");
}
