//! Locking that outlives a panicked thread. It sits at the bottom of the crate because the
//! lowest parts use it: the client's connections, the counters, the output writer and the
//! read-ahead gate all guard their state with it.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, going on with its data if a thread panicked while holding it: every value fire
/// guards stays valid between statements, and a panic must not take the run's records with it.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
