//! A run's frames as read so far and the verdicts on them: every frame re-checked by
//! `crate::channel` and re-metered by the host's own ledger, under one lock whichever thread reads.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::ContainedConfig;
use crate::channel::codec::{decode_js_frame, ChildFrame, DoneStats};
use crate::channel::lines::LineSplitter;
use crate::isolate::host::{HostEvent, Sink};
use crate::ledger::logbook::LogBook;
use crate::ledger::output::{Admission, LedgerResult, OutputLedger};
use crate::ledger::text::Text;
use crate::outcome::{FailureKind, RunEnd, StoppedAt};

/// Bytes one read of a run's channel takes at most (see `Reader::read_into`).
const READ_SLICE: usize = 256 * 1024;

/// The first verdict claimed for this run, by the host or reported by the process.
pub(super) struct Claim {
    pub(super) kind: FailureKind,
    pub(super) message: Text,
    /// When it was claimed (the process is killed a grace later if it has not stopped).
    pub(super) at: Instant,
    /// The process reported it (its compute budget, its program's exit), rather than the host.
    pub(super) reported: bool,
}

/// The run's frames as read so far, and the verdicts on them: shared by the supervisor thread
/// and Node's main thread, whichever reads the channel.
pub(super) struct Reader {
    pub(super) config: Arc<ContainedConfig>,
    /// Where calls and logs go; dropped when the run is over (its threadsafe function keeps
    /// Node's loop alive, and the main thread's handle may outlive the run until its next event).
    pub(super) host: Option<Sink>,
    pub(super) ledger: OutputLedger,
    pub(super) claim: Option<Claim>,
    pub(super) stats: DoneStats,
    /// Where the program was stopped, as its `done` said.
    pub(super) stopped_at: Option<StoppedAt>,
    /// The next isolate's `boot-ack` arrived in the same read as `done`.
    pub(super) next_ready: bool,
    pub(super) channel: Option<UnixStream>,
    /// The process's splitter, lent for the run.
    pub(super) splitter: LineSplitter,
    /// How the run ended, once a read decided it (for the supervisor to take).
    pub(super) ended: Option<Ended>,
    /// The channel reached its end.
    pub(super) eof: bool,
    /// The supervisor has taken the run's end: nobody reads for this run any more.
    pub(super) finished: bool,
    /// Where each read lands (allocated once per run).
    pub(super) buf: Vec<u8>,
    /// The process sent at least one frame of this run.
    pub(super) heard: bool,
    /// Events decoded by the last read, for the reading thread to deliver once it has let go
    /// of the lock (the main thread calls JavaScript with them).
    pub(super) outbox: Vec<HostEvent>,
    /// Decided with the run's first claim or its end; the readers deliver no call after it.
    pub(super) end: RunEnd,
    /// Calls sent and not yet answered (the reply's sender counts them down).
    pub(super) pending_calls: Arc<AtomicUsize>,
}

pub(super) enum Ended {
    /// The process sent `done`: the result, and whether the process may serve again.
    Done(LedgerResult, bool),
    /// The process is gone or must go.
    Killed(LedgerResult),
    /// The process was killed from outside before it sent anything of this run: the run has
    /// had no effect (no binding called, no log) and may run once more on another process.
    Vanished(LedgerResult),
    /// A healthy `done` whose report Node's main thread delivered as it read it
    /// (`SharedReader::done_here`): the supervisor only hands the process back.
    Delivered,
}

impl Reader {
    pub(super) fn new(
        config: Arc<ContainedConfig>,
        host: Sink,
        channel: UnixStream,
        splitter: LineSplitter,
        (end, pending_calls): (RunEnd, Arc<AtomicUsize>),
    ) -> Reader {
        Reader {
            ledger: OutputLedger::new(config.run.max_output_bytes),
            config,
            host: Some(host),
            claim: None,
            stats: DoneStats::default(),
            stopped_at: None,
            next_ready: false,
            channel: Some(channel),
            splitter,
            ended: None,
            eof: false,
            finished: false,
            buf: Vec::new(),
            heard: false,
            outbox: Vec::new(),
            end,
            pending_calls,
        }
    }

