//! The template: the sandbox process the host starts never runs a program. It hardens itself
//! (Landlock: no file access), warms swc, starts V8 without threads (its single-threaded
//! platform), builds the startup snapshot and prepares one isolate from it, which it never enters;
//! then it forks one fresh process per request of the host. Being single-threaded it may fork, and
//! each child starts with its own copy of that isolate, so a run pays neither for V8's start nor
//! for the snapshot's deserialization. Each child serves on a channel of its own, which the
//! template hands to the host with the child's pidfd; the template reaps its children and reports
//! how each ended. So every run can have a process that no earlier program ran in, at the cost of
//! a fork.
//!
//! The template's channel (fd 3; its frames are in src/channel/table): host → template
//! `{"type":"fork","id":I}` (with the child's cgroup `tasks` files as descriptors under cgroup v1,
//! which the child writes `0` to: src/process_tier/host/process.rs, `ForkCgroups`); template →
//! host `{"type":"template-ready"}` once, then per fork `{"type":"forked","id":I,"pid":N}` with
//! two descriptors (the child's channel, its pidfd) or
//! `{"type":"fork-failed","id":I,"errno":E}`, and `{"type":"exited","pid":N,"code":C,"signal":S}`
//! (each `null` when absent) once a child is reaped. No program runs here, but the host reads
//! this channel as it reads any sandbox process's: a template that breaks its rules is killed.
//! Children share the template's namespaces, Landlock domain and address layout; what keeps them
//! apart is docs/sandbox.md#host-safety.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Pristine;
use crate::channel::child_frames;
use crate::channel::host_frames::{decode_template_request, TemplateRequest};
use crate::os::fd_passing;
use crate::sandbox::abi;
use crate::sandbox::exit::try_reap;
use crate::sandbox::fds::pidfd_open;
use nix::sys::socket::MsgFlags;

/// Runs the template on `control` until the host closes it; `child` is what each forked process
/// runs (on its channel, fd 3, with its copy of the template's isolate) before it exits with the
/// code `child` returns.
/// `conduct` is how it answers a fork: `Honest`, or as the suite's subverted template
/// (`super::forge`).
pub fn run(control: RawFd, heap_mb: f64, conduct: impl Answer, child: impl Fn(RawFd, Option<Pristine>) -> i32) -> i32 {
    // SIGTERM reaches the template only through its init; the host rings children directly.
    // SAFETY: installing SIG_IGN is always sound.
    unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
    hold_standard_fds();
    main_stack_room();
    super::setup::harden();
    super::setup::warm_strip();
    // V8 without threads of its own (src/isolate/platform.rs), so this process stays
    // single-threaded and may fork: the snapshot is built here, and one isolate is prepared from
    // it that every child starts with.
    super::start_v8(heap_mb);
    if crate::isolate::startup::blob().is_none() {
        return abi::EXIT_NO_SNAPSHOT;
    }
    let mut pristine = Some(super::pristine(heap_mb));
    inherit_all_memory();
    // Single-threaded here: the allocator's one arena is the heap (a child's pretouch writes it).
    crate::os::c_heap::note_start();
    if !write_all(control, child_frames::TEMPLATE_READY.as_bytes()) {
        return 0;
    }
    let mut children: Vec<(i32, OwnedFd)> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut tasks: Vec<OwnedFd> = Vec::new();
    loop {
        let mut fds = vec![libc::pollfd { fd: control, events: libc::POLLIN, revents: 0 }];
        fds.extend(children.iter().map(|(_, pidfd)| libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }));
        if crate::os::poll::poll(&mut fds, None) < 0 {
            continue;
        }
        let exited: Vec<usize> = (1..fds.len()).filter(|&i| fds[i].revents != 0).collect();
        for i in exited.into_iter().rev() {
            let (pid, _) = &children[i - 1];
            if let Some(exit) = try_reap(*pid) {
                let line = child_frames::exited_frame(*pid, exit.code, exit.signal);
                children.remove(i - 1);
                if !write_all(control, line.as_bytes()) {
                    return 0;
                }
            }
        }
        if fds[0].revents == 0 {
            continue;
        }
        let mut buf = [0u8; 4096];
        let Ok((n, fds)) = fd_passing::receive(control, &mut buf, MsgFlags::empty()) else { return 0 };
        if n == 0 {
            // The host is gone: the template exits, and its init takes every child with it.
            return 0;
        }
        // A `fork` comes with its child's cgroup `tasks` files (cgroup v1), and the host asks
        // for the next fork only once this one is answered.
        tasks.extend(fds);
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Some(TemplateRequest::Fork { id }) = decode_template_request(&line) else { continue };
            let into = std::mem::take(&mut tasks);
            let into = if into.len() <= 2 && conduct.moves_children() { into } else { Vec::new() };
            if !fork_child(control, id, conduct, &mut children, &child, &mut pristine, &into) {
                return 0;
            }
        }
    }
}

