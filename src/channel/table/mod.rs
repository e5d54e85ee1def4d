//! Every frame of the three channels, as data: the one description the code, the Python child and
//! docs/protocol.md are checked against. The host's encoders, the decoders of both sides, the
//! Python TypedDicts (`py/protocol.py`) and the doc's tables each answer to this table in a test
//! (`check` here; `drift` for the Python side and the doc), so a frame changes here first.
//!
//! Fields describe what the reading side accepts: `Required` ones must be there and well formed,
//! a malformed `Optional` one drops the frame, a malformed `Lenient` one is read as absent. Fields
//! not listed are stripped (child to host) or ignored (host to child).

#[cfg(test)]
pub mod check;
#[cfg(test)]
mod drift;
#[cfg(test)]
mod render;
#[cfg(test)]
mod writers;

/// The descriptor a Python child's channel is on (its fds 0–2 are the standard ones).
pub const PROTOCOL_FD: i32 = 3;

/// Which channel a frame travels on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// fd 3 of a Python child (hostile toward the host).
    Fd3,
    /// The socket of a TypeScript sandbox process (hostile toward the host).
    Process,
    /// The template's control channel (no program runs there; still held to its rules by the
    /// host, src/process_tier/host/template.rs).
    Template,
    /// The Python template's channel (`SOCK_SEQPACKET`: one frame per message, no newline;
    /// trusted both ways: the template never runs a program).
    PythonTemplate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    ToChild,
    ToHost,
}

