//! `code-runtime-native-sandbox`: the small helper the addon starts a sandboxed child through.
//!
//! `exec [options] -- argv…` (see src/sandbox/plan.rs) starts one program behind the layers the
//! kernel allows without privileges, and reports on its status descriptor which ones hold:
//!
//! - with namespaces, three processes: this one (the *keeper*, in the host's PID namespace: the
//!   host's child, which waits and then exits exactly as the program did), the namespace's *init*
//!   (PID 1: private mounts, a fresh `/proc`, the scratch tmpfs; it forwards SIGTERM, reaps
//!   orphans, and when the program ends it exits, which kills everything left in the namespace),
//!   and the *program* (PID 2, its own session);
//! - without them (the kernel refused), the program replaces this process.
//!
//! Either way the program starts with its limits, no_new_privs, Landlock and the seccomp filter
//! already applied. `keeper …` and `init …` are those two roles taken over from a Python spare's
//! own keeper and init, which exec this helper's static build (`code-runtime-native-sandbox-roles`)
//! once they have forked (src/sandbox/harden/enter.rs); `joined-init …` and `joined-keeper …` are
//! the same roles when init is made without a copy of the interpreter (src/sandbox/harden/joined.rs).
//! This binary links no V8 and holds no program state; it is trusted code that the program cannot
//! reach (another PID namespace, outside its Landlock domain).

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

// The helper's layers; the addon compiles only the ones it applies itself (src/sandbox/mod.rs).
// A policy's paths opened with no link followed, shared with the addon's `resolve()` check.
#[cfg(target_os = "linux")]
#[allow(dead_code)]
#[path = "../../../src/sandbox/exact.rs"]
mod exact;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/idmap.rs"]
mod idmap;
// Shared with the addon, which decides the ids; the helper keeps its default as a fail-safe.
#[cfg(target_os = "linux")]
#[allow(dead_code)]
#[path = "../../../src/sandbox/identity.rs"]
mod identity;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/landlock.rs"]
mod landlock;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/namespaces.rs"]
mod namespaces;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/root.rs"]
mod root;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/seccomp.rs"]
mod seccomp;
// The layers around one program, shared with the Python template's children.
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/enter.rs"]
mod enter;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/joined.rs"]
mod joined;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/process.rs"]
mod process;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/program.rs"]
mod program;
#[cfg(target_os = "linux")]
#[path = "../../../src/sandbox/harden/roles.rs"]
mod roles;
// poll(2) over a slice, shared with the addon.
#[cfg(target_os = "linux")]
#[allow(dead_code)]
#[path = "../../../src/os/poll.rs"]
mod poll;
// Exit codes and the addon's entry points, shared with the addon.
#[allow(dead_code)]
#[path = "../../../src/sandbox/abi.rs"]
mod abi;
// Shared with the addon, which uses the writing half.
#[cfg(target_os = "linux")]
#[allow(dead_code)]
#[path = "../../../src/sandbox/plan.rs"]
mod plan;

