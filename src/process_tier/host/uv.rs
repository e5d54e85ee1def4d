//! Node's own event loop reading a run's channel: a libuv poll handle on the main thread, so a
//! binding call goes from the sandbox process straight to the thread that runs the binding (no
//! supervisor hop in between). libuv's functions are looked up when first needed: this addon
//! also loads without Node (in sandbox processes), and a runtime without them keeps the
//! supervisor thread as the reader.

use std::ffi::{c_int, c_void, CStr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, OnceLock};

use napi::sys;

use super::main_call::MainCallback;

/// libuv's `UV_POLL` handle type and `UV_READABLE` event (stable across libuv 1.x).
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type CloseCb = unsafe extern "C" fn(*mut c_void);
type HandleSize = unsafe extern "C" fn(c_int) -> usize;
type PollInit = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int) -> c_int;
type PollStart = unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int;
type HandleFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type Close = unsafe extern "C" fn(*mut c_void, CloseCb);
type Unref = unsafe extern "C" fn(*mut c_void);

struct Uv {
    handle_size: HandleSize,
    poll_init: PollInit,
    poll_start: PollStart,
    poll_stop: HandleFn,
    close: Close,
    unref: Unref,
}

fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        let find = |name: &CStr| {
            // SAFETY: dlsym on the global scope with a NUL-terminated name.
            let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!symbol.is_null()).then_some(symbol)
        };
        // SAFETY: each symbol is libuv's function of that name, whose C signature is the one
        // transmuted to (libuv 1.x's stable ABI).
        unsafe {
            Some(Uv {
                handle_size: std::mem::transmute::<*mut c_void, HandleSize>(find(c"uv_handle_size")?),
                poll_init: std::mem::transmute::<*mut c_void, PollInit>(find(c"uv_poll_init")?),
                poll_start: std::mem::transmute::<*mut c_void, PollStart>(find(c"uv_poll_start")?),
                poll_stop: std::mem::transmute::<*mut c_void, HandleFn>(find(c"uv_poll_stop")?),
                close: std::mem::transmute::<*mut c_void, Close>(find(c"uv_close")?),
                unref: std::mem::transmute::<*mut c_void, Unref>(find(c"uv_unref")?),
            })
        }
    })
    .as_ref()
}

/// What the main thread does when the channel is readable: reads it, calls `callback` with each
/// event it decoded (with no lock held), and returns false once the run no longer wants it to
/// read (the handle then closes itself). Both backends' runs are read this way.
pub trait MainReader: Send + Sync {
    /// `fd` is the handle's own duplicate of the channel, open for the call's duration.
    fn on_readable(&self, fd: RawFd, callback: &MainCallback) -> bool;
    /// `on_readable` panicked with `reason`: the run must end, and nobody reads for it again.
    fn failed(&self, reason: &str);
    /// The handle closes on an error status (a socket whose peer closed it with bytes unread
    /// reports POLLERR) without having read: whoever else watches the run reads what is left.
    fn released(&self) {}
}

/// A poll handle's `data`: the reader, the run's JavaScript callback and the descriptor it
/// watches (all released with the handle, on the main thread).
struct Watch {
    reader: Arc<dyn MainReader>,
    callback: Arc<MainCallback>,
    env: sys::napi_env,
    fd: OwnedFd,
    size: usize,
    /// Its callback is running: a nested event loop (a binding that spins one) must not read,
    /// or close the handle, under it.
    busy: std::cell::Cell<bool>,
}

const ALIGN: usize = 16;

