//! The suite's harness for a subverted sandbox process: one real run, supervised as any other, on
//! a process that sends a forged scenario's frames (`isolate-forge`). The events the host would
//! have delivered are collected here instead of reaching JavaScript.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::pool::{Pool, PoolConfig};
use super::process::{self, ProcessSpec};
use super::supervise::{self, ContainedConfig, Outbound, RunControl};
use crate::isolate::globals::NamespaceSpec;
use crate::isolate::host::{EventSink, HostEvent, RunReport};
use crate::isolate::run::RunConfig;
use crate::isolate::source::ProgramText;
use crate::panic::{Lock, Wait};

#[derive(Default)]
struct Collected {
    calls: u32,
    streamed: usize,
    report: Option<Box<RunReport>>,
}

#[derive(Default)]
struct Collector {
    events: Mutex<Collected>,
    done: Condvar,
}

impl EventSink for Collector {
    fn send(&self, event: HostEvent) {
        let mut events = self.events.locked();
        match event {
            HostEvent::Call { .. } => events.calls += 1,
            HostEvent::Logs(logs) => events.streamed += logs.len(),
            // The harness reads on its own thread: nothing is handed to a main thread.
            HostEvent::OnMain(_) => {}
            HostEvent::Done(report) => {
                events.report = Some(report);
                self.done.notify_all();
            }
        }
    }
}

/// Runs one program on a sandbox process playing `scenario` (declared binding: `tools.echo`) and
/// returns `{ result: { logs, value?, error? }, calls, streamed, processesLeft }` as JSON text.
/// For the suite.
pub fn forged_run(scenario: String, max_output_bytes: f64) -> Result<String, String> {
    let (mut results, left) = forged_runs(scenario, max_output_bytes, &["return 1".to_string()], 1)?;
    let mut report = results.pop().ok_or("no run reported")?;
    report["processesLeft"] = left.into();
    Ok(report.to_string())
}

/// Runs `programs` one after another on one pool of processes playing `scenario`, each process
/// serving `max_runs` runs at most; returns each run's `{ result, calls, streamed }` and how many
/// processes were left after the pool closed.
pub fn forged_runs(
    scenario: String,
    max_output_bytes: f64,
    programs: &[String],
    max_runs: u32,
) -> Result<(Vec<serde_json::Value>, usize), String> {
    let Some((helper, addon)) = process::locate() else {
        return Err("the sandbox helper is not beside the addon".into());
    };
    let heap_mb = 64.0;
    let memory_cap = super::memory_cap(heap_mb);
    let spec = ProcessSpec {
        helper,
        addon,
        heap_mb,
        memory_cap,
        forge: Some(scenario),
        run_as: crate::sandbox::identity::run_as(None),
        children: 1,
    };
    let max_output_bytes = max_output_bytes as usize;
    let pool = Pool::new(PoolConfig {
        spec,
        max_processes: 1,
        max_runs: max_runs.max(1),
        frame_cap: max_output_bytes.saturating_mul(6).saturating_add(1 << 20),
    });
    let results =
        programs.iter().map(|program| forged_one(&pool, program, heap_mb, memory_cap, max_output_bytes)).collect();
    pool.close();
    Ok((results, pool.live()))
}

fn forged_one(
    pool: &Arc<Pool>,
    program: &str,
    heap_mb: f64,
    memory_cap: u64,
    max_output_bytes: usize,
) -> serde_json::Value {
    let Ok((wake_r, wake_w)) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK) else {
        return serde_json::json!({ "error": "pipe" });
    };
    let control = Arc::new(RunControl {
        abort: Mutex::new(None),
        out: Mutex::new(Outbound::default()),
        wake: Mutex::new(Some(wake_w)),
        replies: Default::default(),
        end: Default::default(),
        pending_calls: Default::default(),
    });
    let run = RunConfig {
        program: ProgramText::plain(program),
        namespaces: vec![NamespaceSpec { global: "tools".into(), names: vec!["echo".into()], error_class: None }],
        compute_ms: 5000.0,
        max_wall_ms: 10000.0,
        max_output_bytes,
        max_pending_calls: crate::channel::backlog::DEFAULT_MAX_PENDING_CALLS,
        heap_mb,
        stream_logs: true,
        log_at_once: false,
        node_major: None,
        durable: None,
    };
    let config = Arc::new(ContainedConfig { run, memory_cap });
    let collector = Arc::new(Collector::default());
    supervise::run(pool.clone(), config, control, wake_r, collector.clone(), None, None);
    let mut events = collector.events.locked();
    while events.report.is_none() {
        events = collector.done.wait_for(events, Duration::from_secs(15));
    }
    let report = events.report.as_ref().expect("the run reported");
    let mut result = serde_json::json!({
        "logs": report.result.logs.to_texts().iter().map(|t| t.to_string_lossy()).collect::<Vec<_>>(),
    });
    if let Some(json) = &report.result.value_json {
        result["value"] = serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
    }
    if let Some((kind, message)) = &report.result.error {
        result["error"] = serde_json::json!({ "kind": kind.as_str(), "message": message.to_string_lossy() });
    }
    serde_json::json!({ "result": result, "calls": events.calls, "streamed": events.streamed })
}