#[cfg(target_os = "linux")]
fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "isolate" || a == "isolate-probe" || a == "isolate-forge") {
        linux::serve_isolate(&args[0], &args[1..]);
    }
    // The roles a forked interpreter's keeper and init hand over (src/sandbox/harden/enter.rs).
    if args.first().is_some_and(|a| ["keeper", "init", "joined-keeper", "joined-init"].iter().any(|r| a == r)) {
        enter::resume_role(&args);
        eprintln!(
            "code-runtime-native-sandbox: {}: arguments the addon would not have written",
            args[0].to_string_lossy()
        );
        std::process::exit(abi::EXIT_USAGE);
    }
    match plan::Plan::from_args(&args) {
        Some(plan) => {
            enter::start(plan, enter::Ending::Exec);
            // `Ending::Exec` never comes back.
            std::process::exit(abi::EXIT_USAGE);
        }
        None => {
            eprintln!(
                "code-runtime-native-sandbox: this helper is started by the code-runtime-native addon, not by hand"
            );
            std::process::exit(abi::EXIT_USAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("code-runtime-native-sandbox: sandboxed children need Linux");
    std::process::exit(abi::EXIT_USAGE);
}

#[cfg(target_os = "linux")]
mod linux {
    use crate::abi;
    #[cfg(not(target_feature = "crt-static"))]
    use std::ffi::CString;
    #[cfg(not(target_feature = "crt-static"))]
    use std::os::unix::ffi::OsStrExt;

    /// The statically linked build (`code-runtime-native-sandbox-roles`, which a Python spare's
    /// keeper and init exec) cannot load the addon: a static C library has no loader for it.
    #[cfg(target_feature = "crt-static")]
    pub fn serve_isolate(_mode: &std::ffi::OsStr, _args: &[std::ffi::OsString]) -> ! {
        eprintln!("code-runtime-native-sandbox: this static build cannot load the addon; a contained isolate starts through code-runtime-native-sandbox");
        std::process::exit(abi::EXIT_USAGE);
    }

    /// `isolate <addon> <heapMb>`: the program of a contained isolate's sandbox process (started
    /// through `exec`, so every layer already holds). Loads the addon, which links V8 and needs no
    /// Node to serve, and hands it the channel on fd 3.
    /// `isolate-probe <addon> <heapMb> <hostPid>`: the same process, making the calls an escaped
    /// program would (for the test suite; see `crn_isolate_probe`).
    /// `isolate-forge <addon> <heapMb> <scenario>`: the same process, sending a subverted
    /// process's frames once its run starts (for the test suite; see `crn_isolate_forge`).
    #[cfg(not(target_feature = "crt-static"))]
    pub fn serve_isolate(mode: &std::ffi::OsStr, args: &[std::ffi::OsString]) -> ! {
        let (Some(addon), Some(heap_mb)) = (args.first(), args.get(1).and_then(|h| h.to_str()?.parse::<f64>().ok()))
        else {
            eprintln!("code-runtime-native-sandbox: isolate <addon> <heapMb>");
            std::process::exit(abi::EXIT_USAGE);
        };
        let Ok(path) = CString::new(addon.as_bytes()) else { std::process::exit(abi::EXIT_USAGE) };
        // SAFETY: loading the addon this helper shipped with; its initialisers only register
        // napi items, which nothing calls without Node.
        let lib = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            std::process::exit(abi::EXIT_NO_ADDON);
        }
        let symbol = match mode.to_str() {
            Some("isolate-probe") => abi::PROBE_SYMBOL,
            Some("isolate-forge") => abi::FORGE_SYMBOL,
            _ => abi::SERVE_SYMBOL,
        };
        // SAFETY: the symbols of src/process_tier/child/, of the types in src/sandbox/abi.rs (which
        // the addon checks its definitions against).
        let entry = unsafe { libc::dlsym(lib, symbol.as_ptr()) };
        if entry.is_null() {
            std::process::exit(abi::EXIT_NO_ADDON);
        }
        // Only the channel stays open: stdio goes (nothing here prints; V8's fatal hooks use the
        // channel).
        for fd in 0..=2 {
            // SAFETY: closing this process's own standard descriptors.
            unsafe { libc::close(fd) };
        }
        // SAFETY: fd 3 is the channel the host placed for the program. `_exit`, not `exit`: the
        // isolate threads may still run, and V8's static destructors must not run under them.
        let code = unsafe {
            if mode == "isolate-probe" {
                let host_pid = args.get(2).and_then(|p| p.to_str()?.parse().ok()).unwrap_or(0);
                std::mem::transmute::<*mut libc::c_void, abi::ProbeEntry>(entry)(3, heap_mb, host_pid)
            } else if mode == "isolate-forge" {
                let scenario = args.get(2).and_then(|s| CString::new(s.as_bytes()).ok()).unwrap_or_default();
                std::mem::transmute::<*mut libc::c_void, abi::ForgeEntry>(entry)(3, heap_mb, scenario.as_ptr())
            } else {
                std::mem::transmute::<*mut libc::c_void, abi::ServeEntry>(entry)(3, heap_mb)
            }
        };
        // SAFETY: ends this process at once.
        unsafe { libc::_exit(code) }
    }
}