/// A field's JSON kind, as its reader checks it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Json {
    Str,
    /// A finite number (a call's `id`: also not `-0`).
    Num,
    /// An integer of at least 0.
    Count,
    /// An integer, or `null` when unknown.
    IntOrNull,
    Bool,
    /// Exactly this JSON literal (`true`, `false`).
    Lit(&'static str),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// Any JSON value, handed on as written.
    Any,
    Obj(&'static Shape),
    List(&'static Json),
    /// `[[unit index, lone surrogate unit], …]`.
    Lone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Required,
    /// May be absent; present and malformed drops the frame.
    Optional,
    /// May be absent; present and malformed reads as absent.
    Lenient,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub name: &'static str,
    pub json: Json,
    pub need: Need,
}

/// An object's fields; `name` is its TypedDict in `py/protocol.py` for the fd-3 frames.
#[derive(Debug, PartialEq)]
pub struct Shape {
    pub name: &'static str,
    pub fields: &'static [Field],
}

/// A cap the host holds a frame to (docs/protocol.md#caps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// The line's bytes (src/channel/lines.rs).
    FrameBytes,
    /// Calls in flight (src/channel/backlog.rs).
    PendingCalls,
    /// Replies queued but not yet written (src/channel/backlog.rs).
    WaitingReplies,
    /// A Python run's log budget (`maxLogBytes`).
    LogBytes,
    /// A Python run's value budget (`maxValueBytes`).
    ValueBytes,
    /// An isolate run's output budget (`maxOutputBytes`), logs and value together.
    OutputBytes,
    /// A line of the isolate template's channel (src/process_tier/host/template.rs).
    TemplateLineBytes,
}

/// One frame: `{"type": ty, …shape's fields}`. The running addon reads only the fd-3 roster
/// from it; the rest is read by the tests that hold the code, `py/` and the doc to it.
#[derive(Debug)]
#[allow(dead_code)]
pub struct Frame {
    pub channel: Channel,
    pub dir: Dir,
    pub ty: &'static str,
    pub shape: &'static Shape,
    pub caps: &'static [Cap],
    /// What it means, for the doc.
    pub note: &'static str,
}

const fn req(name: &'static str, json: Json) -> Field {
    Field { name, json, need: Need::Required }
}
const fn opt(name: &'static str, json: Json) -> Field {
    Field { name, json, need: Need::Optional }
}
const fn lenient(name: &'static str, json: Json) -> Field {
    Field { name, json, need: Need::Lenient }
}

/// The kinds a Python child may report (`FailureKind::child_reportable`); the others are the
/// host's verdicts.
pub const PYTHON_KINDS: &[&str] = &["exception", "invalid-output", "output-limit"];
/// The kinds a sandbox process may report (`FailureKind::parse_units`).
pub const ISOLATE_KINDS: &[&str] =
    &["exception", "timeout", "abort", "worker-exit", "invalid-output", "output-limit", "protocol"];

pub const ERROR_CLASS: Shape =
    Shape { name: "ErrorClass", fields: &[req("name", Json::Str), req("memberNameProperty", Json::Str)] };
pub const NAMESPACE: Shape = Shape {
    name: "Namespace",
    fields: &[
        req("global", Json::Str),
        req("names", Json::List(&Json::Str)),
        opt("errorClass", Json::Obj(&ERROR_CLASS)),
    ],
};
const NAMESPACES: Json = Json::List(&Json::Obj(&NAMESPACE));

const BOOT: Shape = Shape {
    name: "BootMessage",
    fields: &[
        req("cpuSeconds", Json::Num),
        req("addressSpaceBytes", Json::Num),
        req("maxLogBytes", Json::Count),
        req("maxValueBytes", Json::Count),
        req("namespaces", NAMESPACES),
    ],
};
const PYTHON_RUN: Shape =
    Shape { name: "RunMessage", fields: &[req("program", Json::Str), opt("durable", Json::Obj(&DURABLE))] };
const ISOLATE_RUN: Shape = Shape {
    name: "IsolateRunFrame",
    fields: &[
        req("program", Json::Str),
        opt("lone", Json::Lone),
        req("namespaces", NAMESPACES),
        req("computeMs", Json::Num),
        req("maxWallMs", Json::Num),
        req("maxOutputBytes", Json::Count),
        req("maxPendingCalls", Json::Count),
        lenient("waitedMs", Json::Num),
        lenient("last", Json::Bool),
        lenient("nodeMajor", Json::Count),
        opt("durable", Json::Obj(&DURABLE)),
    ],
};
/// A durable attempt's seed (its 64 bits as two halves), clock and replayed calls
/// (docs/durable.md#determinism), in either language's `run`.
const DURABLE: Shape = Shape {
    name: "Durable",
    fields: &[
        req("seedHigh", Json::Count),
        req("seedLow", Json::Count),
        req("clockMs", Json::Num),
        req("replayedCalls", Json::Count),
    ],
};
const REPLY_OK: Shape =
    Shape { name: "ReplyOk", fields: &[req("id", Json::Count), req("ok", Json::Lit("true")), req("value", Json::Any)] };
const REPLY_ERR: Shape = Shape {
    name: "ReplyErr",
    fields: &[req("id", Json::Count), req("ok", Json::Lit("false")), req("message", Json::Str)],
};
const ABORT: Shape = Shape { name: "AbortMessage", fields: &[req("message", Json::Str)] };

const BOOT_ACK: Shape = Shape { name: "BootAckMessage", fields: &[] };
/// A sandbox process's first `boot-ack` says whether its allowlist holds on every thread
/// (`runtime.sandbox.seccompAllowlist`); anything but `true` reads as not.
const ISOLATE_BOOT_ACK: Shape = Shape { name: "IsolateBootAck", fields: &[lenient("seccompAllowlist", Json::Bool)] };
const CALL: Shape = Shape {
    name: "CallMessage",
    fields: &[req("id", Json::Num), req("global", Json::Str), req("name", Json::Str), req("args", Json::Any)],
};
const LOG: Shape = Shape {
    name: "LogMessage",
    fields: &[req("text", Json::Str), lenient("truncated", Json::Lit("true")), lenient("open", Json::Lit("true"))],
};
pub const DONE_ERROR: Shape =
    Shape { name: "DoneErrorField", fields: &[req("kind", Json::OneOf(PYTHON_KINDS)), req("message", Json::Str)] };
const DONE: Shape =
    Shape { name: "DoneMessage", fields: &[opt("value", Json::Any), opt("error", Json::Obj(&DONE_ERROR))] };
const ISOLATE_ERROR: Shape =
    Shape { name: "IsolateErrorField", fields: &[req("kind", Json::OneOf(ISOLATE_KINDS)), req("message", Json::Str)] };
const CPU: Field = lenient("cpuMs", Json::Num);
const WALL: Field = lenient("wallMs", Json::Num);
const HEAP_USED: Field = lenient("heapUsedBytes", Json::Num);
const HEAP_PEAK: Field = lenient("heapPeakBytes", Json::Num);
const STOPPED_AT: Shape = Shape {
    name: "StoppedAt",
    fields: &[req("line", Json::Count), req("column", Json::Count), opt("functionName", Json::Str)],
};
/// Where a Python program was stopped (its innermost `<model>` frame), written by the child's
/// SIGTERM or CPU-timer handler as it dies.
const PY_STOPPED: Shape = Shape {
    name: "StoppedMessage",
    fields: &[req("line", Json::Count), req("column", Json::Count), opt("functionName", Json::Str)],
};
const ISOLATE_DONE: Shape = Shape {
    name: "IsolateDone",
    fields: &[
        opt("value", Json::Any),
        opt("error", Json::Obj(&ISOLATE_ERROR)),
        CPU,
        WALL,
        HEAP_USED,
        HEAP_PEAK,
        lenient("stoppedAt", Json::Obj(&STOPPED_AT)),
    ],
};
const STOP: Shape =
    Shape { name: "StopMessage", fields: &[req("error", Json::Obj(&ISOLATE_ERROR)), CPU, HEAP_USED, HEAP_PEAK] };

const FORK: Shape = Shape { name: "ForkRequest", fields: &[req("id", Json::Count)] };
const READY: Shape = Shape { name: "TemplateReady", fields: &[] };
const FORKED: Shape = Shape { name: "Forked", fields: &[req("id", Json::Count), req("pid", Json::Count)] };
const FORK_FAILED: Shape = Shape { name: "ForkFailed", fields: &[req("id", Json::Count), req("errno", Json::Count)] };
const EXITED: Shape = Shape {
    name: "Exited",
    fields: &[req("pid", Json::Count), lenient("code", Json::IntOrNull), lenient("signal", Json::IntOrNull)],
};

const PY_TEMPLATE_READY: Shape = Shape { name: "PythonTemplateReady", fields: &[req("libraryBytes", Json::Count)] };
const PY_FORK: Shape = Shape { name: "PythonFork", fields: &[req("id", Json::Count), req("fds", Json::Count)] };
const PY_PLAN: Shape = Shape {
    name: "PythonChildPlan",
    fields: &[
        req("args", Json::List(&Json::Str)),
        req("env", Json::List(&Json::List(&Json::Str))),
        req("bootstrap", Json::Str),
        req("limits", Json::List(&Json::Count)),
    ],
};
const PY_FORKED: Shape = Shape { name: "PythonForked", fields: &[req("id", Json::Count), req("pid", Json::Count)] };
const PY_FORK_FAILED: Shape =
    Shape { name: "PythonForkFailed", fields: &[req("id", Json::Count), req("message", Json::Str)] };

use Cap::*;
use Channel::*;
use Dir::*;

const fn frame(
    channel: Channel,
    dir: Dir,
    ty: &'static str,
    shape: &'static Shape,
    caps: &'static [Cap],
    note: &'static str,
) -> Frame {
    Frame { channel, dir, ty, shape, caps, note }
}

/// Every frame, in the order a run sees them on each channel.
pub const FRAMES: &[Frame] = &[
    frame(Fd3, ToChild, "boot", &BOOT, &[], "budgets and namespaces, once per child (`addressSpaceBytes` is `addressSpaceMb × 1048576`; `names` the snapshot's own keys)"),
    frame(Fd3, ToHost, "boot-ack", &BOOT_ACK, &[FrameBytes], "limits applied, namespaces built"),
    frame(Fd3, ToChild, "run", &PYTHON_RUN, &[], "the program, once"),
    frame(Fd3, ToHost, "call", &CALL, &[FrameBytes, PendingCalls], "`args` is the one argument (`null` allowed), lossless"),
    frame(Fd3, ToChild, "reply", &REPLY_OK, &[WaitingReplies], "a binding's resolution"),
    frame(Fd3, ToChild, "reply", &REPLY_ERR, &[WaitingReplies], "a binding's failure"),
    frame(Fd3, ToHost, "log", &LOG, &[FrameBytes, LogBytes], "`truncated`: the marker; `open`: an explicit flush, merged with the next `log`"),
    frame(Fd3, ToHost, "done", &DONE, &[FrameBytes, ValueBytes], "the value, or the failure (the error wins when both)"),
    frame(Fd3, ToHost, "stopped", &PY_STOPPED, &[FrameBytes], "where the host's SIGTERM or the CPU timer found the program, written by the child's handler as it dies: the first after the host decided the end, or the last before a CPU verdict (docs/tracing.md#where-a-run-stopped)"),
    frame(Process, ToHost, "boot-ack", &ISOLATE_BOOT_ACK, &[FrameBytes], "an isolate is prepared; `seccompAllowlist` on the process's first: whether its allowlist holds on every thread"),
    frame(Process, ToChild, "run", &ISOLATE_RUN, &[], "the program, its lone surrogates, namespaces and budgets; `last` when the process retires after it"),
    frame(Process, ToHost, "call", &CALL, &[FrameBytes, PendingCalls], "as on fd 3"),
    frame(Process, ToChild, "reply", &REPLY_OK, &[WaitingReplies], "as on fd 3"),
    frame(Process, ToChild, "reply", &REPLY_ERR, &[WaitingReplies], "as on fd 3"),
    frame(Process, ToHost, "log", &LOG, &[FrameBytes, OutputBytes], "one entry's text"),
    frame(Process, ToChild, "abort", &ABORT, &[], "the run is over; the process stops its isolate"),
    frame(Process, ToHost, "stop", &STOP, &[FrameBytes], "a failure claimed from outside the program, with the usage at the claim"),
    frame(Process, ToHost, "done", &ISOLATE_DONE, &[FrameBytes, OutputBytes], "the value or the failure, and what the run used"),
    frame(Template, ToHost, "template-ready", &READY, &[TemplateLineBytes], "once, when the template can fork"),
    frame(Template, ToChild, "fork", &FORK, &[], "fork one sandbox process; its answer names the same `id`; under cgroup v1 with its cgroups' `tasks` as descriptors, which the child writes `0` to before it makes a thread"),
    frame(Template, ToHost, "forked", &FORKED, &[TemplateLineBytes], "with two descriptors: the child's channel and its pidfd"),
    frame(Template, ToHost, "fork-failed", &FORK_FAILED, &[TemplateLineBytes], "the fork's errno"),
    frame(Template, ToHost, "exited", &EXITED, &[TemplateLineBytes], "a child was reaped"),
    frame(PythonTemplate, ToHost, "template-ready", &PY_TEMPLATE_READY, &[], "once, when it can fork; `libraryBytes`: the address space its native library's mappings take (crates/python-entry) with the region each child maps for its own allocations; more than 16 MiB refuses the template"),
    frame(PythonTemplate, ToChild, "fork", &PY_FORK, &[], "with `fds` descriptors: the plan pipe, then the child's 0–3, the report and the lifeline; nothing of the run's reaches the template"),
    frame(PythonTemplate, ToChild, "plan", &PY_PLAN, &[], "in the plan pipe, read by the forked child alone: the helper's plan as `args`, its environment, the run's bootstrap and its six limits (soft, hard: CPU, address space, file size)"),
    frame(PythonTemplate, ToHost, "forked", &PY_FORKED, &[], "with the read end of the child's exit pipe"),
    frame(PythonTemplate, ToHost, "fork-failed", &PY_FORK_FAILED, &[], "the fork's error"),
];

/// Every object shape that `frames` use, each once (by name), depth first.
pub fn shapes<'a>(frames: impl IntoIterator<Item = &'a Frame>) -> Vec<&'static Shape> {
    fn visit(shape: &'static Shape, out: &mut Vec<&'static Shape>) {
        if out.iter().any(|s| s.name == shape.name) {
            return;
        }
        out.push(shape);
        for field in shape.fields {
            let mut json = &field.json;
            while let Json::List(inner) = json {
                json = inner;
            }
            if let Json::Obj(inner) = json {
                visit(inner, out);
            }
        }
    }
    let mut out = Vec::new();
    for frame in frames {
        visit(frame.shape, &mut out);
    }
    out
}

