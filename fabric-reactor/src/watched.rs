//! [`Watched`]: state that a tenant (on the reactor thread) and the threads consuming it
//! share, with the condition variable its changes are announced on. Locks survive a
//! poisoned mutex (a panicking consumer must not wedge the reactor).

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// A value behind a mutex, and a condition variable for its changes.
#[derive(Debug, Default)]
pub struct Watched<T> {
    state: Mutex<T>,
    changed: Condvar,
}

impl<T> Watched<T> {
    /// `value`, unwatched so far.
    pub fn new(value: T) -> Watched<T> {
        Watched {
            state: Mutex::new(value),
            changed: Condvar::new(),
        }
    }

    /// Locks the value.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes every thread waiting for a change.
    pub fn notify_all(&self) {
        self.changed.notify_all();
    }

    /// Waits for a change until `deadline` (`None`: without a bound). Spurious wake-ups
    /// are the caller's loop's job.
    pub fn wait_until<'a>(
        &self,
        guard: MutexGuard<'a, T>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, T> {
        match deadline {
            None => self.changed.wait(guard).unwrap_or_else(|p| p.into_inner()),
            Some(deadline) => {
                let timeout = deadline.saturating_duration_since(Instant::now());
                self.changed
                    .wait_timeout(guard, timeout)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_change_wakes_a_waiter_and_a_deadline_ends_the_wait() {
        let watched = Arc::new(Watched::new(0u32));
        let waiter = Arc::clone(&watched);
        let thread = std::thread::spawn(move || {
            let mut value = waiter.lock();
            while *value == 0 {
                value = waiter.wait_until(value, None);
            }
            *value
        });
        std::thread::sleep(Duration::from_millis(20));
        *watched.lock() = 7;
        watched.notify_all();
        assert_eq!(thread.join().unwrap(), 7);
        let guard = watched.lock();
        let began = Instant::now();
        drop(watched.wait_until(guard, Some(Instant::now() + Duration::from_millis(30))));
        assert!(began.elapsed() >= Duration::from_millis(25));
    }
}
