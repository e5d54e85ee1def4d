//! The channel's reading half in a sandbox process. Whoever is waiting for the host reads it:
//! the serve loop between runs, the isolate thread itself while a run awaits a binding reply (no
//! thread hop between the reply's arrival and its settlement), and the doorbell thread when the
//! host rings (SIGTERM, forwarded by the namespace's init) because an abort must reach an isolate
//! that is computing and reading nothing. Reads happen under one lock, so any of them may read at
//! any time; each hands what it read to where it belongs: the serve loop's mailbox, or the runs
//! (`Routes`: `RUNS` here, a fake in the unit tests, `tests`).

#[cfg(test)]
mod tests;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::HEAP_MB;
use crate::channel::host_frames::{decode_host_frame, HostFrame, IsolateRunFrame};
use crate::isolate::first_terminal::{ChannelWait, RunClaim, Terminal};
use crate::isolate::run::RunConfig;
use crate::isolate::source::ProgramText;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// Frames from the host, as the serve loop gets them.
pub enum Inbound {
    Run(Box<(RunConfig, f64, bool)>),
    /// The run's isolate is gone and its `done` frame written.
    Done,
    Closed,
}

/// A frame the host wrote (trusted: the host is the one side that is not hostile).
enum Frame {
    Run(Box<(RunConfig, f64, bool)>),
    Reply { id: u64, ok: bool, json: String },
    Abort(String),
}

/// The runs that replies and aborts go to: the prepared one (published before `boot-ack`) and the
/// running one (from its `run` frame on).
pub static RUNS: Mutex<Runs> = Mutex::new(Runs { next: None, current: None });

pub struct Runs {
    pub next: Option<Arc<RunClaim>>,
    pub current: Option<Arc<RunClaim>>,
}

/// Where the frames for a run go.
pub trait Routes: Send + Sync + 'static {
    /// A `run` frame arrived: the prepared run is the running one from now on.
    fn begin(&self);
    /// A binding call's reply, for the running run (a late one, for none, is dropped).
    fn reply(&self, id: u64, ok: bool, json: String, in_wait: bool);
    /// The host aborted the running run.
    fn abort(&self, message: String);
}

/// The runs of this process, in `RUNS`.
pub struct ProcessRuns;

impl Routes for ProcessRuns {
    fn begin(&self) {
        let mut runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
        runs.current = runs.next.take();
    }

    fn reply(&self, id: u64, ok: bool, json: String, in_wait: bool) {
        let run = RUNS.lock().unwrap_or_else(|e| e.into_inner()).current.clone();
        // No run: a late reply belongs to none.
        if let Some(run) = run {
            run.reply(id, ok, json, in_wait);
        }
    }

    fn abort(&self, message: String) {
        let run = RUNS.lock().unwrap_or_else(|e| e.into_inner()).current.clone();
        if let Some(run) = run {
            run.claim(Terminal::Failed(FailureKind::Abort, Text::new(&message)));
        }
    }
}

/// Bytes of a frame still arriving, and how far they are known to hold no newline (a 64 MiB
/// reply arrives over many reads; each is scanned once).
#[derive(Default)]
struct Residue {
    bytes: Vec<u8>,
    scanned: usize,
    /// Where each read lands (allocated once: the spin reads the channel in a loop).
    chunk: Vec<u8>,
}

pub struct Inbox<R: Routes = ProcessRuns> {
    routes: R,
    fd: RawFd,
    /// Bytes read past the last complete frame.
    residue: Mutex<Residue>,
    /// The serve loop's mailbox.
    serve: Mutex<Sender<Inbound>>,
    /// Written to end an isolate thread's wait early (a claim, a reply another thread read).
    wake: OwnedFd,
    /// The doorbell's self-pipe: the SIGTERM handler writes it, the doorbell thread reads it.
    bell: (OwnedFd, OwnedFd),
}

static INBOX: OnceLock<Inbox> = OnceLock::new();

