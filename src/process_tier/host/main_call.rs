//! A run's `onEvent` called directly on the JavaScript thread that started the run, from the
//! libuv poll callback that read the event's frame: a binding call reaches its function without
//! a second trip through the event loop (a threadsafe function would queue it, wake the loop it
//! is already on and dispatch it on the next iteration). The call goes through
//! `napi_make_callback`, so Node drains the microtasks and ticks it queued (a binding that
//! resolves at once replies before the poll callback returns), as its own callbacks do.

use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};

use napi::bindgen_prelude::{FnArgs, ToNapiValue};
use napi::sys;

use crate::boundary::events::EventArgs;

/// The callback and its async context, shared by the run and each poll handle that reads for
/// it; used only on the thread that owns `env` (checked), and released there.
pub struct MainCallback {
    env: sys::napi_env,
    func: sys::napi_ref,
    context: sys::napi_async_context,
    thread: std::thread::ThreadId,
    /// The env was torn down (a worker's end): nothing of it may be touched any more.
    gone: AtomicBool,
    /// The reference and async context were released (the run is over).
    released: AtomicBool,
}

// SAFETY: the napi handles are only touched on `thread` (every use checks it); elsewhere the
// value is only moved, and a drop there leaks the handles instead of releasing them.
unsafe impl Send for MainCallback {}
// SAFETY: as above: shared references use the handles only on `thread`.
unsafe impl Sync for MainCallback {}

impl MainCallback {
    /// On the JavaScript thread of `env`, with `func` a live function of it; `None` when Node
    /// refuses the reference or the async context (the run then reads through its supervisor).
    pub fn new(env: sys::napi_env, func: sys::napi_value) -> Option<MainCallback> {
        let ok = |status| status == sys::Status::napi_ok;
        let mut reference = null_mut();
        let mut name = null_mut();
        let mut context = null_mut();
        // SAFETY: called on env's thread with a live value; each out-pointer is a local.
        unsafe {
            if !ok(sys::napi_create_reference(env, func, 1, &mut reference)) {
                return None;
            }
            let label = c"code-runtime-native:isolate-run";
            if !ok(sys::napi_create_string_utf8(env, label.as_ptr(), label.count_bytes() as isize, &mut name))
                || !ok(sys::napi_async_init(env, null_mut(), name, &mut context))
            {
                sys::napi_delete_reference(env, reference);
                return None;
            }
        }
        Some(MainCallback {
            env,
            func: reference,
            context,
            thread: std::thread::current().id(),
            gone: AtomicBool::new(false),
            released: AtomicBool::new(false),
        })
    }

    /// The env is being torn down: later calls and the drop leave it alone.
    pub fn forget_env(&self) {
        self.gone.store(true, Ordering::Relaxed);
    }

    fn usable(&self) -> bool {
        std::thread::current().id() == self.thread
            && !self.gone.load(Ordering::Relaxed)
            && !self.released.load(Ordering::Relaxed)
    }

    /// The run is over: its `onEvent` is released now, on env's thread. The reference is strong,
    /// and `onEvent` reaches the run's own object, which owns this callback: a cycle through a
    /// native reference that no garbage collection could break (every run's session, closures and
    /// object stayed reachable, about 1.5 KB a run).
    pub fn release(&self) {
        if !self.usable() || self.released.swap(true, Ordering::Relaxed) {
            return;
        }
        // SAFETY: on env's thread, which created both; released once (the flag above).
        unsafe {
            sys::napi_async_destroy(self.env, self.context);
            sys::napi_delete_reference(self.env, self.func);
        }
    }

    /// Calls `onEvent(kind, id, ns, name, payload)` (either backend's events). Only from a libuv
    /// callback on env's thread (no JavaScript on the stack), which is where the poll handle runs it.
    pub fn call<R: ToNapiValue>(&self, args: EventArgs<R>) {
        if !self.usable() {
            return;
        }
        let env = self.env;
        let ok = |status| status == sys::Status::napi_ok;
        let FnArgs { data: (kind, id, ns, name, payload) } = args;
        // SAFETY: on env's thread, inside a handle scope opened here; every napi_value used is
        // created in that scope.
        unsafe {
            let mut scope = null_mut();
            if !ok(sys::napi_open_handle_scope(env, &mut scope)) {
                return;
            }
            let args = (|| {
                Some([
                    ToNapiValue::to_napi_value(env, kind).ok()?,
                    f64::to_napi_value(env, id).ok()?,
                    u32::to_napi_value(env, ns).ok()?,
                    u32::to_napi_value(env, name).ok()?,
                    ToNapiValue::to_napi_value(env, payload).ok()?,
                ])
            })();
            let mut func = null_mut();
            let mut global = null_mut();
            let mut result = null_mut();
            let status = match args {
                Some(args)
                    if ok(sys::napi_get_reference_value(env, self.func, &mut func))
                        && ok(sys::napi_get_global(env, &mut global)) =>
                {
                    sys::napi_make_callback(env, self.context, global, func, args.len(), args.as_ptr(), &mut result)
                }
                // A value that did not convert leaves an exception pending, like a throw.
                _ => sys::Status::napi_pending_exception,
            };
            let mut pending = false;
            if status != sys::Status::napi_ok && ok(sys::napi_is_exception_pending(env, &mut pending)) && pending {
                // What a threadsafe function does with a callback's exception: Node's own
                // uncaught-exception path (the handler catches its own, so this is a glue bug
                // or a terminating thread, never a program's doing).
                let mut error = null_mut();
                if ok(sys::napi_get_and_clear_last_exception(env, &mut error)) {
                    sys::napi_fatal_exception(env, error);
                }
            }
            sys::napi_close_handle_scope(env, scope);
        }
    }
}

impl Drop for MainCallback {
    fn drop(&mut self) {
        self.release();
    }
}
