//! Locks that survive poisoning. A thread that panicked while holding one (a supervisor, say)
//! leaves it poisoned; `lock().unwrap()` on Node's main thread would then panic inside a libuv or
//! napi callback. What these locks guard is kept consistent at every point a panic can reach
//! (each holder writes whole values), and the run whose thread panicked is ended as failed.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

pub trait Lock<T> {
    /// The lock's guard, poisoned or not.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T> Lock<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

pub trait Wait {
    /// `wait_timeout`, poisoned or not.
    fn wait_for<'a, T>(&self, guard: MutexGuard<'a, T>, timeout: Duration) -> MutexGuard<'a, T>;
}

impl Wait for Condvar {
    fn wait_for<'a, T>(&self, guard: MutexGuard<'a, T>, timeout: Duration) -> MutexGuard<'a, T> {
        match self.wait_timeout(guard, timeout) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_still_locks() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let held = m.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.lock().unwrap();
            panic!("poisons it");
        })
        .join();
        assert!(m.is_poisoned());
        *m.locked() += 1;
        assert_eq!(*m.locked(), 2);
        let cv = Condvar::new();
        assert_eq!(*cv.wait_for(m.locked(), Duration::from_millis(1)), 2);
    }
}