/// How a template answers a fork it made.
pub trait Answer: Copy {
    /// Answers fork `id` with child `pid` and its channel and pidfd (`fds`); false when the host
    /// is gone.
    fn answer(self, control: RawFd, id: u64, pid: i32, fds: &[RawFd]) -> bool;

    /// Whether its children move themselves into the cgroups the host sent (the host checks).
    fn moves_children(self) -> bool {
        true
    }
}

/// The template's answer: `forked` with the child's channel and pidfd.
#[derive(Clone, Copy)]
pub struct Honest;

impl Answer for Honest {
    fn answer(self, control: RawFd, id: u64, pid: i32, fds: &[RawFd]) -> bool {
        send_with_fds(control, child_frames::forked_frame(id, pid).as_bytes(), fds)
    }
}

/// Forks one child and hands the host its channel and pidfd; false when the host is gone.
fn fork_child(
    control: RawFd,
    id: u64,
    conduct: impl Answer,
    children: &mut Vec<(i32, OwnedFd)>,
    child: &impl Fn(RawFd, Option<Pristine>) -> i32,
    pristine: &mut Option<Pristine>,
    into: &[OwnedFd],
) -> bool {
    let (host_end, child_end) = match UnixStream::pair() {
        Ok(pair) => pair,
        Err(e) => return report_failure(control, id, e.raw_os_error().unwrap_or(libc::EIO)),
    };
    // SAFETY: this process is single-threaded (V8 runs here without threads), so the child may
    // run any code.
    match unsafe { libc::fork() } {
        0 => {
            // The child: its own channel becomes fd 3 (replacing the template's), nothing else
            // of the template stays open (the standard descriptors were closed in the template,
            // so its sockets and pidfds may sit at 0–2: V8's fatal messages must not reach
            // them), and SIGTERM is the doorbell it installs itself.
            // SAFETY: descriptor calls on this process's own table; `_exit` ends the child.
            unsafe {
                // Its one thread moves itself into its cgroups (each `tasks` the host sent)
                // before it makes another: every later thread is born there.
                for tasks in into {
                    libc::write(tasks.as_raw_fd(), b"0".as_ptr().cast(), 1);
                }
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                if libc::dup2(child_end.as_raw_fd(), 3) != 3 {
                    libc::_exit(abi::EXIT_NO_INBOX);
                }
                for fd in 0..3 {
                    libc::close(fd);
                }
                crate::sandbox::fds::close_from(4, false);
                std::mem::forget((host_end, child_end));
                // The child's copy of the isolate is its own; the template keeps its copy.
                // A panic ends the child here, never in the template's code it was forked from.
                let code = crate::panic::guard(|| child(3, pristine.take()), |_| abi::EXIT_PANICKED);
                libc::_exit(code)
            }
        }
        pid if pid > 0 => {
            drop(child_end);
            let Some(pidfd) = pidfd_open(pid) else {
                // SAFETY: killing our own child, not yet reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                crate::sandbox::exit::reap(pid);
                return report_failure(control, id, libc::ESRCH);
            };
            let sent = conduct.answer(control, id, pid, &[host_end.as_raw_fd(), pidfd.as_raw_fd()]);
            children.push((pid, pidfd));
            sent
        }
        _ => report_failure(control, id, std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EAGAIN)),
    }
}

fn report_failure(control: RawFd, id: u64, errno: i32) -> bool {
    write_all(control, child_frames::fork_failed_frame(id, errno).as_bytes())
}

