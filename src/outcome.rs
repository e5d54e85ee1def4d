//! The outcome vocabulary both backends share (docs/failures.md): the failure kinds, and the
//! messages both write the same way. A new failure kind goes here, and in `lib/public-types.d.ts`.

use napi_derive::napi;

use crate::ledger::byte_meter::number_to_string;

/// How a run failed, as `error.kind` spells it.
#[napi(string_enum)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    #[napi(value = "exception")]
    Exception,
    #[napi(value = "timeout")]
    Timeout,
    #[napi(value = "abort")]
    Abort,
    #[napi(value = "worker-exit")]
    WorkerExit,
    #[napi(value = "invalid-output")]
    InvalidOutput,
    #[napi(value = "output-limit")]
    OutputLimit,
    /// A child (a sandbox process, a Python child) broke the channel protocol, or a program left
    /// more waiting in the host than a run may (src/channel/backlog.rs). The native marker of a
    /// cause the `ctx.codeRuntime` seam reports as `worker-exit` (lib/session.mjs) and the
    /// `ctx.ptcRuntime` seam as `protocol`. A sandbox process reports it for its isolate's
    /// pending-calls cap; a Python child never may (`child_reportable`).
    #[napi(value = "protocol")]
    Protocol,
    /// The sandbox helper refused a run's file policy (a path that is no longer what `resolve()`
    /// checked): the `ctx.ptcRuntime` seam's `sandbox-unavailable`, nothing ran. Only runs with a
    /// policy (that seam's) can end so; never parsed from a child's frame.
    #[napi(value = "sandbox-unavailable")]
    SandboxUnavailable,
}

impl FailureKind {
    /// The kinds a child's frame may name (a Python child's are narrowed by `child_reportable`).
    const ALL: [FailureKind; 7] = [
        FailureKind::Exception,
        FailureKind::Timeout,
        FailureKind::Abort,
        FailureKind::WorkerExit,
        FailureKind::InvalidOutput,
        FailureKind::OutputLimit,
        FailureKind::Protocol,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Exception => "exception",
            FailureKind::Timeout => "timeout",
            FailureKind::Abort => "abort",
            FailureKind::WorkerExit => "worker-exit",
            FailureKind::InvalidOutput => "invalid-output",
            FailureKind::OutputLimit => "output-limit",
            FailureKind::Protocol => "protocol",
            FailureKind::SandboxUnavailable => "sandbox-unavailable",
        }
    }

    /// The kind a child's frame names (its UTF-16 code units), if any.
    pub fn parse_units(units: &[u16]) -> Option<FailureKind> {
        Self::ALL.into_iter().find(|k| k.as_str().encode_utf16().eq(units.iter().copied()))
    }

    /// Whether a Python child may report this kind itself (the host decides the others).
    pub fn child_reportable(self) -> bool {
        matches!(self, FailureKind::Exception | FailureKind::InvalidOutput | FailureKind::OutputLimit)
    }
}

/// The prefix of every error message the runtime itself writes.
pub const PREFIX: &str = "code-runtime-native: ";

/// `abort`: the runtime was disposed while the run was in flight.
pub const DISPOSED: &str = "runtime disposed";

/// `timeout`: the wall-clock ceiling passed.
pub fn wall_clock_message(max_wall_ms: f64) -> String {
    format!("wall-clock ceiling reached ({}ms)", number_to_string(max_wall_ms))
}

/// `timeout`: the isolate thread's CPU budget ran out.
pub fn compute_message(compute_ms: f64) -> String {
    format!("compute budget exhausted ({}ms busy)", number_to_string(compute_ms))
}

/// `worker-exit`: this addon's own code panicked (`what` says where) and the run was ended there;
/// the host keeps serving runs.
pub fn internal_error_message(what: &str, reason: &str) -> String {
    format!("{PREFIX}internal error: {what} failed ({reason}); the run was ended. This is a bug of code-runtime-native: please report it with this message")
}

/// Whether a run's end is decided, shared by everything on the host's side that would act on the
/// program (docs/budgets-and-ledger.md#nothing-passes-the-end): once it is set, no binding call
/// is dispatched and no log entry recorded, whichever thread decided and whichever holds an
/// event the program made before.
#[derive(Clone, Default)]
pub struct RunEnd(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl RunEnd {
    pub fn decide(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn is_decided(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Where the program was when a claim from outside stopped it (`stats.stoppedAt`,
/// docs/tracing.md#where-a-run-stopped): its innermost frame, in the program's own coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoppedAt {
    pub line: u32,
    pub column: u32,
    /// The frame's function name, when it has one (at most `STOPPED_NAME_CHARS` characters).
    pub function: Option<String>,
}

/// A stopped frame's function name is cut to this many characters.
pub const STOPPED_NAME_CHARS: usize = 200;
