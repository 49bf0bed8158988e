//! The waker a request task lends its connection, which can be held shut while the task takes
//! what the connection handed over.
//!
//! Taking a body frame out of hyper's channel wakes the channel's sender, and the sender is the
//! connection, polled with this task's waker: every token would wake its task once more, to poll
//! the connection that the task polls again anyway before it waits (`direct::poll_driven`).
//! Wakes that come while the gate is held are not passed on but noted, so that the task, still
//! running, polls the connection once more itself. A wake from anywhere else (the socket, from
//! the I/O driver) goes through to the task.

use crate::sync::lock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};

/// What a connection's waker wakes: the task polling it, unless held.
#[derive(Default)]
struct Gate {
    /// The task that last polled the connection.
    task: Mutex<Option<Waker>>,
    /// Set while the task takes from the connection's channels.
    held: AtomicBool,
    /// A wake came while held.
    missed: AtomicBool,
}

impl Wake for Gate {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.held.load(Ordering::Acquire) {
            self.missed.store(true, Ordering::Release);
        } else if let Some(task) = &*lock(&self.task) {
            task.wake_by_ref();
        }
    }
}

/// A connection's gate and the waker made of it (one allocation per connection).
pub(super) struct GateWaker {
    gate: Arc<Gate>,
    waker: Waker,
}

impl GateWaker {
    pub(super) fn new() -> Self {
        let gate = Arc::new(Gate::default());
        Self {
            waker: Waker::from(gate.clone()),
            gate,
        }
    }

    /// The waker to poll the connection with, waking `task` (the one polling now).
    pub(super) fn waker(&self, task: &Waker) -> &Waker {
        let mut current = lock(&self.gate.task);
        if !current.as_ref().is_some_and(|w| w.will_wake(task)) {
            *current = Some(task.clone());
        }
        &self.waker
    }

    /// Lets go of the task: the connection goes back to the pool, and a wake of it while idle
    /// (the server closing it) is for whichever task leases it next to see.
    pub(super) fn forget(&self) {
        lock(&self.gate.task).take();
    }

    /// Runs `take` with the gate held; returns its result and whether a wake was held back, in
    /// which case the caller must poll the connection again before it waits.
    pub(super) fn held<T>(&self, take: impl FnOnce() -> T) -> (T, bool) {
        self.gate.held.store(true, Ordering::Release);
        let out = take();
        self.gate.held.store(false, Ordering::Release);
        (out, self.gate.missed.swap(false, Ordering::AcqRel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_wake_while_held_is_noted_not_passed_on() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let task = Waker::from(count.clone());
        let gate = GateWaker::new();
        let w = gate.waker(&task).clone();
        w.wake_by_ref();
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            1,
            "an open gate passes wakes on"
        );
        let ((), missed) = gate.held(|| w.wake_by_ref());
        assert!(missed);
        assert_eq!(
            count.0.load(Ordering::Relaxed),
            1,
            "a held gate passes none"
        );
        let ((), missed) = gate.held(|| ());
        assert!(!missed, "a missed wake is reported once");
        w.wake_by_ref();
        assert_eq!(count.0.load(Ordering::Relaxed), 2);
    }
}