pub fn inbox() -> Option<&'static Inbox> {
    INBOX.get()
}

/// Sets the inbox up on `fd` (the connected channel) before any isolate thread exists.
pub fn install(fd: RawFd, serve: Sender<Inbound>) -> Option<&'static Inbox> {
    // SAFETY: eventfd and pipe2 return new descriptors we own, or -1.
    let wake = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if wake < 0 {
        return None;
    }
    // SAFETY: just created, owned from here on.
    let owned = |fd| unsafe { OwnedFd::from_raw_fd(fd) };
    let wake = owned(wake);
    let mut bell = [-1; 2];
    // SAFETY: pipe2 fills both descriptors or returns -1.
    if unsafe { libc::pipe2(bell.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    let inbox = Inbox {
        routes: ProcessRuns,
        fd,
        residue: Mutex::new(Residue::default()),
        serve: Mutex::new(serve),
        wake,
        bell: (owned(bell[0]), owned(bell[1])),
    };
    INBOX.set(inbox).ok()?;
    let inbox = INBOX.get()?;
    BELL_FD.store(inbox.bell.1.as_raw_fd(), std::sync::atomic::Ordering::Relaxed);
    // SAFETY: the handler only writes one byte to a pipe (async-signal-safe).
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = ring as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGTERM, &action, std::ptr::null_mut()) == 0
    };
    let doorbell = std::thread::Builder::new().name("code-runtime-doorbell".into()).spawn(|| answer_doorbell(inbox));
    (installed && doorbell.is_ok()).then_some(inbox)
}

static BELL_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn ring(_: libc::c_int) {
    let fd = BELL_FD.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: write is async-signal-safe (a full pipe has already rung); errno is the
    // interrupted code's and is given back to it.
    unsafe {
        let errno = *libc::__errno_location();
        libc::write(fd, [1u8].as_ptr().cast(), 1);
        *libc::__errno_location() = errno;
    }
}

/// The doorbell thread: reads the channel when the host rings, and notices the host hanging up
/// (POLLRDHUP only: arriving bytes do not wake it) even while the isolate computes, so this
/// process never outlives its host.
fn answer_doorbell(inbox: &'static Inbox) {
    loop {
        let mut fds = [
            libc::pollfd { fd: inbox.bell.0.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: inbox.fd, events: libc::POLLRDHUP, revents: 0 },
        ];
        if crate::os::poll::poll(&mut fds, None) <= 0 {
            continue;
        }
        if fds[1].revents != 0 {
            let _ = inbox.serve.lock().unwrap_or_else(|e| e.into_inner()).send(Inbound::Closed);
            return;
        }
        drain_fd(inbox.bell.0.as_raw_fd());
        inbox.read_now();
    }
}

