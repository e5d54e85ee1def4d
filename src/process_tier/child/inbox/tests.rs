//! The inbox over a socket pair (the test is the host), with fake runs that record what reached
//! them.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver};

use super::*;
use crate::channel::host_frames::{abort_frame, isolate_run_frame, reply_frame};

#[derive(Debug, PartialEq)]
enum Event {
    Begin,
    Reply { id: u64, ok: bool, json: String, in_wait: bool },
    Abort(String),
}

#[derive(Default)]
struct FakeRuns(Mutex<Vec<Event>>);

impl Routes for FakeRuns {
    fn begin(&self) {
        self.0.lock().unwrap().push(Event::Begin);
    }

    fn reply(&self, id: u64, ok: bool, json: String, in_wait: bool) {
        self.0.lock().unwrap().push(Event::Reply { id, ok, json, in_wait });
    }

    fn abort(&self, message: String) {
        self.0.lock().unwrap().push(Event::Abort(message));
    }
}

struct Harness {
    inbox: Inbox<FakeRuns>,
    /// The host's end of the channel.
    host: Option<UnixStream>,
    /// The serve loop's end of its mailbox (locked: a harness is shared with reader threads).
    serve: Mutex<Receiver<Inbound>>,
    /// The sandbox's end, which the inbox reads (closed after it).
    _channel: OwnedFd,
}

