use std::time::Duration;
#[tokio::test(start_paused = true)]
async fn spiral() {
    let wheel = punctual_tokio::start();
    let t0 = tokio::time::Instant::now();
    let r0 = std::time::Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        tx.send(()).unwrap();
    });
    rx.await.unwrap();
    eprintln!(
        "virtual elapsed {:?} real {:?}, wheel now {:?}",
        t0.elapsed(),
        r0.elapsed(),
        punctual_core::Clock::now(wheel.clock())
    );
    let r = wheel
        .deadline(std::future::pending::<()>(), Duration::from_millis(5))
        .await;
    eprintln!("{r:?} after {:?}", r0.elapsed());
}
