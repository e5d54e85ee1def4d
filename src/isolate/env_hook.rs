//! An action for when a napi env is torn down while something of it is still alive (a Worker
//! that ends mid-run): Node then runs no JavaScript there again, so nothing else would end the
//! runs, threads and sandbox processes it started.

use std::ffi::c_void;
use std::sync::Arc;

use napi::sys;

struct Hooked<T> {
    target: Arc<T>,
    action: fn(&T),
}

unsafe extern "C" fn torn_down<T>(arg: *mut c_void) {
    // SAFETY: `arg` is the box `EnvHook::register` leaked; a hook runs once and, having run, is
    // never removed, so this is its only release.
    let hooked = unsafe { Box::from_raw(arg.cast::<Hooked<T>>()) };
    // Node calls this as its env ends: a panic must stop here (the env ends regardless).
    crate::panic::guard(|| (hooked.action)(&hooked.target), |_| ());
}

/// A registered hook; `remove` it on the env's thread once the action is no longer needed.
pub struct EnvHook {
    env: sys::napi_env,
    arg: *mut c_void,
    hook: unsafe extern "C" fn(*mut c_void),
    release: unsafe fn(*mut c_void),
}

// SAFETY: registered and removed only on the env's thread (napi methods); elsewhere only moved.
unsafe impl Send for EnvHook {}

unsafe fn release<T>(arg: *mut c_void) {
    // SAFETY: the box `register` leaked, whose hook was removed before it ran.
    drop(unsafe { Box::from_raw(arg.cast::<Hooked<T>>()) });
}

impl EnvHook {
    /// Runs `action(target)` if `env` is torn down before `remove`. On env's thread.
    pub fn register<T: Send + Sync + 'static>(env: sys::napi_env, target: &Arc<T>, action: fn(&T)) -> Option<EnvHook> {
        let arg = Box::into_raw(Box::new(Hooked { target: target.clone(), action })).cast::<c_void>();
        // SAFETY: a live env on its thread; `arg` stays valid until the hook runs or is removed.
        if unsafe { sys::napi_add_env_cleanup_hook(env, Some(torn_down::<T>), arg) } != sys::Status::napi_ok {
            // SAFETY: not handed to any hook.
            unsafe { release::<T>(arg) };
            return None;
        }
        Some(EnvHook { env, arg, hook: torn_down::<T>, release: release::<T> })
    }

    /// The action is no longer needed. On env's thread, while the env is alive.
    pub fn remove(self) {
        // SAFETY: removing the hook `register` added, with the same function and argument; it
        // has not run (the env is alive), so its argument is released here.
        unsafe {
            sys::napi_remove_env_cleanup_hook(self.env, Some(self.hook), self.arg);
            (self.release)(self.arg);
        }
    }
}
