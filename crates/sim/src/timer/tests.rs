use super::*;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::task::Wake;
use std::time::Duration;

/// A waker that notes when it was first woken and how often.
#[derive(Default)]
struct Recorder {
    first_ns: AtomicU64,
    wakes: AtomicUsize,
}

impl Wake for Recorder {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let now = monotonic_ns();
        let _ = self.first_ns.compare_exchange(
            0,
            now,
            std::sync::atomic::Ordering::SeqCst,
            std::sync::atomic::Ordering::SeqCst,
        );
        self.wakes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn armed(timer: &PreciseTimer) -> u64 {
    timer.shared.lock().armed
}

/// Lets the driver task run until `done` holds (real time, at most 5 s).
async fn until(done: impl Fn() -> bool) {
    for _ in 0..5_000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("timed out");
}

#[tokio::test]
async fn wakes_every_deadline_never_early() {
    let timer = PreciseTimer::start().expect("a timerfd");
    let base = monotonic_ns();
    let ms = |m: u64| base + m * 1_000_000;
    let record = |deadline: u64| {
        let r = Arc::new(Recorder::default());
        timer.register(deadline, &Waker::from(r.clone()));
        (deadline, r)
    };
    let mut all = vec![record(ms(40))];
    // The driver arms the timerfd on the only deadline.
    until(|| armed(&timer) == ms(40)).await;
    // Out of order, one earlier than the armed deadline (the driver must re-arm), two equal.
    for m in [60, 15, 25, 25, 5, 80] {
        all.push(record(ms(m)));
    }
    assert_eq!(
        armed(&timer),
        ms(5),
        "an earlier deadline lowers the armed one"
    );
    until(|| {
        all.iter()
            .all(|(_, r)| r.wakes.load(std::sync::atomic::Ordering::SeqCst) > 0)
    })
    .await;
    for (deadline, r) in &all {
        let at = r.first_ns.load(std::sync::atomic::Ordering::SeqCst);
        assert!(at >= *deadline, "woken {} ns early", deadline - at);
        assert_eq!(r.wakes.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Loose: a loaded machine may delay the driver task, never the other way round.
        assert!(
            at - deadline < 500_000_000,
            "woken {} ns late",
            at - deadline
        );
    }
    // Everything fired: the heap is empty and the timerfd disarmed.
    until(|| armed(&timer) == NEVER).await;
    assert!(timer.shared.lock().heap.is_empty());
}

#[tokio::test]
async fn a_past_deadline_fires_at_once_and_the_driver_ends_with_its_handles() {
    let timer = PreciseTimer::start().expect("a timerfd");
    let r = Arc::new(Recorder::default());
    timer.register(monotonic_ns().saturating_sub(1), &Waker::from(r.clone()));
    until(|| r.wakes.load(std::sync::atomic::Ordering::SeqCst) == 1).await;
    // Register far ahead, then drop the only handle: the driver must notice and let go of it.
    timer.register(monotonic_ns() + 3_600_000_000_000, &Waker::from(r.clone()));
    until(|| Arc::strong_count(&r) == 2).await;
    assert!(Arc::strong_count(&r) == 2);
    let weak = Arc::downgrade(&timer.shared);
    drop(timer);
    until(|| weak.upgrade().is_none()).await;
    // The pending entry's waker was dropped with the heap.
    assert_eq!(Arc::strong_count(&r), 1);
}
