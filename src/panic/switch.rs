//! The suite's panic switch: `CODE_RUNTIME_NATIVE_TEST_PANIC=<site>[,<site>…]` in the host's
//! environment makes the first pass through each named site panic, so the suite can show that a
//! panic there reaches no C frame and leaves the host serving runs. Only whoever starts the host
//! sets its environment; a program never can (a sandbox process's environment is empty). Two sites
//! are in the Python template's processes: the host hands the switch, from its own environment
//! only, to its template, which trips one in its serving loop, and whose forked children (each a
//! copy that never passed the other) all trip the other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The sites, each with whether it is armed.
#[derive(Clone, Copy)]
pub enum Site {
    /// A contained run's supervisor thread, while it holds the reader's lock.
    Supervisor,
    /// Node's main thread reading a contained run's channel (a libuv poll callback).
    Reader,
    /// A native callback V8 calls on a host isolate thread (a binding call).
    Callback,
    /// A Python template's forked child taking its run's layers (src/python/template/child.rs).
    PythonEnter,
    /// Node's main thread delivering the events a Python run's thread queued (a `Flush`).
    Flush,
    /// A Python template's serving loop taking a fork request (`crn_template_serve`).
    TemplateServe,
}

/// The variable that arms the switch.
pub const VARIABLE: &str = "CODE_RUNTIME_NATIVE_TEST_PANIC";

const SITES: [(&str, Site); 6] = [
    ("supervisor", Site::Supervisor),
    ("reader", Site::Reader),
    ("callback", Site::Callback),
    ("python-enter", Site::PythonEnter),
    ("flush", Site::Flush),
    ("template-serve", Site::TemplateServe),
];

fn armed() -> &'static [AtomicBool; 6] {
    static ARMED: OnceLock<[AtomicBool; 6]> = OnceLock::new();
    ARMED.get_or_init(|| {
        let wanted = std::env::var(VARIABLE).unwrap_or_default();
        let names: Vec<&str> = wanted.split(',').map(str::trim).collect();
        SITES.map(|(name, _)| AtomicBool::new(names.contains(&name)))
    })
}

/// Panics the first time an armed site is passed.
pub fn trip(site: Site) {
    if armed()[site as usize].swap(false, Ordering::Relaxed) {
        panic!("test panic at the {} site (CODE_RUNTIME_NATIVE_TEST_PANIC)", SITES[site as usize].0);
    }
}
