//! The loop alone, over socket pairs and a clock the test moves: what a turn reports, when it
//! wakes, and that it stops exactly when the language's side says the run has ended.

use std::cell::Cell;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::*;

struct Frozen(Cell<Instant>);

impl Clock for Frozen {
    fn now(&self) -> Instant {
        self.0.get()
    }
}

/// A language's side that records each turn and ends after `turns` of them.
struct Script {
    channel: UnixStream,
    exit: UnixStream,
    read: bool,
    wake_at: Option<Instant>,
    turns: usize,
    seen: Vec<Found>,
    asked_at: Vec<Instant>,
}

impl Watch for Script {
    type Ended = usize;
    fn ended(&mut self, now: Instant) -> Option<usize> {
        self.asked_at.push(now);
        (self.seen.len() == self.turns).then_some(self.seen.len())
    }
    fn interests(&mut self) -> Interests {
        let events = if self.read { libc::POLLIN } else { 0 };
        Interests {
            channel: Some((self.channel.as_raw_fd(), events)),
            exit: Some(self.exit.as_raw_fd()),
            pipes: [None, None],
        }
    }
    fn wake_at(&self) -> Option<Instant> {
        self.wake_at
    }
    fn on_ready(&mut self, ready: Found) {
        self.seen.push(ready);
    }
}

fn pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    (a, b)
}

fn script(turns: usize, read: bool, wake_at: Option<Instant>) -> (Script, UnixStream, UnixStream) {
    let (channel, child) = pair();
    let (exit, exit_writer) = pair();
    let script = Script { channel, exit, read, wake_at, turns, seen: Vec::new(), asked_at: Vec::new() };
    (script, child, exit_writer)
}

#[test]
fn a_turn_reports_the_channel_the_exit_and_a_drained_wake() {
    let (mut s, mut child, mut exit) = script(1, true, None);
    let (wake, mut waker) = pair();
    child.write_all(b"frame\n").unwrap();
    exit.write_all(b"x").unwrap();
    waker.write_all(&[1; 300]).unwrap();
    let clock = Frozen(Cell::new(Instant::now()));
    assert_eq!(watch(&mut s, wake.as_raw_fd(), &clock), 1);
    assert_eq!(s.seen[0], Found { woken: true, readable: true, writable: false, exited: true, pipes: [false; 2] });
    // Every byte of the wake pipe went with the one turn that saw it.
    assert!(!crate::os::poll::wait_for(wake.as_raw_fd(), libc::POLLIN, Some(Duration::ZERO)));
}

#[test]
fn a_channel_not_asked_for_is_not_reported_and_a_past_deadline_does_not_wait() {
    let (mut s, mut child, _exit) = script(2, false, None);
    child.write_all(b"frame\n").unwrap();
    let t0 = Instant::now();
    // The deadline passed already on the test's clock: each turn comes back at once.
    s.wake_at = Some(t0 - Duration::from_secs(1));
    let (wake, _waker) = pair();
    let clock = Frozen(Cell::new(t0));
    let started = Instant::now();
    assert_eq!(watch(&mut s, wake.as_raw_fd(), &clock), 2);
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(s.seen, vec![Found::default(); 2]);
    assert_eq!(s.asked_at, vec![t0; 3]);
}

#[test]
fn a_turn_waits_until_the_deadline_on_the_given_clock() {
    let t0 = Instant::now();
    let (mut s, _child, _exit) = script(1, true, Some(t0 + Duration::from_millis(30)));
    let (wake, _waker) = pair();
    let started = Instant::now();
    assert_eq!(watch(&mut s, wake.as_raw_fd(), &Monotonic), 1);
    assert!(started.elapsed() >= Duration::from_millis(30));
    assert_eq!(s.seen, vec![Found::default()]);
}

#[test]
fn a_hang_up_is_reported_as_readable_even_when_only_writes_are_wanted() {
    let (mut s, child, _exit) = script(1, false, None);
    drop(child);
    let (wake, _waker) = pair();
    // Writes wanted: a hung-up channel is both (a read finds its end, a write its error).
    struct WantsWrites(Script);
    impl Watch for WantsWrites {
        type Ended = usize;
        fn ended(&mut self, now: Instant) -> Option<usize> {
            self.0.ended(now)
        }
        fn interests(&mut self) -> Interests {
            Interests { channel: Some((self.0.channel.as_raw_fd(), libc::POLLOUT)), ..Interests::default() }
        }
        fn wake_at(&self) -> Option<Instant> {
            None
        }
        fn on_ready(&mut self, ready: Found) {
            self.0.on_ready(ready)
        }
    }
    s.read = false;
    let mut w = WantsWrites(s);
    assert_eq!(watch(&mut w, wake.as_raw_fd(), &Monotonic), 1);
    let ready = w.0.seen[0];
    assert!(ready.readable && ready.writable && !ready.exited);
}
