//! What one run needs, resolved by the JavaScript layer, and the first frames its child gets.

use std::os::fd::AsRawFd;

use crate::channel::host_frames;
use crate::python::process::spare::{Booted, ChildSpec};
use crate::python::protocol::writer::{WriteKind, Writer};

/// Everything one run needs, resolved by the JavaScript layer.
pub struct RunSpec {
    /// How the run's child is started (and how a spare for it must have been).
    pub child: ChildSpec,
    pub max_log_bytes: usize,
    pub max_value_bytes: usize,
    pub max_wall_ms: f64,
    pub grace_ms: f64,
    pub frame_cap: usize,
    /// Binding calls in flight at most (`maxPendingCalls`, src/channel/backlog.rs).
    pub max_pending_calls: usize,
    /// The boot frame's `namespaces` array, as JSON.
    pub namespaces_json: String,
    /// Each namespace's global and its dispatchable member names, in boot order.
    pub namespaces: Vec<(Vec<u16>, Vec<Vec<u16>>)>,
    /// The program as a JSON string.
    pub program: Vec<u16>,
    pub stream_logs: bool,
    /// A child booted ahead of this run, when one was ready.
    pub spare: Option<Booted>,
    /// A durable attempt's seed and clock (docs/durable.md#determinism); `None` for `run()`.
    pub durable: Option<crate::isolate::durable::DurableConfig>,
    /// The spare's `boot` and `run`, written on Node's main thread before the run's thread
    /// started (`write_first_frames`): what the socket did not take, and a write's failure.
    pub first_frames: Option<(Writer, Option<(WriteKind, std::io::Error)>)>,
}

impl RunSpec {
    /// `boot` and `run` for a child whose limits take `address_space_extra` more address space.
    pub(super) fn boot_and_run(&self, address_space_extra: u64) -> Writer {
        let boot = host_frames::boot_frame(
            self.child.cpu_seconds,
            self.child.address_space_bytes + address_space_extra as f64,
            self.max_log_bytes,
            self.max_value_bytes,
            &self.namespaces_json,
        );
        let mut writer = Writer::default();
        writer.push(boot, WriteKind::Boot);
        writer.push(host_frames::run_frame(&self.program, self.durable.as_ref()), WriteKind::Run);
        writer
    }

    /// Writes the spare's `boot` and `run` from the calling thread (Node's main thread, in
    /// `start`): the child starts on them while the run's thread is still starting, instead of
    /// after that thread woke (on an idle machine a wake-up of another CPU costs more than the
    /// write). What the socket does not take, the run's thread writes.
    pub fn write_first_frames(&mut self) {
        let Some(spare) = self.spare.as_ref() else { return };
        let fd3 = spare.spawned.fd3.as_raw_fd();
        let mut writer = self.boot_and_run(spare.spawned.address_space_extra);
        let failed = writer.flush(fd3).err();
        self.first_frames = Some((writer, failed));
    }
}