fn drain_fd(fd: RawFd) {
    let mut sink = [0u8; 64];
    // SAFETY: reading our own non-blocking descriptor into a local buffer.
    while unsafe { libc::read(fd, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
}

impl<R: Routes> Inbox<R> {
    /// Blocks until the channel has bytes, then hands them on (the serve loop, between runs).
    pub fn read_blocking(&self) {
        crate::os::poll::wait_for(self.fd, libc::POLLIN, None);
        self.read_now();
    }

    /// Waits up to `timeout` for the channel to have bytes and hands them on; false when none
    /// came (the serve loop then does a slice of its waiting work).
    pub fn read_within(&self, timeout: std::time::Duration) -> bool {
        let ready = crate::os::poll::wait_for(self.fd, libc::POLLIN, Some(timeout));
        if ready {
            self.read_now();
        }
        ready
    }

    /// Reads what the channel holds now without blocking and hands each frame to its run or to
    /// the serve loop. End of file (the host is gone) tells the serve loop.
    pub fn read_now(&self) {
        let mut residue = self.residue.lock().unwrap_or_else(|e| e.into_inner());
        let Residue { bytes, scanned, chunk } = &mut *residue;
        if chunk.is_empty() {
            chunk.resize(64 * 1024, 0);
        }
        let mut closed = false;
        loop {
            // SAFETY: reading into our own buffer from the channel this process owns.
            let n = unsafe { libc::recv(self.fd, chunk.as_mut_ptr().cast(), chunk.len(), libc::MSG_DONTWAIT) };
            match n {
                0 => {
                    closed = true;
                    break;
                }
                n if n > 0 => {
                    bytes.extend_from_slice(&chunk[..n as usize]);
                    // A short read emptied the socket (a later frame wakes the poll again).
                    if (n as usize) < chunk.len() {
                        break;
                    }
                }
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                _ => break,
            }
        }
        let mut start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &bytes[(*scanned).max(start)..]) {
            let end = (*scanned).max(start) + offset;
            if let Some(frame) = parse_frame(&bytes[start..end]) {
                self.deliver(frame);
            }
            start = end + 1;
        }
        bytes.drain(..start);
        *scanned = bytes.len();
        if closed {
            // The host is gone: the serve loop ends this process.
            let _ = self.serve.lock().unwrap_or_else(|e| e.into_inner()).send(Inbound::Closed);
        }
    }

    fn deliver(&self, frame: Frame) {
        match frame {
            Frame::Reply { id, ok, json } => self.routes.reply(id, ok, json, IN_WAIT.get()),
            Frame::Abort(message) => self.routes.abort(message),
            Frame::Run(run) => {
                self.routes.begin();
                let _ = self.serve.lock().unwrap_or_else(|e| e.into_inner()).send(Inbound::Run(run));
            }
        }
    }

    /// Tells the serve loop its run is over.
    pub fn run_done(&self) {
        let _ = self.serve.lock().unwrap_or_else(|e| e.into_inner()).send(Inbound::Done);
    }
}

thread_local! {
    /// Set while the isolate thread reads its channel in its own wait: what it reads needs no
    /// wake-up (an eventfd write per reply, and a spurious return of the next poll).
    static IN_WAIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl<R: Routes> ChannelWait for Inbox<R> {
    fn poll_now(&self) {
        IN_WAIT.set(true);
        self.read_now();
        IN_WAIT.set(false);
    }

    fn wait(&self, timeout: Option<Duration>) {
        let mut fds = [
            libc::pollfd { fd: self.fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.wake.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        crate::os::poll::poll(&mut fds, timeout);
        if fds[1].revents != 0 {
            drain_fd(self.wake.as_raw_fd());
        }
        if fds[0].revents != 0 {
            self.poll_now();
        }
    }

    fn wake(&self) {
        // SAFETY: an eventfd write of a valid 8-byte counter increment.
        unsafe { libc::write(self.wake.as_raw_fd(), 1u64.to_ne_bytes().as_ptr().cast(), 8) };
    }
}

/// A host frame (src/channel/host_frames.rs) as the serve loop and the runs take it.
fn parse_frame(line: &[u8]) -> Option<Frame> {
    Some(match decode_host_frame(line)? {
        HostFrame::Run(run) => {
            let IsolateRunFrame {
                program,
                lone,
                namespaces,
                compute_ms,
                max_wall_ms,
                max_output_bytes,
                max_pending_calls,
                waited_ms,
                last,
                node_major,
                durable,
            } = *run;
            let config = RunConfig {
                program: ProgramText { text: program, lone },
                namespaces,
                compute_ms,
                max_wall_ms,
                max_output_bytes,
                max_pending_calls,
                heap_mb: *HEAP_MB.get()?,
                stream_logs: true,
                log_at_once: true,
                node_major,
                durable,
            };
            Frame::Run(Box::new((config, waited_ms, last)))
        }
        HostFrame::Reply { id, ok, json } => Frame::Reply { id, ok, json },
        HostFrame::Abort(message) => Frame::Abort(message),
    })
}