/// The frame whose own fields `shape` are (its TypedDict declares `type`), if any. Shapes are
/// told apart by name (consts have no one address).
pub fn frame_of(shape: &Shape) -> Option<&'static Frame> {
    FRAMES.iter().find(|f| f.shape.name == shape.name)
}

/// One TypedDict of `py/protocol.py` (docs/protocol.md#frame-roster): its `type` word when it is
/// a frame, and its required and optional keys (a frame's `type` among the required).
#[derive(Debug, Clone, PartialEq)]
pub struct RosterRow {
    pub name: &'static str,
    pub ty: Option<&'static str>,
    pub required: Vec<&'static str>,
    pub optional: Vec<&'static str>,
}

/// The fd-3 roster, each object once, in the order a run sees them. The addon hands it to the
/// suite (`pythonProtocolInfo`), which holds `py/protocol.py` to it, so no test spells it again.
pub fn python_roster() -> Vec<RosterRow> {
    shapes(FRAMES.iter().filter(|f| f.channel == Fd3))
        .into_iter()
        .map(|shape| {
            let (required, optional): (Vec<&Field>, Vec<&Field>) =
                shape.fields.iter().partition(|f| f.need == Need::Required);
            let ty = frame_of(shape).map(|f| f.ty);
            RosterRow {
                name: shape.name,
                ty,
                required: ty.map(|_| "type").into_iter().chain(required.iter().map(|f| f.name)).collect(),
                optional: optional.iter().map(|f| f.name).collect(),
            }
        })
        .collect()
}