/// Starts reading `fd` (a duplicate the handle owns) on Node's main thread, delivering its
/// events to `callback`; false when this runtime has no libuv to do it with. Must be called on
/// the main thread with its `env`.
pub fn read_on_main(env: sys::napi_env, fd: OwnedFd, reader: Arc<dyn MainReader>, callback: Arc<MainCallback>) -> bool {
    let Some(uv) = uv() else { return false };
    let mut uv_loop = std::ptr::null_mut();
    // SAFETY: env is the live env of the calling napi function.
    if unsafe { sys::napi_get_uv_event_loop(env, &mut uv_loop) } != sys::Status::napi_ok || uv_loop.is_null() {
        return false;
    }
    // SAFETY: uv_handle_size is a pure function of the type.
    let size = unsafe { (uv.handle_size)(UV_POLL) };
    let Ok(layout) = std::alloc::Layout::from_size_align(size.max(std::mem::size_of::<*mut c_void>()), ALIGN) else {
        return false;
    };
    // SAFETY: a zeroed allocation of libuv's poll handle size; freed in `closed`.
    let handle = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<c_void>();
    if handle.is_null() {
        return false;
    }
    let raw_fd = fd.as_raw_fd();
    let watch =
        Box::into_raw(Box::new(Watch { reader, callback, env, fd, size: layout.size(), busy: Default::default() }));
    // SAFETY: handle is live memory of the right size; `data` is a handle's first field.
    unsafe {
        if (uv.poll_init)(uv_loop.cast(), handle, raw_fd) != 0 {
            drop(Box::from_raw(watch));
            std::alloc::dealloc(handle.cast(), layout);
            return false;
        }
        *handle.cast::<*mut Watch>() = watch;
        // The run's own promise keeps Node alive; this handle must not.
        (uv.unref)(handle);
        if (uv.poll_start)(handle, UV_READABLE, readable) != 0 {
            (uv.close)(handle, closed);
            return false;
        }
        // A worker whose environment is torn down mid-run must find no open handle on its
        // loop (Node asserts that it closes empty), and nothing may use the env afterwards.
        if sys::napi_add_env_cleanup_hook(env, Some(env_gone), handle) != sys::Status::napi_ok {
            (uv.poll_stop)(handle);
            (uv.close)(handle, closed);
            return false;
        }
    }
    true
}

/// The env's cleanup hook: the handle closes without the callback ever touching the env again.
unsafe extern "C" fn env_gone(handle: *mut c_void) {
    // SAFETY: the hook's argument is the handle registered with it, still open (a handle that
    // closed removed its hook first).
    let watch = unsafe { &**handle.cast::<*mut Watch>() };
    crate::panic::guard(|| watch.callback.forget_env(), |_| ());
    if let Some(uv) = uv() {
        // SAFETY: a live, started poll handle on this env's loop, which runs once more before
        // it closes (a worker's does).
        unsafe {
            (uv.poll_stop)(handle);
            (uv.close)(handle, closed);
        }
    }
}

unsafe extern "C" fn readable(handle: *mut c_void, status: c_int, _events: c_int) {
    // SAFETY: libuv calls this on the main thread with the handle `read_on_main` set up.
    let watch = unsafe { &**handle.cast::<*mut Watch>() };
    if watch.busy.replace(true) {
        // Level-triggered: the outer call, or the next turn of the loop, reads what is there.
        return;
    }
    let fd = watch.fd.as_raw_fd();
    // A panic while reading ends the run (its supervisor kills the process) and this handle. On
    // an error status the handle closes unread and hands the reading back.
    let more = crate::panic::guard(
        || match status {
            0 => watch.reader.on_readable(fd, &watch.callback),
            _ => {
                watch.reader.released();
                false
            }
        },
        |reason| {
            crate::panic::guard(|| watch.reader.failed(&reason), |_| ());
            false
        },
    );
    watch.busy.set(false);
    if !more {
        if let Some(uv) = uv() {
            // SAFETY: a live, started poll handle on this loop, whose env is alive (its cleanup
            // hook has not run, or the handle would be closing).
            unsafe {
                sys::napi_remove_env_cleanup_hook(watch.env, Some(env_gone), handle);
                (uv.poll_stop)(handle);
                (uv.close)(handle, closed);
            }
        }
    }
}

unsafe extern "C" fn closed(handle: *mut c_void) {
    // SAFETY: the handle and its Watch were allocated in `read_on_main`; libuv is done with both.
    unsafe {
        let watch = Box::from_raw(*handle.cast::<*mut Watch>());
        let layout = std::alloc::Layout::from_size_align_unchecked(watch.size, ALIGN);
        crate::panic::guard(|| drop(watch), |_| ());
        std::alloc::dealloc(handle.cast(), layout);
    }
}