/// V8 marks the memory it maps MADV_DONTFORK (so that forking a browser does not copy its heaps),
/// but here every child needs the template's isolate: each mapping is made inheritable again.
/// The kernel refuses the advice for I/O mappings (the vDSO's data pages, which every process gets
/// anyway) and stops there, so a refused range is split around them.
fn inherit_all_memory() {
    fn advise(start: usize, len: usize) {
        // SAFETY: MADV_DOFORK changes only whether fork copies a mapping; holes are skipped.
        if unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DOFORK) } == 0 {
            return;
        }
        // ENOMEM: the range had holes (every mapping in it was advised); EINVAL: an I/O mapping.
        let page = 4096;
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) && len > page {
            let half = (len / 2).next_multiple_of(page);
            advise(start, half);
            advise(start + half, len - half);
        }
    }
    // The user half of x86-64's address space (47 bits) above the first page.
    advise(4096, (1usize << 47) - 4096);
}

/// How far the main thread's stack may grow: a child runs its first program on this thread and
/// strips it here first (the nesting a program of a few thousand tokens may have; a thread
/// made for a larger one costs a run ~0.3 ms, `strip_program` in src/process_tier/child/mod.rs).
/// The room is reserved, not committed: only the depth a strip really nests is ever touched.
const MAIN_STACK: usize = 64 << 20;

/// The main thread's stack limit as set: at most `MAIN_STACK`, less when the hard limit is lower.
static MAIN_STACK_ROOM: AtomicUsize = AtomicUsize::new(0);

/// How far the main thread's stack may grow (0 when its limit could not be read).
pub(super) fn main_stack() -> usize {
    MAIN_STACK_ROOM.load(Ordering::Relaxed)
}

/// The main thread's stack may grow to `MAIN_STACK`, within the hard limit. The kernel placed
/// every mapping at least 128 MiB below the stack when the helper started, so the room is there.
fn main_stack_room() {
    // SAFETY: getrlimit/setrlimit on this process's own limit, with a local struct.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_STACK, &mut limit) != 0 {
            return;
        }
        if limit.rlim_cur < MAIN_STACK as libc::rlim_t {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max.min(MAIN_STACK as libc::rlim_t), ..limit };
            if libc::setrlimit(libc::RLIMIT_STACK, &raised) == 0 {
                limit = raised;
            }
        }
        MAIN_STACK_ROOM.store(limit.rlim_cur.min(MAIN_STACK as libc::rlim_t) as usize, Ordering::Relaxed);
    }
}

/// Fills descriptors 0–2 (the helper closed them) with an unused pipe, so the sockets, pidfds
/// and pipes the template opens never take those numbers, where V8's fatal messages would go.
fn hold_standard_fds() {
    let mut ends = [-1; 2];
    // SAFETY: pipe2 fills both descriptors or returns -1; the rest are descriptor calls on this
    // process's own table.
    unsafe {
        if libc::pipe2(ends.as_mut_ptr(), 0) != 0 {
            return;
        }
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) < 0 {
                libc::dup2(ends[0], fd);
            }
        }
        for end in ends {
            if end > 2 {
                libc::close(end);
            }
        }
    }
}

pub(super) fn write_all(fd: RawFd, bytes: &[u8]) -> bool {
    // SAFETY: `fd` stays open for the call; ManuallyDrop keeps the borrowed File from closing it.
    let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    (&*file).write_all(bytes).is_ok()
}

/// One message with descriptors attached (SCM_RIGHTS); the host receives them with its first byte.
fn send_with_fds(fd: RawFd, bytes: &[u8], fds: &[RawFd]) -> bool {
    match crate::os::fd_passing::send(fd, bytes, fds) {
        Ok(n) if n == bytes.len() => true,
        // The descriptors went with the first bytes; the rest goes as plain data.
        Ok(n) if n > 0 => write_all(fd, &bytes[n..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_stack_room_is_the_raised_limit_within_the_hard_one() {
        main_stack_room();
        // SAFETY: getrlimit into a local struct.
        let limit = unsafe {
            let mut limit: libc::rlimit = std::mem::zeroed();
            assert_eq!(libc::getrlimit(libc::RLIMIT_STACK, &mut limit), 0);
            limit
        };
        let want = limit.rlim_max.min(MAIN_STACK as libc::rlim_t);
        assert!(limit.rlim_cur >= want, "soft limit {} not raised to {want}", limit.rlim_cur);
        assert_eq!(main_stack() as libc::rlim_t, want);
    }
}