    /// Reads what the channel holds now; false once the run's end is decided (or the channel's
    /// end reached), after which nothing more is read for this run.
    pub(super) fn read_available(&mut self) -> bool {
        if self.ended.is_some() || self.eof || self.finished {
            return false;
        }
        if self.buf.is_empty() {
            self.buf.resize(64 * 1024, 0);
        }
        let mut buf = std::mem::take(&mut self.buf);
        let open = self.read_into(&mut buf);
        self.buf = buf;
        open
    }

    pub(super) fn read_into(&mut self, buf: &mut [u8]) -> bool {
        // One call reads this much at most: the rest waits for the next (the readers' polls are
        // level-triggered), so a process that floods the channel never holds Node's loop long.
        let mut left = READ_SLICE;
        loop {
            let Some(mut channel) = self.channel.as_ref() else { return false };
            match channel.read(buf) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    if let Some(ended) = self.frames(&buf[..n]) {
                        self.end.decide();
                        self.ended = Some(ended);
                        return false;
                    }
                    // A short read emptied the socket: what comes next wakes the reader again
                    // (both readers' polls are level-triggered), without a read that fails here.
                    left = left.saturating_sub(n);
                    if n < buf.len() || left == 0 {
                        return true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    pub(super) fn ledger_failure(&mut self, kind: FailureKind, message: Text) -> LedgerResult {
        let ledger = std::mem::replace(&mut self.ledger, OutputLedger::new(0));
        if kind == FailureKind::OutputLimit {
            return ledger.limit_result();
        }
        ledger.finish_failure(kind, message)
    }

    /// Claims the run's end (the first claim wins) and arms the kill.
    pub(super) fn claim(&mut self, kind: FailureKind, message: Text) {
        self.claim_by(kind, message, false);
    }

    /// `claim`, saying whether the process reported it.
    fn claim_by(&mut self, kind: FailureKind, message: Text, reported: bool) {
        self.end.decide();
        if self.claim.is_none() {
            self.claim = Some(Claim { kind, message, at: Instant::now(), reported });
        }
    }

    pub(super) fn claimed_result(&mut self) -> LedgerResult {
        let claim = self.claim.take().expect("a claim precedes every kill");
        self.ledger_failure(claim.kind, claim.message)
    }

    pub(super) fn frames(&mut self, chunk: &[u8]) -> Option<Ended> {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        if self.splitter.push(chunk, |line| lines.push(line.to_vec())).is_err() {
            return Some(self.malformed("a frame exceeded its size cap"));
        }
        let mut streamed = LogBook::default();
        let mut ended = None;
        self.heard |= !lines.is_empty();
        let mut lines = lines.into_iter();
        while let Some(line) = lines.next() {
            let budget = self.ledger.remaining();
            crate::process_tier::host::trace!(
                "frame {} {:?}",
                line.len(),
                String::from_utf8_lossy(&line[..line.len().min(220)])
            );
            let Some(frame) = decode_js_frame(&line, budget) else {
                ended = Some(self.malformed("a frame did not parse"));
                break;
            };
            match frame {
                // Once the run's end is claimed, what the process still sends of the program (a
                // subverted one, or an isolate V8 has not stopped yet) is not acted on: no log
                // is recorded, no binding called (docs/budgets-and-ledger.md#nothing-passes-the-end).
                ChildFrame::Log { .. } | ChildFrame::Call { .. } if self.end.is_decided() => {}
                ChildFrame::Log { text, .. } => {
                    let text = units_text(text);
                    match self.ledger.push(&text) {
                        Admission::Whole if self.config.run.stream_logs => streamed.push(&text),
                        Admission::Overflow { prefix_units } if prefix_units > 0 && self.config.run.stream_logs => {
                            streamed.push(&text.slice(prefix_units))
                        }
                        _ => {}
                    }
                }
                ChildFrame::Call { id, global, name, args } => {
                    let Some((ns, index)) = self.binding(&global, &name) else {
                        ended = Some(self.malformed("a call named no declared binding"));
                        break;
                    };
                    let arg_json = String::from_utf8_lossy(&line[args.0..args.1]).into_owned();
                    if arg_json.len() > self.config.run.max_output_bytes {
                        ended = Some(self.malformed("a call's arguments exceeded the byte cap"));
                        break;
                    }
                    // An honest process ends its run itself before it sends one call more than
                    // the host holds (src/channel/backlog.rs).
                    let max = self.config.run.max_pending_calls;
                    if self.pending_calls.fetch_add(1, Ordering::AcqRel) >= max {
                        ended = Some(self.malformed(&format!("it sent more than {max} calls pending at once")));
                        break;
                    }
                    self.flush(&mut streamed);
                    if self.host.is_some() {
                        self.outbox.push(HostEvent::Call { id: id as u64, ns, name: index, arg_json });
                    }
                }
                ChildFrame::Stop { kind, message, stats } => {
                    // What the run used by the claim: its result if the process is killed.
                    self.stats = DoneStats {
                        cpu_ms: stats.cpu_ms.or(self.stats.cpu_ms),
                        wall_ms: None,
                        heap_used_bytes: stats.heap_used_bytes.or(self.stats.heap_used_bytes),
                        heap_peak_bytes: stats.heap_peak_bytes.or(self.stats.heap_peak_bytes),
                    };
                    self.claim_by(kind, units_text(message), true)
                }
                ChildFrame::Done { value, error, stats, stopped_at } => {
                    self.flush(&mut streamed);
                    self.stats = stats;
                    self.stopped_at = stopped_at;
                    let healthy = self.claim.is_none();
                    let result = match (error, value) {
                        // The process ends an abort the host sent it as `abort`; the host's
                        // claim says which kind that abort is (the JavaScript layer may end a
                        // run it broke as `worker-exit`).
                        (Some((FailureKind::Abort, _)), _) if self.claim.is_some() => self.claimed_result(),
                        (Some((kind, message)), _) => self.ledger_failure(kind, units_text(message)),
                        (None, Some(v)) if v.metered.lossy => {
                            ended = Some(self.malformed("its completion was not lossless JSON"));
                            break;
                        }
                        (None, Some(v)) => {
                            let json = String::from_utf8_lossy(&line[v.range.0..v.range.1]).into_owned();
                            let ledger = std::mem::replace(&mut self.ledger, OutputLedger::new(0));
                            if v.metered.over {
                                ledger.limit_result()
                            } else {
                                ledger.finish_value(Some((json, v.metered.size)))
                            }
                        }
                        (None, None) => std::mem::replace(&mut self.ledger, OutputLedger::new(0)).finish_value(None),
                    };
                    // Only the next isolate's readiness may follow `done`.
                    let rest: Vec<Vec<u8>> = lines.collect();
                    self.next_ready = match rest.as_slice() {
                        [] => false,
                        [ack] if matches!(decode_js_frame(ack, 0), Some(ChildFrame::BootAck)) => true,
                        _ => return Some(Ended::Done(result, false)),
                    };
                    return Some(Ended::Done(result, healthy));
                }
                ChildFrame::BootAck => {
                    ended = Some(self.malformed("it announced a new isolate during a run"));
                    break;
                }
                // A Python child's frame: `decode_js_frame` never yields it.
                ChildFrame::Stopped(_) => {
                    ended = Some(self.malformed("a frame did not parse"));
                    break;
                }
            }
        }
        self.flush(&mut streamed);
        ended
    }

    pub(super) fn flush(&mut self, streamed: &mut LogBook) {
        if self.config.run.stream_logs && !streamed.is_empty() && self.host.is_some() {
            self.outbox.push(HostEvent::Logs(std::mem::take(streamed)));
        }
        *streamed = LogBook::default();
    }

    pub(super) fn binding(&self, global: &[u16], name: &[u16]) -> Option<(u32, u32)> {
        let global = String::from_utf16(global).ok()?;
        let name = String::from_utf16(name).ok()?;
        let ns = self.config.run.namespaces.iter().position(|n| n.global == global)?;
        let index = self.config.run.namespaces[ns].names.iter().position(|n| *n == name)?;
        Some((ns as u32, index as u32))
    }

    /// A frame no honest sandbox process sends: the process is killed and the run ends.
    pub(super) fn malformed(&mut self, what: &str) -> Ended {
        self.end.decide();
        let message = format!("isolate process broke the channel protocol ({what}); it was killed");
        self.claim = None;
        Ended::Killed(self.ledger_failure(FailureKind::Protocol, Text::new(&message)))
    }
}

pub(super) fn units_text(units: Vec<u16>) -> Text {
    Text::Utf16(units)
}

#[cfg(test)]
mod tests {
    //! The reader alone, without V8 or a sandbox process: frames as a subverted process could
    //! write them, each kind valid, truncated, oversized and out of order.
    use std::io::Write;

    use super::*;
    use crate::isolate::globals::NamespaceSpec;
    use crate::isolate::host::EventSink;
    use crate::isolate::run::RunConfig;
    use crate::isolate::source::ProgramText;

    struct Nobody;
    impl EventSink for Nobody {
        fn send(&self, _: HostEvent) {}
    }

    const CAP: usize = 4096;
    const FRAME_CAP: usize = 1024;

    /// A reader for a run that declared `tools.echo`, and the process's end of its channel.
    fn reader() -> (Reader, UnixStream) {
        let run = RunConfig {
            program: ProgramText::plain("return 1"),
            namespaces: vec![NamespaceSpec { global: "tools".into(), names: vec!["echo".into()], error_class: None }],
            compute_ms: 1000.0,
            max_wall_ms: 1000.0,
            max_output_bytes: CAP,
            max_pending_calls: 4,
            heap_mb: 64.0,
            stream_logs: true,
            log_at_once: false,
            node_major: None,
            durable: None,
        };
        let config = Arc::new(ContainedConfig { run, memory_cap: 1 << 30 });
        let (host_end, process_end) = UnixStream::pair().unwrap();
        host_end.set_nonblocking(true).unwrap();
        (Reader::new(config, Arc::new(Nobody), host_end, LineSplitter::new(FRAME_CAP), Default::default()), process_end)
    }

    fn broke(ended: Option<Ended>) -> String {
        match ended {
            Some(Ended::Killed(result)) => {
                let (kind, message) = result.error.expect("a protocol failure");
                assert_eq!(kind, FailureKind::Protocol);
                message.to_string_lossy()
            }
            _ => panic!("the run was not ended as broken"),
        }
    }

    fn protocol(what: &str) -> String {
        format!("isolate process broke the channel protocol ({what}); it was killed")
    }

    #[test]
    fn a_log_a_call_and_done_are_delivered_in_order() {
        let (mut reader, _process) = reader();
        let frames = b"{\"type\":\"log\",\"text\":\"hi\"}\n{\"type\":\"call\",\"id\":7,\"global\":\"tools\",\"name\":\"echo\",\"args\":[1]}\n";
        assert!(reader.frames(frames).is_none());
        let delivered: Vec<_> = std::mem::take(&mut reader.outbox);
        assert!(matches!(&delivered[0], HostEvent::Logs(logs) if logs.len() == 1));
        assert!(matches!(&delivered[1], HostEvent::Call { id: 7, ns: 0, name: 0, arg_json } if arg_json == "[1]"));
        match reader.frames(b"{\"type\":\"done\",\"value\":{\"a\":1}}\n{\"type\":\"boot-ack\"}\n") {
            Some(Ended::Done(result, healthy)) => {
                assert_eq!(result.value_json.as_deref(), Some("{\"a\":1}"));
                assert_eq!(result.logs.len(), 1);
                assert!(healthy);
                assert!(reader.next_ready);
            }
            _ => panic!("done did not end the run"),
        }
    }

    #[test]
    fn a_frame_split_across_reads_is_one_frame() {
        let (mut reader, _process) = reader();
        assert!(reader.frames(b"{\"type\":\"done\",\"val").is_none());
        assert!(
            matches!(reader.frames(b"ue\":2}\n"), Some(Ended::Done(r, true)) if r.value_json.as_deref() == Some("2"))
        );
    }

    #[test]
    fn each_broken_frame_ends_the_run_as_protocol() {
        let cases: [(&[u8], &str); 6] = [
            (b"not a frame\n", "a frame did not parse"),
            (b"{\"type\":\"log\"}\n", "a frame did not parse"),
            (
                b"{\"type\":\"call\",\"id\":1,\"global\":\"tools\",\"name\":\"nope\",\"args\":[]}\n",
                "a call named no declared binding",
            ),
            (b"{\"type\":\"boot-ack\"}\n", "it announced a new isolate during a run"),
            (b"{\"type\":\"done\",\"value\":-0}\n", "its completion was not lossless JSON"),
            (&[b'x'; FRAME_CAP + 1], "a frame exceeded its size cap"),
        ];
        for (frame, what) in cases {
            let (mut reader, _process) = reader();
            assert_eq!(broke(reader.frames(frame)), protocol(what), "{:?}", String::from_utf8_lossy(frame));
            assert!(reader.outbox.is_empty());
        }
    }

    #[test]
    fn arguments_over_the_byte_cap_never_reach_the_host() {
        let (mut reader, _process) = reader();
        let frame = format!(
            "{{\"type\":\"call\",\"id\":1,\"global\":\"tools\",\"name\":\"echo\",\"args\":[\"{}\"]}}\n",
            "a".repeat(CAP)
        );
        let mut reader = {
            reader.splitter = LineSplitter::new(CAP * 2);
            reader
        };
        assert_eq!(broke(reader.frames(frame.as_bytes())), protocol("a call's arguments exceeded the byte cap"));
        assert!(reader.outbox.is_empty());
    }

    #[test]
    fn frames_after_done_keep_the_result_but_retire_the_process() {
        let (mut reader, _process) = reader();
        let ended = reader.frames(b"{\"type\":\"done\",\"value\":7}\n{\"type\":\"call\",\"id\":9,\"global\":\"tools\",\"name\":\"echo\",\"args\":[]}\n");
        assert!(matches!(ended, Some(Ended::Done(r, false)) if r.value_json.as_deref() == Some("7")));
        assert!(reader.outbox.is_empty());
    }

    #[test]
    fn the_first_claim_wins_and_decides_an_aborted_done() {
        let (mut reader, _process) = reader();
        let stop =
            b"{\"type\":\"stop\",\"error\":{\"kind\":\"timeout\",\"message\":\"compute budget\"},\"cpuMs\":12}\n";
        assert!(reader.frames(stop).is_none());
        reader.claim(FailureKind::Abort, Text::new("later"));
        let claim = reader.claim.as_ref().expect("claimed");
        assert_eq!((claim.kind, claim.message.to_string_lossy()), (FailureKind::Timeout, "compute budget".into()));
        assert!(claim.at <= Instant::now());
        assert_eq!(reader.stats.cpu_ms, Some(12.0));
        // A process that ends an aborted run reports `abort`; the claim says which kind it was.
        match reader.frames(b"{\"type\":\"done\",\"error\":{\"kind\":\"abort\",\"message\":\"x\"}}\n") {
            Some(Ended::Done(result, healthy)) => {
                let (kind, message) = result.error.expect("a failure");
                assert_eq!((kind, message.to_string_lossy()), (FailureKind::Timeout, "compute budget".into()));
                assert!(!healthy);
            }
            _ => panic!("done did not end the run"),
        }
    }

    #[test]
    fn a_log_flood_is_metered_by_the_host() {
        let (mut reader, _process) = reader();
        let line = format!("{{\"type\":\"log\",\"text\":\"{}\"}}\n", "y".repeat(900));
        let flood: Vec<u8> = std::iter::repeat_n(line.as_bytes(), 10).flatten().copied().collect();
        assert!(reader.frames(&flood).is_none());
        match reader.frames(b"{\"type\":\"done\",\"value\":1}\n") {
            Some(Ended::Done(result, _)) => {
                assert_eq!(result.error.map(|(kind, _)| kind), Some(FailureKind::OutputLimit));
                assert!(result.logs.len() < 10);
            }
            _ => panic!("done did not end the run"),
        }
    }

    #[test]
    fn reads_what_the_socket_holds_and_notices_its_end() {
        let (mut reader, mut process) = reader();
        process.write_all(b"{\"type\":\"log\",\"text\":\"a\"}\n").unwrap();
        assert!(reader.read_available());
        assert_eq!(reader.outbox.len(), 1);
        assert!(reader.heard);
        // Nothing more: the read comes back at once, the run still open.
        assert!(reader.read_available());
        drop(process);
        assert!(!reader.read_available());
        assert!(reader.eof && reader.ended.is_none());
    }
}
