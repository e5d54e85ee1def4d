//! A sandbox process's start-up, before any run: its own Landlock layer, swc warmed, V8 started.

use super::fatal::on_fatal;
use super::strip_program;
use super::HEAP_MB;
use crate::isolate::source::ProgramText;

/// Hooks and layers that need V8 loaded but no isolate thread yet.
pub(super) fn start_up(heap_mb: f64) {
    harden();
    warm_strip();
    start_v8(heap_mb);
}

/// No file access from here on (stacked on the helper's ruleset): V8 and ICU are loaded, and
/// every thread this process (or a child of its template) will have is started after this
/// point, so all inherit it.
pub(super) fn harden() {
    crate::sandbox::harden::landlock::restrict(&[], &[], &[], &[], true);
}

/// A forked process's own Landlock domain, nested in its template's, before any thread starts:
/// its scopes keep signals and abstract sockets from reaching the template or a sibling (another
/// run's process), whatever the seccomp allowlist holds on this machine.
pub(super) fn isolate_from_siblings() {
    harden();
}

/// swc's first strip in a process initialises its tables: pay for that here, not in a run (a
/// template pays once for all its children).
pub(super) fn warm_strip() {
    let _ = strip_program(&ProgramText::plain("let warm: number = 1"));
    // The CPU's features, which memchr (the inbox's frame splitter) detects on first use with
    // `cpuid`, costly under a hypervisor: once here, not in every forked process's first run.
    let _ = memchr::memchr(b'\n', b"warm\n");
}

/// V8's process-wide set-up, without threads (a template does it once for all its children).
pub(super) fn start_v8(heap_mb: f64) {
    let _ = HEAP_MB.set(heap_mb);
    // Entropy from the kernel, not /dev/urandom: this process opens no file after start-up.
    v8::V8::set_entropy_source(|buf: &mut [u8]| crate::panic::guard(|| getrandom::fill(buf).is_ok(), |_| false));
    v8::V8::set_fatal_error_handler(on_fatal);
    crate::isolate::platform::single_threaded();
}
