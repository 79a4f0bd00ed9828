//! Retries inside one budget: three attempts of up to 80 ms each can never outlive a
//! 200 ms budget, and when the budget runs out the retry loop itself is dropped, so no
//! further attempt starts (unlike retry libraries whose retries go on in the background
//! after the caller has timed out).
//!
//! The flaky call here always takes longer than its own deadline, so every attempt times
//! out; watch the third one being cut to what is left of the budget.
//!
//! Run it with `cargo run --example budget_retries`.

use std::time::{Duration, Instant};

use punctual::DeadlineExt;

/// A call that takes 120 ms: longer than the 80 ms each attempt is given.
async fn flaky_call() -> &'static str {
    punctual::sleep(Duration::from_millis(120)).await;
    "response"
}

fn main() {
    let start = Instant::now();
    let outcome = futures_executor::block_on(punctual::budget(Duration::from_millis(200), async {
        for attempt in 1.. {
            println!("attempt {attempt} starts at {:>4.0?}", start.elapsed());
            match flaky_call()
                .deadline(Duration::from_millis(80))
                .named("attempt")
                .await
            {
                Ok(response) => return Ok(response),
                Err(e) if e.is_budget() => {
                    println!("attempt {attempt} cut short: {e}");
                    return Err(e);
                }
                Err(e) => println!("attempt {attempt} failed: {e}"),
            }
        }
        unreachable!()
    }));
    let error = outcome
        .and_then(|inner| inner)
        .expect_err("every attempt is too slow");
    let took = start.elapsed();
    println!("gave up after {took:.0?}: {error}");
    assert!(error.is_budget());
    assert!(
        took >= Duration::from_millis(200),
        "the budget never ends early"
    );
}