impl Harness {
    fn new() -> Harness {
        let (host, channel) = UnixStream::pair().unwrap();
        let channel = OwnedFd::from(channel);
        let (serve, rx) = mpsc::channel();
        // SAFETY: eventfd returns a new descriptor we own, or -1 (checked below).
        let wake = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        let mut bell = [-1; 2];
        // SAFETY: pipe2 fills both descriptors or returns -1 (checked below).
        let piped = unsafe { libc::pipe2(bell.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
        assert!(wake >= 0 && piped == 0);
        // SAFETY: just created, owned from here on.
        let owned = |fd| unsafe { OwnedFd::from_raw_fd(fd) };
        let inbox = Inbox {
            routes: FakeRuns::default(),
            fd: channel.as_raw_fd(),
            residue: Mutex::new(Residue::default()),
            serve: Mutex::new(serve),
            wake: owned(wake),
            bell: (owned(bell[0]), owned(bell[1])),
        };
        Harness { inbox, host: Some(host), serve: Mutex::new(rx), _channel: channel }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.host.as_mut().unwrap().write_all(bytes).unwrap();
    }

    fn events(&self) -> Vec<Event> {
        std::mem::take(&mut *self.inbox.routes.0.lock().unwrap())
    }
}

fn reply(id: u64, json: &str) -> Event {
    Event::Reply { id, ok: true, json: json.into(), in_wait: false }
}

fn run_frame(program: &str) -> Vec<u8> {
    isolate_run_frame(&IsolateRunFrame {
        program: program.into(),
        lone: Vec::new(),
        namespaces: Vec::new(),
        compute_ms: 1000.0,
        max_wall_ms: 2000.0,
        max_output_bytes: 1 << 20,
        max_pending_calls: 8,
        waited_ms: 3.0,
        last: true,
        node_major: None,
        durable: None,
    })
}

#[test]
fn a_frame_split_across_reads_is_delivered_once_whole() {
    let mut h = Harness::new();
    let frame = reply_frame(7.0, true, "{\"a\":[1,2]}");
    let (head, tail) = frame.split_at(frame.len() / 2);
    h.send(head);
    h.inbox.read_now();
    assert_eq!(h.events(), vec![]);
    h.send(tail);
    h.inbox.read_now();
    assert_eq!(h.events(), vec![reply(7, "{\"a\":[1,2]}")]);
}

#[test]
fn frames_read_together_are_delivered_in_order() {
    let mut h = Harness::new();
    let mut bytes = reply_frame(1.0, true, "1");
    bytes.extend(reply_frame(2.0, false, "\"no\""));
    bytes.extend(abort_frame("stop"));
    bytes.extend(reply_frame(3.0, true, "3"));
    h.send(&bytes);
    h.inbox.read_now();
    let refused = Event::Reply { id: 2, ok: false, json: "\"no\"".into(), in_wait: false };
    assert_eq!(h.events(), vec![reply(1, "1"), refused, Event::Abort("stop".into()), reply(3, "3")]);
}

#[test]
fn a_frame_larger_than_one_read_is_assembled() {
    let mut h = Harness::new();
    // Several times the inbox's 64 KiB read, written by another thread (the socket holds less).
    let value = format!("\"{}\"", "x".repeat(300 * 1024));
    let frame = reply_frame(9.0, true, &value);
    let mut host = h.host.take().unwrap();
    let writer = std::thread::spawn(move || {
        host.write_all(&frame).unwrap();
        host
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut events = Vec::new();
    while events.is_empty() {
        assert!(std::time::Instant::now() < deadline, "never delivered");
        crate::os::poll::wait_for(h.inbox.fd, libc::POLLIN, Some(Duration::from_millis(50)));
        h.inbox.read_now();
        events = h.events();
    }
    assert_eq!(events, vec![reply(9, &value)]);
    assert!(h.inbox.residue.lock().unwrap().bytes.is_empty());
    h.host = Some(writer.join().unwrap());
}

#[test]
fn a_broken_line_is_skipped_and_the_next_frame_delivered() {
    let mut h = Harness::new();
    let mut bytes = b"{\"type\":\"reply\",\"id\":\n not json\n{\"type\":\"nonsense\"}\n".to_vec();
    bytes.extend(reply_frame(4.0, true, "null"));
    h.send(&bytes);
    h.inbox.read_now();
    assert_eq!(h.events(), vec![reply(4, "null")]);
}

#[test]
fn a_run_frame_begins_the_run_and_reaches_the_serve_loop() {
    // A sandbox process sets its heap size before it serves (`setup`).
    let _ = HEAP_MB.set(64.0);
    let mut h = Harness::new();
    let mut bytes = run_frame("return 1");
    bytes.extend(reply_frame(1.0, true, "true"));
    h.send(&bytes);
    h.inbox.read_now();
    // The run is the running one before its first reply is routed.
    assert_eq!(h.events(), vec![Event::Begin, reply(1, "true")]);
    let received = h.serve.lock().unwrap().try_recv();
    match received {
        Ok(Inbound::Run(run)) => {
            let (config, waited_ms, last) = *run;
            assert_eq!((config.program.text.as_str(), config.heap_mb, waited_ms, last), ("return 1", 64.0, 3.0, true));
        }
        _ => panic!("the serve loop got no run"),
    }
}

#[test]
fn the_host_hanging_up_tells_the_serve_loop_after_what_it_wrote() {
    let mut h = Harness::new();
    h.send(&abort_frame("bye"));
    drop(h.host.take());
    h.inbox.read_now();
    assert_eq!(h.events(), vec![Event::Abort("bye".into())]);
    // A short read ends one reading; the end of file is the next one's (the poll wakes again).
    assert!(h.serve.lock().unwrap().try_recv().is_err());
    h.inbox.read_now();
    assert!(matches!(h.serve.lock().unwrap().try_recv(), Ok(Inbound::Closed)));
}

#[test]
fn read_blocking_waits_for_the_host() {
    let h = Arc::new(Harness::new());
    let reader = {
        let h = h.clone();
        std::thread::spawn(move || h.inbox.read_blocking())
    };
    std::thread::sleep(Duration::from_millis(20));
    assert!(!reader.is_finished(), "nothing to read yet");
    h.host.as_ref().unwrap().write_all(&reply_frame(5.0, true, "5")).unwrap();
    reader.join().unwrap();
    assert_eq!(h.events(), vec![reply(5, "5")]);
}

#[test]
fn an_isolate_waiting_for_its_channel_reads_the_reply_itself_or_is_woken() {
    let h = Arc::new(Harness::new());
    // Read in the isolate's own wait: no wake-up is needed for what it reads.
    h.host.as_ref().unwrap().write_all(&reply_frame(6.0, true, "6")).unwrap();
    h.inbox.wait(Some(Duration::from_secs(5)));
    assert_eq!(h.events(), vec![Event::Reply { id: 6, ok: true, json: "6".into(), in_wait: true }]);
    // Woken from another thread (a claim, a reply another thread read).
    let waiter = {
        let h = h.clone();
        std::thread::spawn(move || h.inbox.wait(None))
    };
    std::thread::sleep(Duration::from_millis(20));
    assert!(!waiter.is_finished());
    h.inbox.wake();
    waiter.join().unwrap();
    assert_eq!(h.events(), vec![]);
}

#[test]
fn run_done_tells_the_serve_loop() {
    let h = Harness::new();
    h.inbox.run_done();
    assert!(matches!(h.serve.lock().unwrap().try_recv(), Ok(Inbound::Done)));
}
